// Two masters on the run's etcd and one agent on the run's Docker engine (masters and agent labelled
// as different instances, so that each reconciler sees only its own containers): a service deployed
// through the leader runs on the agent and is served by the follower's proxy too (from what the
// leader publishes); a change deployed, then the leader killed with SIGKILL: the follower leads,
// the agent joins it by itself, no container is restarted, the new leader carries out
// the next deploy, and a bounded load through the follower's proxy sees no failed request throughout
// (meanwhile the follower answers what only the leader does with 503 BERTH_NO_LEADER).
// Then the leader paused (SIGSTOP) past its lease: the other master leads and deploys; woken
// (SIGCONT), the old leader follows and undoes nothing. Last, the leader stopped cleanly (SIGTERM)
// with the agent joined: it stops leading first thing (the agent's channel is closed, 1001, because
// this master no longer leads) and exits cleanly; the other master leads and the
// agent joins it.
import t from 'tap'
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { boundUrls, exited } from '../support/cli.js'
import { requireComponent } from '../support/component.js'
import { dockerEngine, httpdImage, HTTPD_INDEX } from '../support/docker.js'
import { requireEtcd } from '../support/etcd.js'
import { failedAnswers, startLoad, through } from '../support/load.js'
import { removeInstanceAtEnd, serverDir, startServer, testInstance, type ServerDir } from '../support/orchestration.js'
import { pollUntil } from '../support/poll.js'

interface Health { plugins: Record<string, { details?: Record<string, unknown> }> }

const docker = await requireComponent(t, 'docker', dockerEngine)

async function api<T> (server: ServerDir, token: string, method: string, path: string, body?: unknown): Promise<{ status: number, body: T }> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(60_000)
  })
  return { status: response.status, body: await response.json() as T }
}

async function leads (server: ServerDir): Promise<boolean> {
  const response = await fetch(`${server.url}/api/v1/health`, { signal: AbortSignal.timeout(2000) }).catch(() => undefined)
  return response !== undefined && ((await response.json()) as Health).plugins.cluster?.details?.role === 'leader'
}

if (docker !== undefined) {
  t.test('the leader killed under load: the follower leads, the agent follows, nothing restarts, no request fails', async t => {
    const etcd = await requireEtcd(t)
    if (etcd === undefined) return
    await httpdImage(docker)
    const masters = testInstance()
    const agentInstance = testInstance()
    removeInstanceAtEnd(t, docker, agentInstance)
    const project = `p${agentInstance.slice(-6)}`
    const master = async (name: string): Promise<ServerDir> => await serverDir(t, ['cluster', 'tokens', 'secrets', 'reconciler', 'nodes', 'proxy'], [
      '[reconciler]', `instance = "${masters}"`, 'network = "berth-test"', 'stop_timeout_secs = 0', `node_name = "${name}"`, '',
      '[cluster]', 'name = "e2e-masters"', 'heartbeat_interval_secs = 0.5', 'offline_after_secs = 2', 'reschedule_after_secs = 60', 'schedule_leader = false', '',
      // A lease of 3 s (5 s by default): failovers within the test take about 4 s instead of 6.
      '[cluster.etcd]', `endpoints = ${JSON.stringify(etcd.endpoints)}`, `prefix = "${etcd.prefix}"`, 'lease_ttl_seconds = 3', '',
      '[proxy]', 'health_interval_secs = 1', 'connect_timeout_ms = 1000', '', '[acme]', 'directory = ""', ''
    ].join('\n'))
    const a = await master('master-a')
    const b = await master('master-b')
    let processA = await startServer(t, a)
    await pollUntil(async () => await leads(a), { timeout: 10_000, what: 'master-a to lead' })
    mkdirSync(b.stateDir, { recursive: true, mode: 0o700 })
    copyFileSync(join(a.stateDir, 'secrets.key'), join(b.stateDir, 'secrets.key'))
    const processB = await startServer(t, b)
    const admin = readFileSync(join(a.stateDir, 'admin.token'), 'utf8').trim()

    const agentToken = await api<{ token: string }>(a, admin, 'POST', '/api/v1/tokens', { name: 'agents', role: 'agent' })
    const agent = await serverDir(t, ['cluster', 'tokens', 'secrets', 'reconciler', 'nodes'], [
      '[reconciler]', `instance = "${agentInstance}"`, 'network = "berth-test"', 'stop_timeout_secs = 0', 'node_name = "agent-1"', '',
      '[cluster]', `join = "127.0.0.1:${b.port},127.0.0.1:${a.port}"`, `join_token = "${agentToken.body.token}"`, ''
    ].join('\n'))
    const agentProcess = await startServer(t, agent)
    const agentReadyOn = async (server: ServerDir): Promise<boolean> => {
      const info = await api<{ nodes?: Array<{ name: string, status: string }> }>(server, admin, 'GET', '/api/v1/cluster/info').catch(() => undefined)
      return info?.status === 200 && info.body.nodes?.some(node => node.name === 'agent-1' && node.status === 'ready') === true
    }
    await pollUntil(async () => await agentReadyOn(a), { timeout: 20_000, what: 'the agent ready on master-a' })
    t.pass('the agent, given the follower first, joined the leader')

    const web = (version: string): Record<string, unknown> => ({ name: 'web', project, image: 'berth-test/httpd:1', port: 8080, health: '/', replicas: 2, domain: 'web.test', env: { VERSION: version } })
    const ids = async (): Promise<string[]> => (await docker.listContainers({ filters: { label: [`berth.instance=${agentInstance}`, 'berth.service=web'] } })).map(c => c.Id).sort()
    const first = await api<{ deployed: string[], errors: unknown[] }>(a, admin, 'POST', '/api/v1/deploy', { services: [web('1')] })
    t.same([first.status, first.body.errors], [200, []], 'deployed through the leader')
    t.equal((await ids()).length, 2, 'both replicas run on the agent')
    // The proxies' ports are 0 in the configuration: the follower's is read back from it.
    const follower = (await boundUrls(processB, 'master-b'))['proxy-http']
    await pollUntil(async () => (await through(follower, 'web.test').catch(() => undefined))?.body === HTTPD_INDEX, { timeout: 15_000, what: 'the follower\'s proxy to serve web.test' })
    t.pass('the follower\'s proxy serves the agent\'s replicas, as the leader published them')

    const load = startLoad(follower, 'web.test', { clients: 2 })
    const changed = await api<{ changed: string[], errors: unknown[] }>(a, admin, 'POST', '/api/v1/deploy', { services: [web('2')] })
    t.same([changed.status, changed.body.changed, changed.body.errors], [200, ['web'], []], 'a change deployed just before the leader dies')
    const running = await ids()
    processA.kill('SIGKILL')
    await exited(processA)
    const meanwhile = await api<{ code: string }>(b, admin, 'GET', '/api/v1/deploys')
    t.match(meanwhile, { status: 503, body: { code: 'BERTH_NO_LEADER' } }, 'until the election, what only the leader does answers 503 on the follower')
    await pollUntil(async () => await leads(b), { timeout: 10_000, interval: 100, what: 'master-b to lead' })
    t.pass('master-b leads after master-a was killed')
    await pollUntil(async () => await agentReadyOn(b), { timeout: 20_000, what: 'the agent to join master-b' })
    t.pass('the agent joined the new leader by itself')
    t.same(await ids(), running, 'no container was restarted: the change deployed before the kill stands')

    const third = await api<{ changed: string[], errors: unknown[] }>(b, admin, 'POST', '/api/v1/deploy', { services: [web('3')] })
    t.same([third.status, third.body.changed, third.body.errors], [200, ['web'], []], 'the new leader carries out the next deploy')
    const after = await ids()
    t.ok(after.length === 2 && after.every(id => !running.includes(id)), 'both replicas replaced on the agent')
    const answers = await load.stop()
    t.ok(answers.length > 50, `${answers.length} requests through the follower's proxy`)
    t.same(failedAnswers(answers), [], 'none failed: before, during and after the failover, and through the new leader\'s rollout')

    // master-a back (a follower); then master-b, the leader, paused past its lease.
    processA = await startServer(t, a)
    processB.kill('SIGSTOP')
    try {
      await pollUntil(async () => await leads(a), { timeout: 15_000, interval: 100, what: 'master-a to lead while master-b is paused' })
      await pollUntil(async () => await agentReadyOn(a), { timeout: 20_000, what: 'the agent to join master-a' })
      const fourth = await api<{ changed: string[], errors: unknown[] }>(a, admin, 'POST', '/api/v1/deploy', { services: [web('4')] })
      t.same([fourth.status, fourth.body.changed, fourth.body.errors], [200, ['web'], []], 'the new leader deploys while the old one is paused')
    } finally {
      processB.kill('SIGCONT')
    }
    const deployedByA = await ids()
    await pollUntil(async () => {
      const health = await (await fetch(`${b.url}/api/v1/health`)).json() as Health
      return health.plugins.cluster?.details?.role === 'follower'
    }, { timeout: 10_000, what: 'master-b, woken, to follow' })
    t.pass('woken, master-b knows it no longer leads')
    t.same(await ids(), deployedByA, 'and changed nothing on the agent')
    t.ok(await agentReadyOn(a), 'and the agent stays with master-a')

    const seen = agentProcess.output().length
    processA.kill('SIGTERM')
    t.equal(await exited(processA), 0, 'master-a, the leader, stopped cleanly on SIGTERM with the agent joined')
    const closed = await pollUntil(() => agentProcess.output().slice(seen).split('\n').filter(line => line.includes('"channel to the leader closed"')).map(line => JSON.parse(line) as { code: number, reason: string })[0], { what: 'the agent to see its channel closed' })
    t.match(closed, { code: 1001, reason: 'this master no longer leads' }, 'the agent\'s channel was closed with a close frame, once master-a had stopped leading')
    await pollUntil(async () => await leads(b), { timeout: 10_000, interval: 100, what: 'master-b to lead' })
    t.pass('master-b leads after SIGTERM: master-a resigned')
    await pollUntil(async () => await agentReadyOn(b), { timeout: 20_000, what: 'the agent to join master-b' })
    t.pass('the agent joined master-b')
  })
}
