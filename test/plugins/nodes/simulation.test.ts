// Fifty agents: a real leader (`berth server`) and 50 simulated agents in this process speaking the
// real protocol on loopback (bench/cluster-sim.ts). They join and heartbeat; 500 replicas of 50
// services are placed ten to a node, each replica once; five agents go away and their replicas are
// placed on the other 45 after the grace period, still each once. Times are printed as comments.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { simulateAgents } from '../../../bench/cluster-sim.js'
import type { NodeRecord } from '../../../plugins/nodes/node-record.js'
import type { ServiceStatus } from '../../../plugins/reconciler/status.js'
import { requireComponent } from '../../support/component.js'
import { dockerEngine } from '../../support/docker.js'
import { serverDir, startServer, testInstance } from '../../support/orchestration.js'
import { pollUntil } from '../../support/poll.js'

const docker = await requireComponent(t, 'docker', dockerEngine)
const AGENTS = 50
const SERVICES = 50
const REPLICAS = 10

if (docker !== undefined) {
  t.test('50 agents join, heartbeat and take 500 replicas; five leave and their replicas move', async t => {
    const server = await serverDir(t, ['tokens', 'secrets', 'reconciler', 'cluster', 'nodes'], [
      '[reconciler]', `instance = "${testInstance()}"`, 'network = "berth-test"', 'node_name = "leader"', '',
      '[cluster]', 'heartbeat_interval_secs = 0.5', 'offline_after_secs = 2', 'reschedule_after_secs = 3', 'schedule_leader = false', ''
    ].join('\n'))
    await startServer(t, server)
    const admin = readFileSync(join(server.stateDir, 'admin.token'), 'utf8').trim()
    const call = async <T>(method: string, path: string, body?: unknown): Promise<{ status: number, body: T }> => {
      const response = await fetch(`${server.url}${path}`, { method, headers: { authorization: `Bearer ${admin}`, ...(body !== undefined && { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) })
      return { status: response.status, body: await response.json() as T }
    }
    const token = (await call<{ token: string }>('POST', '/api/v1/tokens', { name: 'agents', role: 'agent' })).body.token
    const nodes = async (): Promise<NodeRecord[]> => (await call<{ nodes: NodeRecord[] }>('GET', '/api/v1/cluster/info')).body.nodes

    let started = performance.now()
    const cluster = simulateAgents({ leader: `127.0.0.1:${server.port}`, token, count: AGENTS, heartbeatMs: 500 })
    t.teardown(async () => { await cluster.stop() })
    await pollUntil(async () => (await nodes()).filter(n => n.role === 'agent' && n.status === 'ready').length === AGENTS, { what: `${AGENTS} agents ready`, timeout: 30_000 })
    t.comment(`${AGENTS} agents joined in ${Math.round(performance.now() - started)} ms`)

    const heartbeats = async (): Promise<number> => Number(/^berth_cluster_heartbeats_total (\d+)/m.exec(await (await fetch(`${server.url}/metrics`)).text())?.[1] ?? 0)
    const before = await heartbeats()
    await pollUntil(async () => await heartbeats() >= before + 2 * AGENTS, { what: 'two rounds of heartbeats', timeout: 10_000 })
    t.pass('the leader counts every agent\'s heartbeats')

    const services = Array.from({ length: SERVICES }, (_, i) => ({ name: `svc-${i + 1}`, project: 'sim', image: 'berth-test/busybox:2', port: 8080, replicas: REPLICAS }))
    started = performance.now()
    const deployed = await call<{ deployed: string[], errors: unknown[] }>('POST', '/api/v1/deploy', { services })
    t.comment(`${SERVICES * REPLICAS} replicas placed on ${AGENTS} agents and applied in ${Math.round(performance.now() - started)} ms`)
    t.same(deployed.body.errors, [])
    t.equal(deployed.body.deployed.length, SERVICES)
    const placed = (await nodes()).filter(n => n.role === 'agent')
    t.same([...new Set(placed.map(n => n.replicas))], [REPLICAS], 'ten replicas on every agent')
    t.ok(placed.every(n => n.placed.every(p => p.replicas.length === 1)), 'no agent runs two replicas of one service')
    const running = (): string[] => cluster.agents.filter(a => a.link.state === 'connected').flatMap(a => a.containers.map(c => `${c.service}/${c.replica}`))
    t.equal(running().length, SERVICES * REPLICAS)
    t.equal(new Set(running()).size, SERVICES * REPLICAS, 'each replica runs once')
    const status = await call<{ services: ServiceStatus[] }>('GET', '/api/v1/status')
    t.ok(status.body.services.every(s => s.status === 'running' && s.running_replicas === REPLICAS), 'status: every service runs all its replicas')

    const leaving = cluster.agents.slice(0, 5)
    started = performance.now()
    await Promise.all(leaving.map(async a => { await a.link.stop() }))
    await pollUntil(async () => {
      const all = await nodes()
      return leaving.every(a => all.find(n => n.name === a.name)?.replicas === 0) && running().length === SERVICES * REPLICAS
    }, { what: 'replicas of the five placed elsewhere', timeout: 30_000 })
    t.comment(`five agents left; their ${5 * REPLICAS} replicas ran elsewhere ${Math.round(performance.now() - started)} ms later (grace period 3 s)`)
    t.equal(new Set(running()).size, SERVICES * REPLICAS, 'still each replica once')
    const after = (await nodes()).filter(n => n.role === 'agent' && n.status === 'ready')
    t.equal(after.length, AGENTS - 5)
    t.ok(after.every(n => n.replicas >= REPLICAS && n.replicas <= REPLICAS + 2), 'spread over the 45 that remain')
  })
}
