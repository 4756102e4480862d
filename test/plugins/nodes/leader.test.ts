// A leader (tokens, secrets, reconciler, cluster and nodes plugins) whose engine is the stand-in
// (test/support/fake-engine.ts; placement and the channel are the subject, not Docker), with simulated
// agents speaking the real protocol on loopback: cluster info, exact placement and spreading, status
// naming each replica's node, drain and undrain, an agent gone (503 for its pinned service, its
// replicas placed elsewhere after the grace period) and back (its stale replicas removed, nothing
// placed twice), and the join refused to operator tokens. A real agent (a kernel of its own, on a
// stand-in engine of its own) whose
// token file holds a wrong token is refused, then joins once the right one is written there, without
// a restart; the leader, stopped with it joined, closes its channel at once with a close frame (1001)
// and stops.
import t from 'tap'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import pino from 'pino'
import { simulateAgents, type SimulatedCluster } from '../../../bench/cluster-sim.js'
import type { NodeRecord } from '../../../plugins/nodes/node-record.js'
import cluster from '../../../plugins/cluster/index.js'
import nodes from '../../../plugins/nodes/index.js'
import type { ServiceStatus } from '../../../plugins/reconciler/status.js'
import { busyboxEngine } from '../../support/fake-engine.js'
import { api, reconcilerKernel, tokenFor } from '../../support/orchestration.js'
import { pollUntil } from '../../support/poll.js'
import { tempDir } from '../../support/tmp.js'

interface Info { cluster: Record<string, unknown>, nodes: NodeRecord[] }

t.test('a leader places, drains and reschedules replicas over simulated agents (stand-in engine)', async t => {
  const { kernel, token, project } = await reconcilerKernel(t, busyboxEngine(), {
    plugins: [cluster, nodes],
    extra: { node_name: 'leader' },
    sections: { cluster: { name: 'test', heartbeat_interval_secs: 0.1, offline_after_secs: 0.6, reschedule_after_secs: 1.5, schedule_leader: false } }
  })
  const leader = kernel.url('control').host
  const agentToken = await tokenFor(kernel, 'agent')
  const started: SimulatedCluster[] = []
  const join = (names: string[]): SimulatedCluster => {
    const sims = simulateAgents({ leader, token: agentToken, count: names.length, names, heartbeatMs: 100 })
    started.push(sims)
    return sims
  }
  t.teardown(async () => { for (const sims of started) await sims.stop() })
  const info = async (): Promise<Info> => (await api<Info>(kernel, 'GET', '/api/v1/cluster/info', { token })).body
  const nodesBy = async (): Promise<Map<string, NodeRecord>> => new Map((await info()).nodes.map(n => [n.name, n]))

  const sims = join(['web', 'web-2', 'db'])
  // One answer with every node ready: at 0.1 s heartbeats a loaded host can show one late for a moment.
  const first = await pollUntil(async () => {
    const answer = await info()
    return answer.nodes.filter(n => n.status === 'ready').length === 4 ? answer : undefined
  }, { what: 'the leader and three agents ready' })
  t.match(first.cluster, { name: 'test', leader: 'leader', heartbeat_interval_secs: 0.1 })
  t.match(first.nodes[0], { name: 'leader', role: 'leader', scheduling: 'drained', status: 'ready', engine: { healthy: true, kind: 'stand-in' } })
  t.match(first.nodes.find(n => n.name === 'web-2'), { role: 'agent', address: '127.0.0.1', status: 'ready', scheduling: 'active', last_heartbeat: /^\d{4}-/, capacity: { cpus: 8 }, engine: { healthy: true, kind: 'simulated' } })

  const admin = await api(kernel, 'GET', '/api/v1/cluster/join', { token })
  t.equal(admin.status, 403, 'the admin token may not join')

  const service = (name: string, replicas: number, extra: Record<string, unknown> = {}): Record<string, unknown> =>
    ({ name, project, image: 'berth-test/busybox:2', command: ['sleep', '600'], replicas, ...extra })
  const deployed = await api<{ deployed: string[], errors: unknown[] }>(kernel, 'POST', '/api/v1/deploy', {
    token, body: { services: [service('api', 6, { port: 8080 }), service('cache', 2, { placement: { node: 'web' } })] }
  })
  t.same(deployed.body, { deployed: ['api', 'cache'], errors: [], changed: ['api', 'cache'], removed: [] })
  const placed = await nodesBy()
  t.same(placed.get('web')?.placed, [{ service: 'api', replicas: [3, 6], running: 2 }, { service: 'cache', replicas: [1, 2], running: 2 }], 'cache on "web" exactly')
  t.same(placed.get('web-2')?.placed, [{ service: 'api', replicas: [2, 5], running: 2 }], 'none of cache on "web-2"')
  t.same(placed.get('db')?.placed, [{ service: 'api', replicas: [1, 4], running: 2 }])
  t.equal(placed.get('leader')?.replicas, 0, 'the drained leader runs nothing')

  const status = async (): Promise<Map<string, ServiceStatus>> => new Map((await api<{ services: ServiceStatus[] }>(kernel, 'GET', '/api/v1/status', { token })).body.services.map(s => [s.name, s]))
  const api1 = (await status()).get('api')
  t.match(api1, { status: 'running', replicas: 6, running_replicas: 6 })
  t.same(api1?.containers.map(c => [c.replica, c.node]), [[1, 'db'], [2, 'web-2'], [3, 'web'], [4, 'db'], [5, 'web-2'], [6, 'web']], 'status says where each replica runs')

  const drained = await api<{ moved: Array<{ service: string, replica: number, to: string }>, unplaced: unknown[], node: NodeRecord }>(kernel, 'POST', '/api/v1/cluster/nodes/db/drain', { token })
  t.equal(drained.status, 200)
  t.same(drained.body.moved, [{ service: 'api', replica: 1, to: 'web-2' }, { service: 'api', replica: 4, to: 'web' }], 'the drained node\'s replicas move to the others')
  t.match(drained.body.node, { scheduling: 'drained', replicas: 0 })
  t.same(sims.agents[2].containers, [], 'the drained agent was told to remove them')
  t.same((await status()).get('api')?.containers.map(c => c.node).sort(), ['web', 'web', 'web', 'web-2', 'web-2', 'web-2'])
  const undrained = await api<{ node: NodeRecord }>(kernel, 'POST', `/api/v1/cluster/nodes/${drained.body.node.id}/undrain`, { token })
  t.match(undrained.body.node, { name: 'db', scheduling: 'active', replicas: 0 }, 'undrain by id; nothing moves back')
  const scaled = await api(kernel, 'POST', '/api/v1/services/api/scale', { token, body: { replicas: 8 } })
  t.equal(scaled.status, 200)
  t.same((await nodesBy()).get('db')?.placed, [{ service: 'api', replicas: [7, 8], running: 2 }], 'new replicas go to the emptiest node')

  // "web" goes away: its pinned cache waits for it (503 on a change), its api replicas move after the grace period.
  const web = sims.agents[0]
  await web.link.stop()
  await pollUntil(async () => (await nodesBy()).get('web')?.status === 'offline', { what: 'web offline' })
  const refused = await api<{ error: string }>(kernel, 'POST', '/api/v1/services/cache/redeploy', { token })
  t.equal(refused.status, 503, 'a redeploy of the service pinned to the offline node answers 503')
  t.match(refused.body.error, /^service "cache" is placed on node "web", which is offline \(last heartbeat \d+ s ago\)$/)
  const change = await api(kernel, 'POST', '/api/v1/deploy', { token, body: { services: [service('cache', 2, { placement: { node: 'web' }, command: ['sleep', '601'] })] } })
  t.equal(change.status, 503, 'so does a deploy that changes it')
  const unchanged = await api(kernel, 'POST', '/api/v1/deploy', { token, body: { services: [service('cache', 2, { placement: { node: 'web' } })] } })
  t.equal(unchanged.status, 200, 'a deploy that leaves it as it is goes through')
  t.match((await status()).get('api'), { status: 'degraded', running_replicas: 5 }, 'its three api replicas count as not running meanwhile')
  await pollUntil(async () => (await nodesBy()).get('web')?.rescheduled === true && (await status()).get('api')?.running_replicas === 8, { what: 'api rescheduled', timeout: 10_000 })
  const after = await nodesBy()
  t.same(after.get('web')?.placed, [{ service: 'cache', replicas: [1, 2], running: 0 }], 'only the pinned replicas stay with the offline node')

  const back = join(['web'])
  await pollUntil(async () => (await nodesBy()).get('web')?.status === 'ready' && back.agents[0].applied.length > 0, { what: 'web back' })
  t.same(back.agents[0].containers.map(c => `${c.service}-${c.replica}`), ['cache-1', 'cache-2'], 'the returning node runs only what is placed on it')
  const all = [...started.flatMap(s => s.agents)].filter(a => a.link.state === 'connected').flatMap(a => a.containers.map(c => `${c.service}-${c.replica}`))
  t.equal(new Set(all).size, all.length, 'no replica runs twice')
  t.equal(all.length, 10, 'eight api replicas and two cache replicas')
  t.match((await status()).get('cache'), { status: 'running', running_replicas: 2 })
})

t.test('an agent reads its token file again at each attempt; a leader stopping closes its channel at once (stand-in engine)', async t => {
  const leader = await reconcilerKernel(t, busyboxEngine(), {
    plugins: [cluster, nodes],
    extra: { node_name: 'leader' },
    sections: { cluster: { heartbeat_interval_secs: 0.2, offline_after_secs: 1 } }
  })
  const stateDir = tempDir(t)
  const tokenFile = join(stateDir, 'join.token')
  writeFileSync(tokenFile, 'not-an-agent-token\n', { mode: 0o600 })
  const logged: Array<{ msg: string, code?: number, reason?: string }> = []
  const logger = pino({ level: 'info' }, { write: (line: string) => { logged.push(JSON.parse(line) as { msg: string }) } })
  await reconcilerKernel(t, busyboxEngine(), {
    plugins: [cluster, nodes],
    stateDir,
    logger,
    extra: { node_name: 'agent-1' },
    sections: { cluster: { join: leader.kernel.url('control').host } }
  })
  const refusal = await pollUntil(() => logged.find(line => line.msg.startsWith('the leader refused the join: 401')), { what: 'the wrong token refused' })
  t.match(refusal.msg, tokenFile, `the refusal names the token file: ${refusal.msg}`)

  writeFileSync(tokenFile, `${await tokenFor(leader.kernel, 'agent')}\n`)
  const agentReady = async (): Promise<boolean> => (await api<Info>(leader.kernel, 'GET', '/api/v1/cluster/info', { token: leader.token })).body.nodes.some(n => n.name === 'agent-1' && n.status === 'ready')
  await pollUntil(agentReady, { what: 'the agent to join with the token written since', timeout: 15_000 })
  t.pass('the agent joined with the rotated token, without a restart')

  await leader.kernel.stop()
  t.equal(leader.kernel.state, 'stopped', 'the leader stopped with an agent joined')
  const closed = await pollUntil(() => logged.find(line => line.msg === 'channel to the leader closed'), { what: 'the agent to see its channel closed' })
  t.match(closed, { code: 1001, reason: 'the leader is stopping' }, 'the agent was told why, with a close frame')
})
