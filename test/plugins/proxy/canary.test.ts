// Canaries through the proxy in front of the stand-in engine's containers (test/support/fake-engine.ts:
// real HTTP servers on loopback; the canary's share, rollback and promotion are the subject, not
// Docker), as one scenario under a bounded load: a canary
// beside two replicas gets its weighted share of the requests; a rollback removes it and leaves the
// replicas alone; a canary survives a restart of the server; promote rolls its spec out to every
// replica; a rollback then returns to the version before. No request fails through any of it. And
// the refusals: an unknown service 404, no canary or no earlier version 409, a bad weight 400.
import t from 'tap'
import proxy from '../../../plugins/proxy/index.js'
import type { RouteView } from '../../../plugins/proxy/control-routes.js'
import type { DeployResult } from '../../../plugins/reconciler/reconciler.js'
import type { ServiceStatus } from '../../../plugins/reconciler/status.js'
import { runCli, type CliResult } from '../../support/cli.js'
import { HTTPD_IMAGE } from '../../support/docker.js'
import { FakeEngine, type FakeImage } from '../../support/fake-engine.js'
import { failedAnswers, startLoad, type Answer, type Load } from '../../support/load.js'
import { api, reconcilerKernel, writeServices, type ApiAnswer, type ReconcilerInstance } from '../../support/orchestration.js'
import { pollUntil } from '../../support/poll.js'

const SECTIONS = { proxy: { http_port: 0, https_port: 0, health_interval_secs: 1, connect_timeout_ms: 1000 }, acme: { directory: '' } }

/** The httpd image on the stand-in engine: /version.txt answers the container's VERSION. */
const VERSIONED: FakeImage = {
  serve: (request, response, container) => {
    if (request.url === '/version.txt') response.end(`${container.env.VERSION}\n`)
    else response.writeHead(404).end()
  }
}

/** The web service of `project` answering `version` at /version.txt (its environment, so its hash, differs per version). */
function webEntry (project: string, version: string): Record<string, unknown> {
  return {
    name: 'web', project, image: HTTPD_IMAGE, port: 8080, health: '/version.txt', domain: 'web.test', replicas: 2, env: { VERSION: version }
  }
}

/** A JSON value of the entry as TOML: strings and numbers as they are, a table inline. */
function toml (value: unknown): string {
  if (typeof value !== 'object' || value === null) return JSON.stringify(value)
  return `{ ${Object.entries(value).map(([key, v]) => `${key} = ${toml(v)}`).join(', ')} }`
}

/** The same entry as a service file; the folder gives the project. */
function webFile (project: string, version: string): string {
  const { project: _folder, ...fields } = webEntry(project, version)
  return `[[service]]\n${Object.entries(fields).map(([key, value]) => `${key} = ${toml(value)}`).join('\n')}\n`
}

/** Answers by version (the body of /version.txt), and the others as failures. */
function byVersion (answers: readonly Answer[]): Record<string, number> {
  const counts: Record<string, number> = {}
  for (const a of answers) {
    const key = a.status === 200 ? a.body.trim() : `failed ${a.status}`
    counts[key] = (counts[key] ?? 0) + 1
  }
  return counts
}

/** The next `count` answers of a running load, once they are there. */
async function nextAnswers (load: Load, count: number): Promise<Answer[]> {
  const from = load.answers.length
  await pollUntil(() => load.answers.length >= from + count, { timeout: 60_000, what: `${count} more answers` })
  return load.answers.slice(from, from + count)
}

t.test('canary, rollback, restart, promote, rollback: weighted shares and no failed request (stand-in engine)', async t => {
  const engine = new FakeEngine({ images: { [HTTPD_IMAGE]: VERSIONED } })
  let server: ReconcilerInstance = await reconcilerKernel(t, engine, { plugins: [proxy], sections: SECTIONS })
  const { project, cwd, token } = server
  const call = async <T = { error?: string }>(method: string, path: string, body?: unknown): Promise<ApiAnswer<T>> => await api<T>(server.kernel, method, path, { token, body })
  const cli = async (...args: string[]): Promise<CliResult> => await runCli(args, { env: { BERTH_URL: server.kernel.url('control').href, BERTH_TOKEN: token } })
  const webRoute = async (): Promise<RouteView | undefined> => (await call<{ routes: RouteView[] }>('GET', '/api/v1/proxy/routes')).body.routes.find(r => r.service === 'web')
  const webStatus = async (): Promise<ServiceStatus | undefined> => (await call<{ services: ServiceStatus[] }>('GET', '/api/v1/status')).body.services.find(s => s.name === 'web')
  const load = (): Load => startLoad(server.kernel.url('proxy-http'), 'web.test', { path: '/version.txt', maxRequests: 50_000, timeoutMs: 300_000 })
  const canaryName = `${project}-web-canary`

  writeServices(cwd, { [project]: webFile(project, '1') })
  t.same((await call<DeployResult>('POST', '/api/v1/deploy')).body.errors, [], 'v1 runs on two replicas')

  // Refusals, before anything changes.
  for (const [method, path, body, status, error] of [
    ['POST', '/api/v1/services/web/promote', undefined, 409, /^no canary of "web" is running$/],
    ['POST', '/api/v1/services/web/rollback', undefined, 409, /^no earlier version of "web" in the deploy history/],
    ['POST', '/api/v1/services/nope/promote', undefined, 404, /^no service named "nope" is deployed$/],
    ['POST', '/api/v1/services/nope/rollback', undefined, 404, /^no service named "nope" is deployed$/],
    ['POST', '/api/v1/deploy?service=nope', { canary: {} }, 404, /^no service named "nope" in services/],
    ['POST', '/api/v1/deploy', { services: [{ ...webEntry(project, '2'), name: 'ghost', domain: 'ghost.test' }], canary: {} }, 404, /^no service named "ghost" is deployed$/],
    ['POST', '/api/v1/deploy?service=web', { canary: {} }, 409, /would run the same containers as its replicas/],
    ['POST', '/api/v1/deploy?service=web', { canary: { weight: 0 } }, 400, /^canary\.weight must be an integer from 1 to 99/],
    ['POST', '/api/v1/deploy?service=web', { canary: { weight: 100 } }, 400, /^canary\.weight must be an integer from 1 to 99/],
    ['POST', '/api/v1/deploy?service=web', { canary: { weight: '30' } }, 400, /^canary\.weight must be an integer/],
    ['POST', '/api/v1/deploy?service=web', { canary: { weight: 30, share: 1 } }, 400, /^canary\.share is not a known field/],
    ['POST', '/api/v1/deploy', { canary: {} }, 400, /^a canary deploys one service/]
  ] as const) {
    const answer = await call(method, path, body)
    t.match([answer.status, answer.body.error], [status, error], `${method} ${path} ${JSON.stringify(body) ?? ''} → ${status}`)
  }
  for (const args of [['deploy', '--canary'], ['deploy', 'web', '--weight', '30'], ['deploy', 'web', '--canary', '--weight', '0']]) {
    t.equal((await cli(...args)).code, 2, `berth ${args.join(' ')} is a usage error`)
  }

  // A canary of v2 at 30 %: the replicas keep running, a third container serves beside them.
  const stable = engine.containers()
  let traffic = load()
  await nextAnswers(traffic, 20)
  writeServices(cwd, { [project]: webFile(project, '2') })
  const started = await cli('deploy', 'web', '--canary', '--weight', '30')
  t.equal(started.code, 0, started.stderr)
  t.match(started.stdout, /^ {2}web {2}updated\n1 deployed \(1 updated\), 0 removed, 0 failed\ncanary of web: berth-test\/httpd:1 \([0-9a-f]{12}\) at 30%; berth promote web or berth rollback web\n$/)
  const route = await pollUntil(async () => { const r = await webRoute(); return r?.canary_weight === 30 && r.upstreams.some(u => u.canary === true && u.healthy) && r }, { what: 'the canary in the routing table' })
  t.equal(route.upstreams.length, 3, 'two replicas and the canary are routed')
  const shares = byVersion(await nextAnswers(traffic, 600))
  t.ok((shares['2'] ?? 0) >= 600 * 0.22 && (shares['2'] ?? 0) <= 600 * 0.38, `the canary answers about 30 % (${JSON.stringify(shares)})`)
  t.equal((shares['1'] ?? 0) + (shares['2'] ?? 0), 600, 'every one of them answered')
  const status = await webStatus()
  t.match(status, { status: 'running', replicas: 2, running_replicas: 2, canary: { image: 'berth-test/httpd:1', hash: /^[0-9a-f]{64}$/, weight: 30, running: true } }, 'the status shows the canary')
  const table = await cli('status')
  t.match(table.stdout, /CANARY\n.*web .* berth-test\/httpd:1 \([0-9a-f]{12}\) at 30%\n/, 'and so does berth status')
  const reweighed = await call<DeployResult>('POST', '/api/v1/deploy?service=web', { canary: { weight: 50 } })
  t.match([reweighed.status, reweighed.body], [200, { changed: [], canary: { weight: 50, hash: status?.canary?.hash } }], 'the same canary again: another weight, no new container')
  await pollUntil(async () => (await webRoute())?.canary_weight === 50, { what: 'the new weight in the routing table' })
  t.match((await call('POST', '/api/v1/deploy', { services: [webEntry(project, '3')], canary: { weight: 50 } })).status, 409, 'one canary at a time')
  t.match((await call<DeployResult>('POST', '/api/v1/deploy')).body.errors, [{ service: 'web', error: /^a canary of "web" is running .*; promote it or roll it back first$/ }],
    'a deploy that would change the service waits for the canary to end')

  // Rollback with a canary: the canary goes, the replicas were never touched.
  const dropped = await cli('rollback', 'web')
  t.equal(dropped.code, 0, dropped.stderr)
  t.match(dropped.stdout, /\nweb: canary berth-test\/httpd:1 \([0-9a-f]{12}\) → berth-test\/httpd:1 \([0-9a-f]{12}\)\n$/)
  const afterDrop = engine.containers()
  t.notOk(afterDrop.has(canaryName), 'the canary container is gone')
  for (const name of [`${project}-web-1`, `${project}-web-2`]) t.equal(afterDrop.get(name)?.id, stable.get(name)?.id, `${name} is the same container`)
  t.same(byVersion(await nextAnswers(traffic, 100)), { 1: 100 }, 'only v1 answers')
  t.equal((await webStatus())?.canary, undefined)

  // A canary again, from a request body; it outlives a restart of the server.
  const again = await call<DeployResult>('POST', '/api/v1/deploy', { services: [webEntry(project, '2')], canary: { weight: 30 } })
  t.match([again.status, again.body], [200, { errors: [], changed: ['web'], canary: { weight: 30 } }])
  t.same(failedAnswers(await traffic.stop()), [], 'no request failed through the canary and its rollback')
  const canaryId = engine.containers().get(canaryName)?.id
  await server.kernel.stop()
  server = await reconcilerKernel(t, engine, { plugins: [proxy], sections: SECTIONS, restartOf: server })
  t.match(await webStatus(), { running_replicas: 2, canary: { weight: 30, running: true } }, 'the restarted server knows the canary')
  t.equal(engine.containers().get(canaryName)?.id, canaryId, 'and adopted its container')
  await pollUntil(async () => (await webRoute())?.canary_weight === 30, { what: 'the canary weight in the new routing table' })

  // Promote: v2 replaces both replicas one at a time, then the canary goes.
  traffic = load()
  await nextAnswers(traffic, 20)
  const promoted = await cli('promote', 'web')
  t.equal(promoted.code, 0, promoted.stderr)
  t.equal(promoted.stdout, '  web  updated\n1 deployed (1 updated), 0 removed, 0 failed\n')
  const afterPromote = engine.containers()
  t.notOk(afterPromote.has(canaryName), 'the canary container is gone')
  for (const name of [`${project}-web-1`, `${project}-web-2`]) t.not(afterPromote.get(name)?.id, stable.get(name)?.id, `${name} was recreated`)
  await pollUntil(async () => { const r = await webRoute(); return r?.canary_weight === undefined && r?.upstreams.length === 2 }, { what: 'the route without the canary' })
  t.same(byVersion(await nextAnswers(traffic, 200)), { 2: 200 }, 'only v2 answers')
  const promotedStatus = await webStatus()
  t.match(promotedStatus, { status: 'running', running_replicas: 2 })
  t.equal(promotedStatus?.canary, undefined, 'no canary any more')
  t.equal((await call('POST', '/api/v1/services/web/promote')).status, 409, 'nothing left to promote')

  // Rollback without a canary: the version before (v1) rolls out again.
  const back = await cli('rollback', 'web')
  t.equal(back.code, 0, back.stderr)
  t.match(back.stdout, /\nweb: berth-test\/httpd:1 \([0-9a-f]{12}\) → berth-test\/httpd:1 \([0-9a-f]{12}\)\n$/)
  t.same(byVersion(await nextAnswers(traffic, 200)), { 1: 200 }, 'only v1 answers')
  const answers = await traffic.stop()
  t.same(failedAnswers(answers), [], `no failed request among ${answers.length} through promote and rollback`)
  const history = (await call<{ deploys: Array<{ trigger: string }> }>('GET', '/api/v1/deploys')).body.deploys.map(d => d.trigger)
  t.same(history, ['deploy', 'canary', 'deploy', 'rollback', 'canary', 'promote', 'rollback'], 'each step is in the deploy history (the held deploy with its error)')
})
