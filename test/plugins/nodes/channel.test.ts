// The leader–agent channel over a real WebSocket on loopback: agent tokens only, hello, heartbeats and
// engine health, desired states applied and acknowledged, requests, a name taken, the leader gone and
// back (the agent reconnects and gets its desired state again), and an agent whose process dies.
import t from 'tap'
import Fastify from 'fastify'
import websocket from '@fastify/websocket'
import { open } from 'lmdb'
import { join } from 'node:path'
import pino from 'pino'
import { Unauthorized, Forbidden } from '../../../kernel/index.js'
import { AgentLink, type AgentDeps } from '../../../plugins/nodes/agent.js'
import { LeaderChannel } from '../../../plugins/nodes/leader.js'
import { JOIN_PATH, type DesiredMessage, type EngineReport, type ReportedContainer } from '../../../plugins/nodes/protocol.js'
import { NodeRegistry, type StoredNode } from '../../../plugins/nodes/registry.js'
import { pollUntil } from '../../support/poll.js'
import { tempDir } from '../../support/tmp.js'

interface Teardown { teardown(fn: () => void | Promise<void>): void }

const AGENT_TOKEN = 'agent-secret'
const log = pino({ level: 'silent' })

async function leaderOn (t: Teardown, port = 0): Promise<{ url: string, port: number, registry: NodeRegistry, channel: LeaderChannel, close: () => Promise<void>, events: string[] }> {
  const env = open({ path: join(tempDir(t), 'db'), compression: false })
  t.teardown(async () => { await env.close() })
  const registry = new NodeRegistry(env.openDB<StoredNode, string>({ name: 'nodes' }), { offlineAfterMs: 600, rescheduleAfterMs: 60_000 })
  await registry.registerLeader({ id: 'ffffffffffffffff', name: 'leader', address: 'http://127.0.0.1', version: '0' }, { healthy: true })
  const events: string[] = []
  const channel = new LeaderChannel({
    registry,
    log,
    cluster: 'test',
    heartbeatIntervalMs: 100,
    requireAgent: async request => {
      const header = request.headers.authorization
      if (header === undefined) throw new Unauthorized('missing bearer token (Authorization: Bearer <token>)')
      if (header !== `Bearer ${AGENT_TOKEN}`) throw new Forbidden('not an agent token')
    },
    desiredFor: () => ({ type: 'desired', generation: 1, services: [], force: [], pull: 'missing' }),
    changed: (node, what) => { events.push(`${node.name}:${what}`) }
  })
  const app = Fastify()
  app.setErrorHandler(async (error: Error & { statusCode?: number }, _request, reply) => { reply.code(error.statusCode ?? 500); return { error: error.message } })
  // As the kernel's control listener does for plugins with WebSocket routes.
  await app.register(websocket, { preClose: async () => { channel.close() } })
  await app.register(channel.routes(), { prefix: '/api/v1' })
  await app.listen({ host: '127.0.0.1', port })
  const bound = (app.server.address() as { port: number }).port
  let closed = false
  const close = async (): Promise<void> => {
    if (closed) return
    closed = true
    await app.close()
  }
  t.teardown(close)
  return { url: `ws://127.0.0.1:${bound}${JOIN_PATH}`, port: bound, registry, channel, close, events }
}

interface FakeAgent {
  link: AgentLink
  applied: DesiredMessage[]
  engine: EngineReport
  containers: ReportedContainer[]
  /** Heartbeats stop (the engine call never returns), the connection stays. */
  hang: boolean
}

function agent (t: Teardown, url: string, options: { id: string, name: string, token?: string }): FakeAgent {
  const state: FakeAgent = { link: undefined as unknown as AgentLink, applied: [], engine: { healthy: true, cpus: 2, memory_bytes: 2 ** 30 }, containers: [], hang: false }
  const deps: AgentDeps = {
    urls: [url],
    token: () => options.token ?? AGENT_TOKEN,
    identity: async () => ({ id: options.id, name: options.name, version: '0' }),
    engine: async () => await new Promise<EngineReport>(resolve => {
      const check = (): void => { if (state.hang) setTimeout(check, 20); else resolve(state.engine) }
      check()
    }),
    containers: async () => state.containers,
    apply: async desired => {
      state.applied.push(desired)
      state.containers = desired.services.flatMap(s => s.replicas.map(replica => ({
        runtime: 'docker', id: `${options.name}-${s.spec.name}-${replica}`, name: `p-${s.spec.name}-${replica}`, service: s.spec.name, project: 'p',
        replica, hash: 'h', imageId: 'i', running: true, state: 'running', address: { host: '127.0.0.1', port: 1000 + replica }
      })))
      return { deployed: desired.services.map(s => s.spec.name), errors: [], changed: desired.services.map(s => s.spec.name), removed: [] }
    },
    handle: async request => request.op === 'logs' ? [{ label: options.name, text: `logs of ${request.service ?? ''}\n` }] : 0,
    log,
    heartbeatIntervalMs: 100,
    reconnectMinMs: 50,
    reconnectMaxMs: 200
  }
  state.link = new AgentLink(deps)
  t.teardown(async () => { await state.link.stop() })
  state.link.start()
  return state
}

const spec = { name: 'web', project: 'p', image: 'x:1', runtime: 'docker', replicas: 2, depends_on: [], extra_ports: [], env: {}, volumes: [], mounts: [], internal: false }

t.test('an agent joins, heartbeats, applies its desired state and answers requests', async t => {
  const leader = await leaderOn(t)
  const a = agent(t, leader.url, { id: 'aaaaaaaaaaaaaaaa', name: 'a' })
  await pollUntil(() => a.link.state === 'connected', { what: 'agent a connected' })
  const node = leader.registry.byName('a')
  t.ok(node, 'the agent is registered')
  t.equal(node?.address, '127.0.0.1', 'its address is where its channel came from')
  await pollUntil(() => (node?.heartbeats ?? 0) >= 3, { what: 'heartbeats' })
  leader.registry.tick()
  t.equal(node?.state, 'ready')
  t.same(a.applied.map(d => d.generation), [1], 'the desired state is sent on join')

  const applied = await leader.channel.apply(node?.id ?? '', { type: 'desired', generation: 2, services: [{ spec, replicas: [2], env: {} }], force: [], pull: 'missing' }, 5000)
  t.same(applied.result.deployed, ['web'])
  t.same(node?.containers.map(c => [c.service, c.replica]), [['web', 2]], 'the leader knows what the agent runs')
  t.same(await leader.channel.request(node?.id ?? '', { op: 'logs', service: 'web', tail: 10 }, 5000), [{ label: 'a', text: 'logs of web\n' }])

  a.engine = { healthy: false, error: 'container engine unavailable at /x.sock: ENOENT' }
  await pollUntil(() => { leader.registry.tick(); return node?.state === 'unhealthy' }, { what: 'unhealthy' })
  t.pass('an agent whose engine does not answer is unhealthy, not ready')
  a.engine = { healthy: true }
  await pollUntil(() => { leader.registry.tick(); return node?.state === 'ready' }, { what: 'ready again' })
})

t.test('joining needs an agent token; a name another node holds is refused', async t => {
  const leader = await leaderOn(t)
  const wrong = agent(t, leader.url, { id: 'bbbbbbbbbbbbbbbb', name: 'b', token: 'admin-token' })
  await pollUntil(() => wrong.link.lastError.includes('403'), { what: 'refusal' })
  t.match(wrong.link.lastError, /^the leader refused the join: 403 not an agent token/)
  t.equal(leader.registry.byName('b'), undefined)
  const plain = await fetch(`http://127.0.0.1:${leader.port}${JOIN_PATH}`, { headers: { authorization: `Bearer ${AGENT_TOKEN}` } })
  t.same([plain.status, plain.headers.get('upgrade'), await plain.json()], [426, 'websocket', { error: 'the agents\' channel is a WebSocket: send Upgrade: websocket' }], 'plain HTTP is told to upgrade')

  const first = agent(t, leader.url, { id: 'cccccccccccccccc', name: 'web' })
  await pollUntil(() => first.link.state === 'connected')
  const second = agent(t, leader.url, { id: 'dddddddddddddddd', name: 'web' })
  await pollUntil(() => second.link.lastError.includes('4009'), { what: 'name conflict' })
  t.match(second.link.lastError, /4009: node name "web" is taken by node cccccccccccccccc/)
  const leaderNamed = agent(t, leader.url, { id: 'eeeeeeeeeeeeeeee', name: 'leader' })
  await pollUntil(() => leaderNamed.link.lastError.includes('4009'), { what: 'the leader\'s name refused' })
  t.equal(leader.registry.all().length, 2, 'only the leader and the first "web"')
})

t.test('a dropped channel: offline at once; the agent reconnects to a restarted leader and gets its state again', async t => {
  const leader = await leaderOn(t)
  const a = agent(t, leader.url, { id: 'aaaaaaaaaaaaaaaa', name: 'a' })
  await pollUntil(() => a.link.state === 'connected')
  await leader.close()
  await pollUntil(() => a.link.state !== 'connected', { what: 'the agent notices' })
  leader.registry.tick()
  t.equal(leader.registry.byName('a')?.state, 'offline', 'the leader marks it offline')
  const again = await leaderOn(t, leader.port)
  await pollUntil(() => a.link.state === 'connected' && again.registry.byName('a') !== undefined, { what: 'reconnected', timeout: 5000 })
  await pollUntil(() => a.applied.length === 2, { what: 'the desired state again' })
  t.same(a.applied.map(d => d.generation), [1, 1], 'a new session applies what the leader sends, whatever its generation')
})

t.test('an agent that stops heartbeating is offline after offline_after, though its connection stays open', async t => {
  const leader = await leaderOn(t)
  const a = agent(t, leader.url, { id: 'aaaaaaaaaaaaaaaa', name: 'a' })
  await pollUntil(() => a.link.state === 'connected')
  const node = leader.registry.byName('a')
  await pollUntil(() => { leader.registry.tick(); return node?.state === 'ready' })
  a.hang = true
  const since = Date.now()
  await pollUntil(() => { leader.registry.tick(); return node?.state === 'offline' }, { what: 'offline', timeout: 5000 })
  t.ok(Date.now() - since >= 400, 'not before offline_after (600 ms) has nearly passed')
  t.ok(leader.channel.connected(node?.id ?? ''), 'the channel itself is still open')
  a.hang = false
  await pollUntil(() => { leader.registry.tick(); return node?.state === 'ready' }, { what: 'ready again' })
})
