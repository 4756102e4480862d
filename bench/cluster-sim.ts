// Simulated agents: real channel clients (plugins/cluster/agent.ts, the real protocol over a WebSocket
// on loopback) whose engine is a stand-in: applying a desired state records its replicas as running
// containers (published on ports nobody listens on) at once. Used by the 50-agent test and the cluster
// benchmark; run alone it holds N agents against a leader until stdin closes:
//   node dist/bench/cluster-sim.js <leader host:port> <agent token> <count> [heartbeat ms]
import { createHash } from 'node:crypto'
import pino from 'pino'
import { AgentLink } from '../plugins/nodes/agent.js'
import { joinUrl } from '../plugins/nodes/setup.js'
import type { DesiredMessage, ReportedContainer } from '../plugins/nodes/protocol.js'

export interface SimulatedAgent {
  name: string
  id: string
  link: AgentLink
  containers: ReportedContainer[]
  /** Desired states applied, newest last. */
  applied: DesiredMessage[]
}

export interface SimulatedCluster {
  agents: SimulatedAgent[]
  connected(): number
  stop(): Promise<void>
}

const GIB = 1024 ** 3

/** `count` agents named `<prefix>-<n>` (or `names`) joining the leader at `leader` (host:port, or several masters comma-separated) with `token`. */
export function simulateAgents (options: { leader: string, token: string, count: number, heartbeatMs: number, prefix?: string, names?: string[], cpus?: number, memoryBytes?: number }): SimulatedCluster {
  const log = pino({ level: 'silent' })
  const prefix = options.prefix ?? 'sim'
  const agents: SimulatedAgent[] = []
  const names = options.names ?? Array.from({ length: options.count }, (_, i) => `${prefix}-${i + 1}`)
  for (const name of names) {
    const id = createHash('sha256').update(name).digest('hex').slice(0, 16)
    const agent: SimulatedAgent = { name, id, link: undefined as unknown as AgentLink, containers: [], applied: [] }
    agent.link = new AgentLink({
      urls: options.leader.split(',').map(joinUrl),
      token: () => options.token,
      identity: async () => ({ id, name, version: 'sim' }),
      engine: async () => ({ healthy: true, kind: 'simulated', version: '0', containers_running: agent.containers.length, cpus: options.cpus ?? 8, memory_bytes: options.memoryBytes ?? 16 * GIB }),
      containers: async () => agent.containers,
      apply: async desired => {
        agent.applied.push(desired)
        const before = new Set(agent.containers.map(c => c.id))
        const servicesBefore = new Set(agent.containers.map(c => c.service))
        agent.containers = desired.services.flatMap(({ spec, replicas }) => replicas.map(replica => ({
          runtime: 'docker', id: `${id}-${spec.name}-${replica}`, name: `${spec.project}-${spec.name}-${replica}`,
          service: spec.name, project: spec.project, replica, hash: 'simulated', imageId: 'simulated', running: true, state: 'running',
          ...(spec.port !== undefined && { address: { host: '127.0.0.1', port: 1 } })
        })))
        const changed = new Set(agent.containers.filter(c => !before.has(c.id)).map(c => c.service))
        const services = new Set(desired.services.map(s => s.spec.name))
        return { deployed: [...services], errors: [], changed: [...changed], removed: [...servicesBefore].filter(s => !services.has(s)) }
      },
      handle: async request => request.op === 'logs' ? [{ label: name, text: '' }] : request.op === 'restart' ? [] : 0,
      log,
      heartbeatIntervalMs: options.heartbeatMs,
      reconnectMinMs: 100,
      reconnectMaxMs: 1000
    })
    agents.push(agent)
  }
  for (const agent of agents) agent.link.start()
  return {
    agents,
    connected: () => agents.filter(a => a.link.state === 'connected').length,
    stop: async () => { await Promise.all(agents.map(async a => { await a.link.stop() })) }
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [leader, token, count, heartbeat] = process.argv.slice(2)
  const cluster = simulateAgents({ leader, token, count: Number(count), heartbeatMs: Number(heartbeat ?? 1000) })
  const timer = setInterval(() => { process.stdout.write(`connected ${cluster.connected()}\n`) }, 1000)
  process.stdin.resume()
  process.stdin.on('end', () => {
    clearInterval(timer)
    void cluster.stop().then(() => { process.exit(0) })
  })
}
