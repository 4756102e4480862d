// Drain refusals on a real leader whose engine is the stand-in (test/support/fake-engine.ts; placement
// and drains are the subject, not Docker): draining the only node would stop every replica, so
// it is refused with 409 naming them (the API, and the CLI in one line with exit 1) and nothing
// changes; --force (?force=true) drains all the same, and undrain brings them back. With a simulated
// agent, only the replicas no other node can take (pinned to it) stop a drain. The calls send
// `Content-Type: application/json` without a body, as many clients do.
import t from 'tap'
import { simulateAgents } from '../../../bench/cluster-sim.js'
import type { NodeRecord } from '../../../plugins/nodes/node-record.js'
import cluster from '../../../plugins/cluster/index.js'
import nodes from '../../../plugins/nodes/index.js'
import type { ServiceStatus } from '../../../plugins/reconciler/status.js'
import { runCli } from '../../support/cli.js'
import { BUSYBOX_IMAGE as image } from '../../support/docker.js'
import { busyboxEngine } from '../../support/fake-engine.js'
import { reconcilerKernel, tokenFor, type ReconcilerInstance } from '../../support/orchestration.js'
import { pollUntil } from '../../support/poll.js'

interface DrainAnswer { node: NodeRecord, moved: Array<{ service: string, replica: number, to: string }>, unplaced: Array<{ service: string, replica: number }> }

/** A control API call that says `Content-Type: application/json` whether or not it has a body. */
async function call<T> (instance: ReconcilerInstance, method: string, path: string, body?: unknown): Promise<{ status: number, body: T }> {
  const response = await fetch(new URL(path, instance.kernel.url('control')), {
    method, headers: { authorization: `Bearer ${instance.token}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body)
  })
  return { status: response.status, body: await response.json() as T }
}

const sleeper = (project: string, name: string, replicas: number, extra: Record<string, unknown> = {}): Record<string, unknown> =>
  ({ name, project, image, command: ['/bin/busybox', 'sleep', '600'], replicas, ...extra })

t.test('draining the only node is refused, naming every replica it would stop, unless forced (stand-in engine)', async t => {
  const engine = busyboxEngine()
  const leader = await reconcilerKernel(t, engine, { plugins: [cluster, nodes], extra: { node_name: 'solo' }, sections: { cluster: { heartbeat_interval_secs: 0.2, offline_after_secs: 1 } } })
  const deployed = await call<{ errors: unknown[] }>(leader, 'POST', '/api/v1/deploy', { services: [sleeper(leader.project, 'web', 2), sleeper(leader.project, 'cache', 1)] })
  t.same([deployed.status, deployed.body.errors], [200, []])
  const running = async (): Promise<number> => [...engine.containers().values()].filter(c => c.state === 'running').length
  t.equal(await running(), 3)

  const refused = await call<{ error: string }>(leader, 'POST', '/api/v1/cluster/nodes/solo/drain')
  t.same(refused, { status: 409, body: { error: 'draining node "solo" would stop 3 replicas that no other node can take (pinned to it, or no other node ready with room): cache (replica 1), web (replicas 1, 2); add a node, or drain with --force (?force=true) to stop them', code: 'BERTH_DRAIN_WOULD_STRAND' } })
  t.equal(await running(), 3, 'nothing stopped')
  const info = await call<{ nodes: NodeRecord[] }>(leader, 'GET', '/api/v1/cluster/info')
  t.match(info.body.nodes[0], { name: 'solo', scheduling: 'active', replicas: 3 }, 'the node is not drained')

  const env = { BERTH_URL: leader.kernel.url('control').href, BERTH_TOKEN: leader.token }
  const cli = await runCli(['cluster', 'drain', 'solo'], { env })
  t.same([cli.code, cli.stdout, cli.stderr], [1, '', `berth: ${refused.body.error}\n`], 'the CLI: one line, exit 1')
  const bad = await call<{ error: string }>(leader, 'POST', '/api/v1/cluster/nodes/solo/drain?force=yes')
  t.same(bad, { status: 400, body: { error: 'force must be true or false, got "yes"', code: 'BERTH_BAD_REQUEST' } })
  t.equal((await call(leader, 'POST', '/api/v1/cluster/nodes/solo/drain', {})).status, 409, 'a body without force is refused the same')

  const forced = await runCli(['cluster', 'drain', 'solo', '--force'], { env })
  t.same([forced.code, forced.stderr], [0, ''])
  const [head, ...lines] = forced.stdout.trimEnd().split('\n')
  t.same([head, lines.sort()], ['node solo is drained', ['  cache replica 1: no node takes it', '  web replica 1: no node takes it', '  web replica 2: no node takes it']])
  t.equal(await running(), 0, 'forced: the replicas are stopped')

  const undrained = await call<DrainAnswer>(leader, 'POST', '/api/v1/cluster/nodes/solo/undrain')
  t.match(undrained, { status: 200, body: { node: { name: 'solo', scheduling: 'active' } } })
  await pollUntil(async () => (await call<{ services: ServiceStatus[] }>(leader, 'GET', '/api/v1/status')).body.services.every(s => s.running_replicas === s.replicas) && await running() === 3, { what: 'every replica back after undrain' })
  t.pass('undrain places them again')
})

t.test('with an agent, only the replicas pinned to the node being drained refuse the drain (stand-in engine)', async t => {
  const leader = await reconcilerKernel(t, busyboxEngine(), { plugins: [cluster, nodes], extra: { node_name: 'leader' }, sections: { cluster: { heartbeat_interval_secs: 0.1, offline_after_secs: 0.6, reschedule_after_secs: 30 } } })
  const agents = simulateAgents({ leader: leader.kernel.url('control').host, token: await tokenFor(leader.kernel, 'agent'), count: 1, names: ['a1'], heartbeatMs: 100 })
  t.teardown(async () => { await agents.stop() })
  await pollUntil(async () => (await call<{ nodes: NodeRecord[] }>(leader, 'GET', '/api/v1/cluster/info')).body.nodes.some(n => n.name === 'a1' && n.status === 'ready'), { what: 'a1 ready' })
  const deployed = await call<{ errors: unknown[] }>(leader, 'POST', '/api/v1/deploy', { services: [sleeper(leader.project, 'api', 2), sleeper(leader.project, 'pin', 1, { placement: { node: 'a1' } })] })
  t.same([deployed.status, deployed.body.errors], [200, []])

  const refused = await call<{ error: string }>(leader, 'POST', '/api/v1/cluster/nodes/a1/drain')
  t.equal(refused.status, 409)
  t.match(refused.body.error, /^draining node "a1" would stop 1 replica that no other node can take \(.*\): pin \(replica 1\); /, 'its api replica could move: only the pinned one is named')
  t.same(agents.agents[0].containers.map(c => `${c.service}-${c.replica}`).sort(), ['api-2', 'pin-1'], 'the agent still runs both')

  const forced = await call<DrainAnswer>(leader, 'POST', '/api/v1/cluster/nodes/a1/drain?force=true')
  t.equal(forced.status, 200)
  t.same([forced.body.moved, forced.body.unplaced], [[{ service: 'api', replica: 2, to: 'leader' }], [{ service: 'pin', replica: 1 }]])
  t.same(agents.agents[0].containers, [], 'forced: the agent runs nothing')
})
