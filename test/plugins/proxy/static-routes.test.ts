// Static routes ([proxy.routes]): a real kernel whose container engine does not answer serves a domain
// from two loopback HTTP servers in turn; one stopped leaves the rotation while requests go on
// succeeding, and comes back once a probe passes; a service may not deploy with the route's domain;
// a server running the proxy alone serves them; and the configuration's errors name the key.
import t from 'tap'
import { createServer, request, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Kernel } from '../../../kernel/index.js'
import proxy from '../../../plugins/proxy/index.js'
import type { RouteView } from '../../../plugins/proxy/control-routes.js'
import { staticRoutes, type StaticRouteConfig } from '../../../plugins/proxy/static-routes.js'
import reconciler from '../../../plugins/reconciler/index.js'
import secrets from '../../../plugins/secrets/index.js'
import tokens from '../../../plugins/tokens/index.js'
import { boundUrls, spawnCliForTest } from '../../support/cli.js'
import { testKernel } from '../../support/kernel.js'
import { through } from '../../support/load.js'
import { adminToken, api } from '../../support/orchestration.js'
import { pollUntil } from '../../support/poll.js'
import { tempDir } from '../../support/tmp.js'

/** A loopback HTTP server answering its own name; `port` 0 picks one. */
async function upstream (t: { teardown(fn: () => void): void }, name: string, port = 0): Promise<{ server: Server, port: number }> {
  const server = createServer((request, response) => {
    request.resume()
    request.on('end', () => { response.end(request.url === '/health' ? 'ok' : name) })
  })
  await new Promise<void>(resolve => server.listen(port, '127.0.0.1', resolve))
  t.teardown(() => { server.closeAllConnections(); server.close() })
  return { server, port: (server.address() as AddressInfo).port }
}

async function stop (server: Server): Promise<void> {
  server.closeAllConnections()
  await new Promise(resolve => server.close(resolve))
}

/** Tokens, secrets, the reconciler (its engine socket leads nowhere) and the proxy, with `routes` as [proxy.routes]. */
async function kernelWith (t: Parameters<typeof testKernel>[0], routes: Record<string, StaticRouteConfig>): Promise<Kernel> {
  return await testKernel(t, {
    plugins: [tokens, secrets, reconciler, proxy],
    config: {
      reconciler: { docker_socket: join(tempDir(t), 'no-engine.sock') },
      proxy: { http_port: 0, https_port: 0, health_interval_secs: 1, routes },
      acme: { directory: '' }
    }
  })
}

/** A POST with a body through the proxy (fetch may not set Host). */
async function post (base: URL, host: string): Promise<{ status: number, body: string }> {
  return await new Promise((resolve, reject) => {
    request(base, { method: 'POST', headers: { host, 'content-type': 'text/plain' } }, response => {
      let body = ''
      response.on('data', (chunk: Buffer) => { body += chunk.toString() })
      response.on('end', () => { resolve({ status: response.statusCode ?? 0, body }) })
    }).on('error', reject).end('x')
  })
}

const routesOf = async (kernel: Kernel): Promise<RouteView[]> => (await api<{ routes: RouteView[] }>(kernel, 'GET', '/api/v1/proxy/routes', { token: adminToken(kernel) })).body.routes

t.test('a static route takes turns across its upstreams; a stopped one leaves the rotation and comes back', async t => {
  const [a, b] = [await upstream(t, 'a'), await upstream(t, 'b')]
  const kernel = await kernelWith(t, { ingest: { domain: 'Ingest.Test', upstreams: [`127.0.0.1:${a.port}`, `127.0.0.1:${b.port}`] } })
  const base = kernel.url('proxy-http')
  const answers = []
  for (let i = 0; i < 6; i++) answers.push(await through(base, 'ingest.test'))
  t.same(answers.map(a => a.status), [200, 200, 200, 200, 200, 200])
  t.same(answers.map(a => a.body).sort(), ['a', 'a', 'a', 'b', 'b', 'b'], 'round robin: each upstream serves every other request')
  t.match(await routesOf(kernel), [{ domain: 'ingest.test', service: 'ingest', static: true, upstreams: [{ container: `127.0.0.1:${a.port}`, replica: 1, healthy: true }, { container: `127.0.0.1:${b.port}`, replica: 2, healthy: true }] }])
  t.match(kernel.health().plugins.proxy.checks, { routes: { status: 'down', reason: /nothing but the static routes of \[proxy\.routes\] is routed/ } }, 'without the engine, only the static routes are served, and health says so')

  await stop(b.server)
  const after = []
  for (let i = 0; i < 6; i++) after.push(await through(base, 'ingest.test'))
  t.same(after, Array(6).fill({ status: 200, body: 'a' }), 'with b stopped every request succeeds, on a (a GET that found b gone went again to a)')
  t.same(await post(base, 'ingest.test'), { status: 200, body: 'a' }, 'and a POST, not retried, goes to a only: b is out of the rotation')
  t.match((await routesOf(kernel))[0].upstreams, [{ healthy: true }, { healthy: false }])

  await upstream(t, 'b again', b.port)
  await pollUntil(async () => (await routesOf(kernel))[0].upstreams[1].healthy, { timeout: 10_000, what: 'b to pass a probe' })
  const back = []
  for (let i = 0; i < 4; i++) back.push((await through(base, 'ingest.test')).body)
  t.same(back.sort(), ['a', 'a', 'b again', 'b again'], 'back in rotation once a probe passes')
})

t.test('with a health_path, an upstream that answers it with an error leaves the rotation', async t => {
  const good = await upstream(t, 'good')
  const sick = createServer((request, response) => { response.statusCode = request.url === '/health' ? 500 : 200; response.end('sick') })
  await new Promise<void>(resolve => sick.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { sick.closeAllConnections(); sick.close() })
  const kernel = await kernelWith(t, { api: { domain: 'api.test', upstreams: [`127.0.0.1:${good.port}`, `127.0.0.1:${(sick.address() as AddressInfo).port}`], health_path: '/health' } })
  t.match(await routesOf(kernel), [{ domain: 'api.test', health: '/health' }])
  await pollUntil(async () => !(await routesOf(kernel))[0].upstreams[1].healthy, { timeout: 10_000, what: 'the failing upstream to leave the rotation' })
  const bodies = []
  for (let i = 0; i < 4; i++) bodies.push((await through(kernel.url('proxy-http'), 'api.test')).body)
  t.same(bodies, ['good', 'good', 'good', 'good'])
})

t.test('a service may not be deployed with a static route\'s domain', async t => {
  const a = await upstream(t, 'a')
  const kernel = await kernelWith(t, { ingest: { domain: 'ingest.test', upstreams: [`127.0.0.1:${a.port}`] } })
  const deployed = await api<{ error: string }>(kernel, 'POST', '/api/v1/deploy', {
    token: adminToken(kernel),
    body: { services: [{ name: 'web', project: 'p', image: 'nginx:1', port: 8080, domain: 'ingest.test' }] }
  })
  t.equal(deployed.status, 400)
  t.match(deployed.body.error, 'request body: service "web": domain "ingest.test" is routed by [proxy].routes.ingest (a static route); a domain has one owner')
})

t.test('a proxy on its own (BERTH_PLUGINS=proxy): no reconciler, no engine, the static routes served', async t => {
  const a = await upstream(t, 'a')
  const dir = tempDir(t)
  writeFileSync(join(dir, 'cluster.toml'), `[proxy.routes.site]\ndomain = "site.test"\nupstreams = ["127.0.0.1:${a.port}"]\n[acme]\ndirectory = ""\n`)
  // The proxy's port is 0 (as in every test's child): read back from its log line.
  const server = spawnCliForTest(t, ['server'], { cwd: dir, env: { BERTH_PLUGINS: 'proxy' } })
  const base = (await boundUrls(server, 'a proxy on its own'))['proxy-http']
  const answer = await pollUntil(async () => { const r = await through(base, 'site.test'); return r.status === 200 && r }, { what: 'the static route through a proxy on its own' })
  t.equal(answer.body, 'a')
  t.match(await through(base, 'other.test'), { status: 404 }, 'a name nobody routes')
  t.match(server.output(), /"plugins":\["proxy"\]/, 'only the proxy runs')
})

t.test('configuration errors name the key', async t => {
  const route = (over: Partial<StaticRouteConfig>): Record<string, StaticRouteConfig> => ({ ingest: { domain: 'ingest.test', upstreams: ['127.0.0.1:7001'], ...over } })
  const cases: Array<[Record<string, StaticRouteConfig>, string]> = [
    [route({ upstreams: [] }), '[proxy].routes.ingest.upstreams: empty; list at least one "host:port" address'],
    [route({ upstreams: ['127.0.0.1:7001', '127.0.0.1'] }), '[proxy].routes.ingest.upstreams[1]: "127.0.0.1" is not a "host:port" address'],
    [route({ upstreams: ['127.0.0.1:0'] }), '[proxy].routes.ingest.upstreams[0]: "127.0.0.1:0" is not'],
    [route({ upstreams: ['127.0.0.1:65536'] }), '"127.0.0.1:65536" is not'],
    [route({ upstreams: ['http://127.0.0.1:7001'] }), '"http://127.0.0.1:7001" is not'],
    [route({ upstreams: ['::1:7001'] }), '"::1:7001" is not'],
    [route({ upstreams: ['a b:7001'] }), '"a b:7001" is not'],
    [route({ upstreams: ['127.0.0.1:7001', '127.0.0.1:7001'] }), '[proxy].routes.ingest.upstreams: "127.0.0.1:7001" is listed twice'],
    [route({ domain: 'https://ingest.test' }), '[proxy].routes.ingest.domain: "https://ingest.test" is not a domain name'],
    [route({ domain: '' }), '[proxy].routes.ingest.domain: "" is not a domain name'],
    [route({ health_path: 'health' }), '[proxy].routes.ingest.health_path: "health" must be a path beginning with "/"'],
    [{ ...route({}), other: { domain: 'INGEST.test', upstreams: ['127.0.0.1:7002'] } }, '[proxy].routes.other.domain: "ingest.test" is already routed by [proxy].routes.ingest']
  ]
  for (const [routes, message] of cases) t.throws(() => staticRoutes(routes), { message: new RegExp(`${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`) }, message)
  t.match(staticRoutes(route({ upstreams: ['[::1]:7001', 'localhost:7002', 'Ingest-1.internal:80'] }))[0].upstreams,
    [{ host: '::1', port: 7001 }, { host: 'localhost', port: 7002 }, { host: 'ingest-1.internal', port: 80 }], 'IPv6 in brackets and host names are addresses')
  await t.rejects(kernelWith(t, route({ upstreams: [] })), /\[proxy\]\.routes\.ingest\.upstreams: empty/, 'the server does not start with one')
})
