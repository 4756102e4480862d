// The node record of GET /api/v1/cluster/info on a leader: who the node is, its state and heartbeat,
// its engine and capacity, and what runs there (docs/api.md, "Node record").
import { parseMemory, type ServiceSpec } from '../reconciler/api.js'
import type { Assignment } from './placement.js'
import type { NodeEntry, NodeRole, NodeState } from './registry.js'

export interface NodeRecord {
  id: string
  name: string
  role: NodeRole
  /** Leader: its control listener's URL. Agent: where its replicas are reached (advertised, or its channel's address). */
  address: string
  /** ready, unhealthy (heartbeats arrive, its engine does not answer) or offline (no heartbeat within offline_after). */
  status: NodeState
  /** active, or drained (takes no replicas). */
  scheduling: 'active' | 'drained'
  /** ISO time of the last heartbeat; null when none since the leader started. */
  last_heartbeat: string | null
  /** ISO time it stopped being ready, while it is not. */
  unavailable_since?: string
  /** Its replicas were placed elsewhere: it was unavailable longer than reschedule_after. */
  rescheduled?: boolean
  engine: { healthy: boolean, error?: string, kind?: string, version?: string, containers_running?: number }
  /** What its engine reports: cpus and memory (0: unknown). */
  capacity: { cpus: number, memory_bytes: number }
  /** What the replicas placed there reserve through `resources`. */
  allocated: { cpus: number, memory_bytes: number }
  /** Services with replicas placed there. */
  services: number
  /** Replicas placed there, in all. */
  replicas: number
  /** Which replicas of which service are placed there, and how many of them run. */
  placed: Array<{ service: string, replicas: number[], running: number }>
  version: string
  joined_at: string
}

export function nodeRecord (node: NodeEntry, assignment: Assignment, specs: ReadonlyMap<string, ServiceSpec>, running: (service: string, replica: number) => boolean): NodeRecord {
  const placed: NodeRecord['placed'] = []
  const allocated = { cpus: 0, memory_bytes: 0 }
  for (const [service, replicas] of [...assignment].sort(([a], [b]) => a.localeCompare(b))) {
    const mine = [...replicas].filter(([, n]) => n === node.name).map(([r]) => r).sort((a, b) => a - b)
    if (mine.length === 0) continue
    placed.push({ service, replicas: mine, running: mine.filter(r => running(service, r)).length })
    const spec = specs.get(service)
    allocated.cpus += (spec?.resources?.cpu ?? 0) * mine.length
    allocated.memory_bytes += (spec?.resources?.memory === undefined ? 0 : parseMemory(spec.resources.memory) ?? 0) * mine.length
  }
  const { healthy, error, kind, version, containers_running: containersRunning } = node.engine
  return {
    id: node.id,
    name: node.name,
    role: node.role,
    address: node.address,
    status: node.state,
    scheduling: node.drained ? 'drained' : 'active',
    last_heartbeat: node.lastHeartbeat === undefined ? null : new Date(node.lastHeartbeat).toISOString(),
    ...(node.unavailableSince !== undefined && node.state !== 'ready' && { unavailable_since: new Date(node.unavailableSince).toISOString() }),
    ...(node.expired && { rescheduled: true }),
    engine: {
      healthy,
      ...(error !== undefined && { error }),
      ...(kind !== undefined && { kind }),
      ...(version !== undefined && { version }),
      ...(containersRunning !== undefined && { containers_running: containersRunning })
    },
    capacity: { cpus: node.engine.cpus ?? 0, memory_bytes: node.engine.memory_bytes ?? 0 },
    allocated,
    services: placed.length,
    replicas: placed.reduce((n, p) => n + p.replicas.length, 0),
    placed,
    version: node.version,
    joined_at: node.joined_at
  }
}
