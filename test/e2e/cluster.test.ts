// A real cluster on this machine: a leader (`berth server` with the proxy and webhooks) and two agents
// (`berth server --join`), each agent driving a Docker engine of its own (another dockerd: own data
// root, exec root, socket; test/support/engines.ts). Replicas are spread over the agents, a pinned
// service runs on its node only, the proxy serves replicas of both nodes, status and `berth cluster
// info` say where each replica runs. An agent whose engine stops answering is unhealthy. An agent
// killed with SIGKILL: the cluster answers 503 for its pinned service (API and webhook), its other
// replicas come back on the other node after the grace period, and once it is restarted it removes
// its stale replica: nothing runs twice. A change rolls through both agents under load with no failed
// request; an agent's own API refuses changes; a leader killed and restarted finds every container as
// it was; a service built on the leader runs on an agent, pulled from the build registry.
import t from 'tap'
import type { ChildProcess } from 'node:child_process'
import { createHmac } from 'node:crypto'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { NodeRecord } from '../../plugins/nodes/node-record.js'
import type { ServiceStatus } from '../../plugins/reconciler/status.js'
import { boundUrls, exited, runCli, spawnCli } from '../support/cli.js'
import { requireComponent } from '../support/component.js'
import { dockerEngine, httpdImage, HTTPD_INDEX, startRegistry } from '../support/docker.js'
import { extraEngine, type ExtraEngine } from '../support/engines.js'
import { failedAnswers, startLoad, through } from '../support/load.js'
import { removeInstanceAtEnd, serverDir, startServer, testInstance } from '../support/orchestration.js'
import { pollUntil } from '../support/poll.js'
import { tempDir } from '../support/tmp.js'

interface Teardown { teardown(fn: () => void | Promise<void>): void }
interface Info { nodes: NodeRecord[] }

const docker = await requireComponent(t, 'docker', dockerEngine)
const HEARTBEAT = 0.5
const OFFLINE_AFTER = 2
const RESCHEDULE_AFTER = 4

/** An agent's working directory: its cluster.toml (its own engine and node name) and its token in the state directory. */
function agentDir (t: Teardown, name: string, engine: ExtraEngine, instance: string, token: string): string {
  const dir = tempDir(t)
  writeFileSync(join(dir, 'cluster.toml'), [
    '[server]', 'plugins = ["tokens", "secrets", "reconciler", "cluster", "nodes"]', '',
    '[server.listeners.control]', 'host = "127.0.0.1"', 'port = 0', '',
    '[reconciler]', `instance = "${instance}"`, `docker_socket = "${engine.socket}"`, 'network = "berth-test"', 'stop_timeout_secs = 0', `node_name = "${name}"`, ''
  ].join('\n'))
  mkdirSync(join(dir, '.berth'), { mode: 0o700 })
  writeFileSync(join(dir, '.berth', 'join.token'), `${token}\n`, { mode: 0o600 })
  return dir
}

/** `berth server --join <leader>` in `dir`, until its health answers (at the control URL read back from it); SIGKILLed at test end. */
async function startAgent (t: Teardown, dir: string, leader: string): Promise<{ child: ChildProcess & { output: () => string }, url: URL }> {
  const child = spawnCli(['server', '--join', leader], { cwd: dir })
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL')
      await exited(child)
    }
  })
  const url = (await boundUrls(child, `agent in ${dir}`, 20_000)).control
  await pollUntil(async () => {
    if (child.exitCode !== null) throw new Error(`agent exited: ${child.output()}`)
    return (await fetch(new URL('/api/v1/health', url))).status === 200
  }, { timeout: 20_000, what: `agent in ${dir}` })
  return { child, url }
}

if (docker !== undefined) {
  t.test('a leader and two agents on engines of their own: placement, the proxy, an engine down, an agent killed and back', async t => {
    const engines = await requireComponent(t, 'two extra dockerd', async () => await Promise.all([extraEngine(t, 'a'), extraEngine(t, 'b')]))
    if (engines === undefined) return
    const [engineA, engineB] = engines
    await Promise.all([httpdImage(docker), ...engines.map(async e => await httpdImage(e.docker))])
    const instance = testInstance()
    removeInstanceAtEnd(t, docker, instance)
    const project = `p${instance.slice(-6)}`

    const registry = await startRegistry(t)
    const leader = await serverDir(t, ['tokens', 'secrets', 'reconciler', 'cluster', 'nodes', 'proxy', 'webhooks'], [
      '[reconciler]', `instance = "${instance}"`, 'network = "berth-test"', 'stop_timeout_secs = 0', 'node_name = "leader"', `build_registry = "${registry.host}"`, '',
      '[cluster]', 'name = "e2e"', `heartbeat_interval_secs = ${HEARTBEAT}`, `offline_after_secs = ${OFFLINE_AFTER}`, `reschedule_after_secs = ${RESCHEDULE_AFTER}`, 'schedule_leader = false', '',
      '[proxy]', 'health_interval_secs = 1', 'connect_timeout_ms = 1000', '', '[acme]', 'directory = ""', ''
    ].join('\n'))
    let leaderProcess = await startServer(t, leader)
    // The proxy's port is 0 in the configuration: read back from the leader, again after each restart.
    let proxyUrl = (await boundUrls(leaderProcess, 'the leader'))['proxy-http']
    const admin = readFileSync(join(leader.stateDir, 'admin.token'), 'utf8').trim()
    const call = async <T>(method: string, path: string, body?: unknown, headers: Record<string, string> = { authorization: `Bearer ${admin}` }): Promise<{ status: number, body: T }> => {
      const response = await fetch(`${leader.url}${path}`, { method, headers: { ...headers, ...(body !== undefined && { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) })
      return { status: response.status, body: await response.json() as T }
    }
    const created = await call<{ token: string }>('POST', '/api/v1/tokens', { name: 'agents', role: 'agent' })
    t.equal(created.status, 201)
    const join_ = `127.0.0.1:${leader.port}`
    const dirs = [agentDir(t, 'node-a', engineA, instance, created.body.token), agentDir(t, 'node-b', engineB, instance, created.body.token)]
    const agentA = await startAgent(t, dirs[0], join_)
    let agentB = (await startAgent(t, dirs[1], join_)).child

    const nodes = async (): Promise<Map<string, NodeRecord>> => new Map((await call<Info>('GET', '/api/v1/cluster/info')).body.nodes.map(n => [n.name, n]))
    const ready = await pollUntil(async () => {
      const all = await nodes()
      return all.get('node-a')?.status === 'ready' && all.get('node-b')?.status === 'ready' && all
    }, { what: 'both agents ready', timeout: 20_000 })
    t.match(ready.get('node-a'), { role: 'agent', address: '127.0.0.1', engine: { healthy: true, kind: 'docker' }, capacity: { cpus: Number } })
    const listed = await runCli(['cluster', 'info'], { cwd: leader.dir })
    t.equal(listed.code, 0, listed.stderr)
    t.match(listed.stdout, /^node-a +agent +ready +active +127\.0\.0\.1 /m, 'berth cluster info lists the agents')

    const httpd = (name: string, replicas: number, extra: Record<string, unknown> = {}): Record<string, unknown> =>
      ({ name, project, image: 'berth-test/httpd:1', port: 8080, health: '/', replicas, ...extra })
    const deployed = await call<{ deployed: string[], errors: unknown[] }>('POST', '/api/v1/deploy', { services: [httpd('web', 2, { domain: 'web.test' }), httpd('cache', 1, { placement: { node: 'node-b' } })] })
    t.same(deployed.body.errors, [])
    t.same(deployed.body.deployed.sort(), ['cache', 'web'])
    const inEngineIds = async (engine: ExtraEngine): Promise<string[]> =>
      (await engine.docker.listContainers({ filters: { label: [`berth.instance=${instance}`, 'berth.service=web'] } })).map(c => c.Id)
    const inEngine = async (engine: ExtraEngine): Promise<string[]> =>
      (await engine.docker.listContainers({ filters: { label: [`berth.instance=${instance}`] } })).map(c => c.Names[0].replace(`/${project}-`, '')).sort()
    t.same(await inEngine(engineA), ['web-1'], 'node-a\'s engine runs one web replica')
    t.same(await inEngine(engineB), ['cache-1', 'web-2'], 'node-b\'s engine runs the other and the pinned cache')
    const status = async (): Promise<Map<string, ServiceStatus>> => new Map((await call<{ services: ServiceStatus[] }>('GET', '/api/v1/status')).body.services.map(s => [s.name, s]))
    t.same((await status()).get('web')?.containers.map(c => [c.replica, c.node, c.state]), [[1, 'node-a', 'running'], [2, 'node-b', 'running']], 'status says where each replica runs')
    const shown = await runCli(['status'], { cwd: leader.dir })
    t.match(shown.stdout, /^web +\S+ +running +2\/2 +node-a:1 node-b:2 /m, 'and so does berth status')

    const throughProxy = async (): Promise<string> => (await through(proxyUrl, 'web.test')).body
    await pollUntil(async () => {
      const routes = await call<{ routes: Array<{ domain: string, upstreams: Array<{ healthy: boolean }> }> }>('GET', '/api/v1/proxy/routes')
      return routes.body.routes.find(r => r.domain === 'web.test')?.upstreams.filter(u => u.healthy).length === 2
    }, { what: 'the proxy routes to both nodes', timeout: 15_000 })
    t.equal(await throughProxy(), HTTPD_INDEX, 'the proxy serves web.test from the agents')

    // A change of web: node-a, then node-b replace their replica, each drained by the leader's proxy
    // first and its successor seen serving before the rollout goes on.
    const idsBefore = new Set([...await inEngineIds(engineA), ...await inEngineIds(engineB)])
    const load = startLoad(proxyUrl, 'web.test', { clients: 2 })
    const changed = await call<{ changed: string[], errors: unknown[] }>('POST', '/api/v1/deploy', { services: [httpd('web', 2, { domain: 'web.test', env: { VERSION: '2' } })] })
    const answers = await load.stop()
    t.same([changed.body.changed, changed.body.errors], [['web'], []])
    const idsAfter = [...await inEngineIds(engineA), ...await inEngineIds(engineB)]
    t.ok(idsAfter.length === 2 && idsAfter.every(id => !idsBefore.has(id)), 'both web replicas were recreated, one on each node')
    t.same(failedAnswers(answers), [], `no failed request among ${answers.length} through the proxy while both nodes replaced their web replica`)

    // node-a's engine stops answering (its dockerd paused), its channel stays: unhealthy, not ready.
    const pidA = Number(readFileSync(join(engineA.dir, 'docker.pid'), 'utf8'))
    process.kill(pidA, 'SIGSTOP')
    try {
      const unhealthy = await pollUntil(async () => { const n = (await nodes()).get('node-a'); return n?.status === 'unhealthy' && n }, { what: 'node-a unhealthy', timeout: 10_000 })
      t.match(unhealthy, { engine: { healthy: false, error: /did not answer/ } }, 'an agent whose engine does not answer is unhealthy')
    } finally {
      process.kill(pidA, 'SIGCONT')
    }
    await pollUntil(async () => (await nodes()).get('node-a')?.status === 'ready', { what: 'node-a ready again' })

    const secret = 'a-webhook-secret-of-the-e2e-test'
    t.equal((await call('POST', '/api/v1/webhooks', { repo: 'acme/cache', service_name: 'cache', branch: 'main', secret })).status, 201)

    // node-b dies: SIGKILL. Its containers live on in its engine; the leader sees its channel close.
    agentB.kill('SIGKILL')
    await exited(agentB)
    await pollUntil(async () => (await nodes()).get('node-b')?.status === 'offline', { what: 'node-b offline' })
    const refused = await call<{ error: string }>('POST', '/api/v1/services/cache/redeploy')
    t.equal(refused.status, 503, 'a redeploy of the service pinned to the offline node: 503')
    t.match(refused.body.error, /^service "cache" is placed on node "node-b", which is offline/)
    const push = { repo: 'acme/cache', ref: 'refs/heads/main', sha: 'f'.repeat(40) }
    const hook = await call<{ error: string }>('POST', '/api/v1/webhooks/git', push, { 'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(JSON.stringify(push)).digest('hex')}` })
    t.equal(hook.status, 503, 'so does a webhook push for it')
    t.match(hook.body.error, /node "node-b", which is offline/)

    const moved = await pollUntil(async () => {
      const web = (await status()).get('web')
      return web?.running_replicas === 2 && web.containers.every(c => c.node === 'node-a') && web
    }, { what: 'web back to two replicas on node-a', timeout: (RESCHEDULE_AFTER + 20) * 1000 })
    t.same(moved.containers.map(c => [c.replica, c.node]), [[1, 'node-a'], [2, 'node-a']], 'its web replica came back on the other node')
    t.same(await inEngine(engineA), ['web-1', 'web-2'])
    t.match((await nodes()).get('node-b'), { status: 'offline', rescheduled: true, placed: [{ service: 'cache', replicas: [1], running: 0 }] }, 'the pinned cache waits for node-b')
    await pollUntil(async () => await throughProxy() === HTTPD_INDEX, { what: 'the proxy serving from node-a alone' })

    // node-b comes back: it converges to what is placed on it, its stale web replica goes.
    agentB = (await startAgent(t, dirs[1], join_)).child
    await pollUntil(async () => JSON.stringify(await inEngine(engineB)) === '["cache-1"]', { what: 'node-b without its stale replica', timeout: 20_000 })
    t.pass('node-b removed its stale web replica: only the pinned cache runs there')
    t.same(await inEngine(engineA), ['web-1', 'web-2'], 'node-a keeps both web replicas: nothing runs twice')
    // The leader hears of it when node-b reports its applied state.
    const after = await pollUntil(async () => { const all = await status(); return all.get('cache')?.running_replicas === 1 && all }, { what: 'cache reported running on node-b' })
    t.match(after.get('web'), { status: 'running', running_replicas: 2 })
    t.match(after.get('cache'), { status: 'running', running_replicas: 1, containers: [{ node: 'node-b' }] })
    const again = await call('POST', '/api/v1/services/cache/redeploy')
    t.equal(again.status, 200, 'with node-b back, a redeploy is no longer refused (its pull, with no registry here, is its own matter)')

    // An agent's own API: changes refused, cluster info says whose agent it is.
    const agentAdmin = readFileSync(join(dirs[0], '.berth', 'admin.token'), 'utf8').trim()
    const own = await fetch(new URL('/api/v1/deploy', agentA.url), { method: 'POST', headers: { authorization: `Bearer ${agentAdmin}` } })
    t.equal(own.status, 409, 'a deploy through an agent\'s own API is refused')
    t.match(await own.json(), { error: `this node is an agent of the leader at ${join_}: change services through the leader` })
    const agentInfo = await (await fetch(new URL('/api/v1/cluster/info', agentA.url), { headers: { authorization: `Bearer ${agentAdmin}` } })).json()
    t.match(agentInfo, { agent: { leader: join_, link: 'connected', node: 'node-a' } })

    // The leader dies (SIGKILL) and comes back: the agents rejoin, and nothing is recreated or removed.
    const allIds = async (): Promise<string[]> => (await Promise.all(engines.map(async e => await e.docker.listContainers({ all: true, filters: { label: [`berth.instance=${instance}`] } })))).flat().map(c => c.Id).sort()
    const kept = await allIds()
    leaderProcess.kill('SIGKILL')
    await exited(leaderProcess)
    leaderProcess = await startServer(t, leader)
    proxyUrl = (await boundUrls(leaderProcess, 'the restarted leader'))['proxy-http']
    await pollUntil(async () => {
      const all = await nodes()
      return all.get('node-a')?.status === 'ready' && all.get('node-b')?.status === 'ready'
    }, { what: 'both agents back with the restarted leader', timeout: 20_000 })
    await pollUntil(async () => (await status()).get('web')?.running_replicas === 2, { what: 'web running after the leader restarted' })
    t.same(await allIds(), kept, 'after the leader restarted, every container is the one that ran before')
    await pollUntil(async () => await throughProxy() === HTTPD_INDEX, { what: 'the restarted leader\'s proxy serving' })

    // A service built from sources on the leader runs on an agent: pushed to the build registry (no
    // login), pulled from there by node-a's engine, which never saw the sources.
    const app = join(leader.dir, 'services', project, 'app')
    mkdirSync(app, { recursive: true })
    writeFileSync(join(app, 'Dockerfile'), 'FROM berth-test/httpd:1\nCOPY index.html /www/index.html\n')
    writeFileSync(join(app, 'index.html'), 'built on the leader\n')
    writeFileSync(join(leader.dir, 'services', project, 'service.toml'), '[[service]]\nname = "site"\nport = 8080\nhealth = "/"\nplacement = { node = "node-a" }\n[service.build]\ncontext = "app"\n')
    const built = await call<{ errors: unknown[] }>('POST', '/api/v1/deploy?service=site')
    t.same(built.body.errors, [], 'built on the leader, run on node-a')
    const site = (await status()).get('site')
    t.match(site, { image: new RegExp(`^${registry.host}/${project}-site:[0-9a-f]{16}$`), running_replicas: 1, containers: [{ node: 'node-a' }] })
    t.equal(await (await fetch(`http://${site?.containers[0].address ?? ''}/`)).text(), 'built on the leader\n', 'serving the build')
    t.equal((await engineA.docker.listContainers({ filters: { label: [`berth.instance=${instance}`, 'berth.service=site'] } }))[0]?.Image, site?.image, 'node-a\'s engine pulled the leader\'s build')
  })
}
