// The proxy in front of the stand-in engine's containers (test/support/fake-engine.ts: each a real HTTP
// server on loopback; the route table and its following of containers are the subject, not Docker):
// services routed by their domain (or <name>.<cluster domain>) and their other names, their aliases
// redirected to the primary name, internal ones never; a service under a path prefix of another's
// name, behind basic auth, curl as the client; the table follows deploys; a rolling redeploy under a
// bounded load loop fails no request; a replica stopped behind the proxy's back is skipped.
import t from 'tap'
import { execFile } from 'node:child_process'
import { request } from 'node:http'
import { promisify } from 'node:util'
import bcrypt from 'bcryptjs'
import cluster from '../../../plugins/cluster/index.js'
import nodes from '../../../plugins/nodes/index.js'
import proxy from '../../../plugins/proxy/index.js'
import type { RouteView } from '../../../plugins/proxy/control-routes.js'
import type { DeployResult } from '../../../plugins/reconciler/reconciler.js'
import { runCli } from '../../support/cli.js'
import { HTTPD_IMAGE, HTTPD_INDEX } from '../../support/docker.js'
import { FAKE_HTTPD, FakeEngine } from '../../support/fake-engine.js'
import { failedAnswers, startLoad, through } from '../../support/load.js'
import { api, reconcilerKernel } from '../../support/orchestration.js'
import { pollUntil } from '../../support/poll.js'

t.test('routes services by domain, follows deploys, and rolls a redeploy out with no failed request (stand-in engine)', async t => {
  const engine = new FakeEngine({ images: { [HTTPD_IMAGE]: FAKE_HTTPD } })
  const { kernel, token, project } = await reconcilerKernel(t, engine, {
    // [cluster].domain belongs to the cluster plugin; a cluster of one node here.
    plugins: [cluster, nodes, proxy],
    sections: { proxy: { http_port: 0, https_port: 0, health_interval_secs: 1, connect_timeout_ms: 1000 }, acme: { directory: '' }, cluster: { domain: 'apps.test' } }
  })
  const base = kernel.url('proxy-http')
  const web = (version: string): Record<string, unknown> => ({
    name: 'web', project, image: 'berth-test/httpd:1', port: 8080, health: '/', domain: 'web.test', domains: ['web.example'], aliases: ['www.web.test'], replicas: 2, env: { VERSION: version }
  })
  const deploy = async (services: Array<Record<string, unknown>>): Promise<DeployResult> => {
    const answer = await api<DeployResult>(kernel, 'POST', '/api/v1/deploy', { token, body: { services } })
    t.equal(answer.status, 200, answer.text)
    return answer.body
  }
  const first = await deploy([
    web('1'),
    { name: 'api', project, image: 'berth-test/httpd:1', port: 8080 },
    { name: 'vault', project, image: 'berth-test/httpd:1', port: 8080, internal: true },
    {
      name: 'docs', project, image: 'berth-test/httpd:1', port: 8080, domain: 'web.test', path_prefix: '/docs', strip_prefix: true,
      middleware: { basic_auth: [`reader:${await bcrypt.hash('pages', 4)}`], headers: { 'x-served-by': 'docs' } }
    }
  ])
  t.same(first.errors, [])

  // A deploy answers once each new replica served the proxy's probe; on a heavily loaded machine a
  // replica has been seen out of rotation for a moment after that (under investigation), so the
  // first answers are awaited with a deadline rather than taken at once.
  const served = async (host: string): Promise<{ status: number, body: string }> =>
    await pollUntil(async () => { const answer = await through(base, host); return answer.status === 200 && answer }, { what: `${host} served`, timeout: 10_000 })
  t.same(await served('web.test'), { status: 200, body: HTTPD_INDEX }, 'a service by its domain')
  t.same(await served('API.apps.test:80'), { status: 200, body: HTTPD_INDEX }, 'a service without one at <name>.<cluster domain>')
  t.same(await served('web.example'), { status: 200, body: HTTPD_INDEX }, 'a service at its other name too')
  const redirect = await new Promise<{ status?: number, location?: string }>((resolve, reject) => {
    request(new URL('/docs/page?lang=en', base), { headers: { host: 'www.web.test:8080' } }, response => { response.resume(); resolve({ status: response.statusCode, location: response.headers.location }) }).on('error', reject).end()
  })
  t.same(redirect, { status: 308, location: 'http://web.test:8080/docs/page?lang=en' }, 'an alias redirects to the primary name, path and query kept')
  const handshake = await new Promise<{ status?: number, location?: string }>((resolve, reject) => {
    request(new URL('/socket', base), { headers: { host: 'www.web.test:8080', connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==' } },
      response => { response.resume(); resolve({ status: response.statusCode, location: response.headers.location }) }).on('error', reject).end()
  })
  t.same(handshake, { status: 308, location: 'http://web.test:8080/socket' }, 'so is a WebSocket handshake')
  const taken = await api<{ error: string }>(kernel, 'POST', '/api/v1/deploy', { token, body: { services: [{ name: 'other', project, image: 'berth-test/httpd:1', port: 8080, domains: ['www.web.test'] }] } })
  t.match([taken.status, taken.body.error], [400, /domain "www\.web\.test" is already claimed by service "web"/], 'a name has one owner, aliases included')
  t.equal((await through(base, 'vault.apps.test')).status, 404, 'an internal service is never routed')
  const curl = async (...args: string[]): Promise<string> => (await promisify(execFile)('curl', ['-s', '-w', '\n%{http_code} %header{x-served-by}', '--resolve', `web.test:${base.port}:127.0.0.1`, ...args])).stdout
  t.match(await curl(`http://web.test:${base.port}/docs/`), /401 $/, 'the prefix of another service\'s name, behind basic auth')
  t.equal(await curl('-u', 'reader:pages', `http://web.test:${base.port}/docs/`), `${HTTPD_INDEX}\n200 docs`, 'signed in: the prefix stripped, the extra header added')
  t.match(await curl(`http://web.test:${base.port}/docsx`), /The requested URL was not found[^]*\n404 $/, 'the name\'s own service (busybox httpd) for what is not under the prefix')
  // On a loaded machine a replica may miss two probes in a row for a moment: the listing is read once every replica serves.
  const routes = await pollUntil(async () => {
    const answer = await api<{ routes: RouteView[] }>(kernel, 'GET', '/api/v1/proxy/routes', { token })
    return answer.body.routes.every(route => route.upstreams.every(upstream => upstream.healthy)) && answer
  }, { what: 'every replica in rotation', timeout: 20_000 })
  t.match(routes.body.routes, [
    { domain: 'api.apps.test', service: 'api', upstreams: [{ replica: 1, healthy: true, draining: false }] },
    { domain: 'web.example', service: 'web', health: '/', upstreams: [{ replica: 1, healthy: true }, { replica: 2, healthy: true }] },
    { domain: 'web.test', service: 'web', health: '/', upstreams: [{ replica: 1, healthy: true }, { replica: 2, healthy: true }] },
    { domain: 'web.test', service: 'docs', path_prefix: '/docs', strip_prefix: true, middleware: ['basic_auth', 'headers'], upstreams: [{ replica: 1, healthy: true }] },
    { domain: 'www.web.test', service: 'web', redirect: 'web.test', upstreams: [] }
  ])
  const status = await api<{ services: Array<{ name: string, route?: Record<string, unknown> }> }>(kernel, 'GET', '/api/v1/status', { token })
  t.match(status.body.services.find(s => s.name === 'web')?.route, { domain: 'web.test', names: [{ domain: 'web.example', certificate: { status: 'self-signed' } }, { domain: 'www.web.test', redirect: 'web.test' }] },
    'the status: the primary name, then the others and the alias, each with its own certificate')
  const row = (domain: string): string => `${domain.replace(/\./g, '\\.')} +web +127\\.0\\.0\\.1:\\d+ +serving +self-signed\\n`
  const table = new RegExp(`^ROUTE +SERVICE +REPLICA +STATE +CERTIFICATE\\napi\\.apps\\.test +api +127\\.0\\.0\\.1:\\d+ +serving +self-signed\\n${row('web.example').repeat(2)}${row('web.test').repeat(2)}web\\.test/docs +docs +127\\.0\\.0\\.1:\\d+ +serving +self-signed\\nwww\\.web\\.test +web +- +redirects to web\\.test +self-signed\\n$`)
  const listed = await pollUntil(async () => {
    const run = await runCli(['proxy', 'routes'], { env: { BERTH_URL: kernel.url('control').href, BERTH_TOKEN: token } })
    return (run.code !== 0 || table.test(run.stdout)) && run
  }, { what: 'berth proxy routes with every replica serving', timeout: 20_000 })
  t.equal(listed.code, 0, listed.stderr)
  t.match(listed.stdout, table)

  // A spec change recreates both replicas one at a time while four clients keep asking.
  const before = new Map([...engine.containers()].map(([name, c]) => [name, c.id]))
  const load = startLoad(base, 'web.test')
  await pollUntil(() => load.answers.length >= 20, { what: 'the load to begin' })
  const second = await deploy([web('2')])
  t.same([second.errors, second.changed], [[], ['web']])
  const answers = await load.stop()
  t.same(failedAnswers(answers), [], `no failed request among ${answers.length} during the rollout`)
  const after = engine.containers()
  for (const name of [`${project}-web-1`, `${project}-web-2`]) t.not(after.get(name)?.id, before.get(name), `${name} was recreated`)
  t.match((await api<{ routes: RouteView[] }>(kernel, 'GET', '/api/v1/proxy/routes', { token })).body.routes.find(r => r.service === 'web'),
    { upstreams: [{ replica: 1, healthy: true, draining: false }, { replica: 2, healthy: true, draining: false }] }, 'the new replicas serve')

  // A replica stopped behind the proxy's back: requests go on to the other one.
  await engine.stop(after.get(`${project}-web-1`)?.id ?? '')
  for (let i = 0; i < 10; i++) t.equal((await through(base, 'web.test')).status, 200)
  await pollUntil(async () => (await api<{ routes: RouteView[] }>(kernel, 'GET', '/api/v1/proxy/routes', { token })).body.routes.find(r => r.service === 'web')?.upstreams.length === 1,
    { what: 'the stopped replica to leave the table' })
  await engine.stop(after.get(`${project}-web-2`)?.id ?? '')
  const none = await through(base, 'web.test')
  t.ok(none.status === 502 || none.status === 503, `with no replica left: ${none.status}, at once`)
})
