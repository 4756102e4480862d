// The leader's scheduler without a channel: where an agent's replicas are reached from the leader (a
// loopback or wildcard publish address becomes the agent's own), and replicas of an offline node shown
// as not running, without an address the proxy could route to.
import t from 'tap'
import pino from 'pino'
import { openPluginState } from '../../../kernel/store.js'
import type { LeaderChannel } from '../../../plugins/nodes/leader.js'
import { NodeRegistry, type StoredNode } from '../../../plugins/nodes/registry.js'
import { ClusterScheduler } from '../../../plugins/nodes/assignments.js'
import type { ServiceSpec } from '../../../plugins/reconciler/spec.js'
import { tempDir } from '../../support/tmp.js'

const spec = (name: string, node: string): ServiceSpec => ({ name, project: 'p', image: 'x:1', runtime: 'docker', replicas: 1, port: 8080, depends_on: [], extra_ports: [], env: {}, volumes: [], mounts: [], internal: false, placement: { node } })

t.test('an agent publishing on loopback is reached at its own address; an offline one is not routed to', async t => {
  const { store, close } = openPluginState(tempDir(t), 'cluster')
  t.teardown(close)
  const registry = new NodeRegistry(store.db<StoredNode, string>('nodes'), { offlineAfterMs: 60_000, rescheduleAfterMs: 60_000 })
  await registry.registerLeader({ id: 'ffffffffffffffff', name: 'leader', address: 'http://127.0.0.1:6880', version: '0' }, { healthy: true })
  const container = (service: string, host: string): never => ({ runtime: 'docker', id: `${service}-id`, name: `p-${service}-1`, service, project: 'p', replica: 1, hash: 'h', imageId: 'i', running: true, state: 'running', address: { host, port: 32768 } }) as never
  const hello = (id: string, name: string, containers: never[]): never => ({ type: 'hello', protocol: 1, id, name, version: '0', engine: { healthy: true }, containers }) as never
  await registry.join(hello('aaaaaaaaaaaaaaaa', 'remote', [container('web', '127.0.0.1')]), '10.0.0.5')
  await registry.join(hello('bbbbbbbbbbbbbbbb', 'advertised', [container('api', '192.168.1.9')]), '10.0.0.6')
  registry.tick()
  const channel = { connected: () => true } as unknown as LeaderChannel
  const specs = [spec('web', 'remote'), spec('api', 'advertised')]
  const scheduler = new ClusterScheduler({ registry, channel, db: store.db('assignment'), store, leaderName: () => 'leader', resolveEnv: s => s.env, specs: () => specs, deployTimeoutMs: 1000, requestTimeoutMs: 1000, log: pino({ level: 'silent' }) })
  await scheduler.schedule({ trigger: 'deploy', declared: specs, desired: specs, changing: new Set(), removed: [], pull: 'missing', force: false })
  t.same(scheduler.remoteContainers().map(c => [c.service, c.node, c.address]), [
    ['api', 'advertised', { host: '192.168.1.9', port: 32768 }],
    ['web', 'remote', { host: '10.0.0.5', port: 32768 }]
  ], 'a loopback publish address is replaced by the agent\'s own; another is kept')
  registry.disconnect('aaaaaaaaaaaaaaaa')
  registry.tick()
  t.match(scheduler.remoteContainers().find(c => c.service === 'web'), { running: false, state: 'unknown', address: undefined }, 'an offline node\'s replica is not running and has no address')
  t.match(scheduler.unavailable(spec('web', 'remote')), /^service "web" is placed on node "remote", which is offline \(last heartbeat \d+ s ago\)$/)
  t.equal(scheduler.unavailable(spec('api', 'advertised')), undefined)
})
