// Placement: which node runs each replica. A pure function of the services, the nodes and the previous
// assignment — no clock, no randomness — so the same inputs always give the same cluster.
//
// The rule (plugins/nodes/README.md, Placement):
// 1. A service with `placement.node` runs every replica on the node of exactly that name (never a
//    prefix or substring). An unknown or drained node leaves its replicas unplaced; an offline one keeps
//    them (they run when it returns; changes to them answer 503 meanwhile).
// 2. Any other replica stays on the node it is on while that node keeps its replicas (it accepts work,
//    or it is offline or unhealthy for less than the grace period, and it is not drained).
// 3. The rest go, service by service in name order and replica by replica, to the node that accepts work
//    and has room for the replica's `resources` (cpu, memory) with the fewest replicas of that service,
//    then the fewest replicas in all, then the first name. Replicas above the desired count are dropped.
// Each replica is one key of the result: it can never be placed twice.

export interface PlacementNode {
  name: string
  /** Takes new replicas: ready, not drained. */
  accepts: boolean
  /** Keeps the replicas it has: it accepts, or it is unavailable for less than the grace period and not drained. */
  keeps: boolean
  drained: boolean
  /** What the node's engine reports; 0 means unknown (no limit). */
  capacity: { cpus: number, memory_bytes: number }
}

export interface PlacementService {
  name: string
  replicas: number
  /** `placement.node`: the exact name of the node that must run it. */
  node?: string
  /** What one replica reserves (`resources.cpu`, `resources.memory` in bytes); 0 when not given. */
  cpus: number
  memory_bytes: number
  /** Re-place its replicas that sit on nodes not accepting work now, without waiting for the grace period (the service is being changed). */
  moveFromUnavailable?: boolean
  /** Leave its replicas on the nodes they are on while those nodes exist (a change that does not touch this service). */
  keep?: boolean
}

/** Service name → replica index → node name. */
export type Assignment = Map<string, Map<number, string>>

export interface Unplaced {
  service: string
  replica: number
  reason: string
}

export interface PlacementResult {
  assignment: Assignment
  unplaced: Unplaced[]
}

interface Load {
  replicas: number
  cpus: number
  memory: number
  byService: Map<string, number>
}

function fits (node: PlacementNode, load: Load, service: PlacementService): boolean {
  const { cpus, memory_bytes: memory } = node.capacity
  if (cpus > 0 && service.cpus > 0 && load.cpus + service.cpus > cpus + 1e-9) return false
  if (memory > 0 && service.memory_bytes > 0 && load.memory + service.memory_bytes > memory) return false
  return true
}

function compareNames (a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

export function place (services: readonly PlacementService[], nodes: readonly PlacementNode[], previous: ReadonlyMap<string, ReadonlyMap<number, string>>): PlacementResult {
  const byName = new Map(nodes.map(n => [n.name, n]))
  const loads = new Map<string, Load>(nodes.map(n => [n.name, { replicas: 0, cpus: 0, memory: 0, byService: new Map() }]))
  const assignment: Assignment = new Map()
  const unplaced: Unplaced[] = []
  const ordered = [...services].sort((a, b) => compareNames(a.name, b.name))
  const assign = (service: PlacementService, replica: number, node: string): void => {
    let replicas = assignment.get(service.name)
    if (replicas === undefined) assignment.set(service.name, replicas = new Map())
    replicas.set(replica, node)
    const load = loads.get(node) as Load
    load.replicas++
    load.cpus += service.cpus
    load.memory += service.memory_bytes
    load.byService.set(service.name, (load.byService.get(service.name) ?? 0) + 1)
  }

  // Pinned replicas, and the others that stay where they are.
  const waiting: Array<[PlacementService, number]> = []
  for (const service of ordered) {
    if (service.node !== undefined) {
      const node = byName.get(service.node)
      for (let replica = 1; replica <= service.replicas; replica++) {
        if (node === undefined) unplaced.push({ service: service.name, replica, reason: `no node named "${service.node}" in the cluster` })
        else if (node.drained) unplaced.push({ service: service.name, replica, reason: `placed on node "${service.node}", which is drained` })
        else assign(service, replica, node.name)
      }
      continue
    }
    const before = previous.get(service.name)
    for (let replica = 1; replica <= service.replicas; replica++) {
      const node = byName.get(before?.get(replica) ?? '')
      const stays = node !== undefined && (service.keep === true || (service.moveFromUnavailable === true ? node.accepts : node.keeps))
      if (stays) assign(service, replica, node.name)
      else waiting.push([service, replica])
    }
  }

  // The rest: fewest replicas of the service, then fewest in all, then name; with room for its resources.
  // The scan over nodes runs once per replica: it reads plain arrays (loads by candidate index, and
  // this service's count per candidate, refreshed when the service changes), no map in the loop.
  const candidates = nodes.filter(n => n.accepts).sort((a, b) => compareNames(a.name, b.name))
  const candidateLoads = candidates.map(n => loads.get(n.name) as Load)
  const mine = new Int32Array(candidates.length)
  let current: PlacementService | undefined
  for (const [service, replica] of waiting) {
    if (service !== current) {
      current = service
      for (let i = 0; i < candidates.length; i++) mine[i] = candidateLoads[i].byService.get(service.name) ?? 0
    }
    let best = -1
    for (let i = 0; i < candidates.length; i++) {
      if ((service.cpus > 0 || service.memory_bytes > 0) && !fits(candidates[i], candidateLoads[i], service)) continue
      if (best === -1 || mine[i] < mine[best] || (mine[i] === mine[best] && candidateLoads[i].replicas < candidateLoads[best].replicas)) best = i
    }
    if (best !== -1) {
      assign(service, replica, candidates[best].name)
      mine[best]++
    } else {
      unplaced.push({
        service: service.name,
        replica,
        reason: candidates.length === 0
          ? 'no node takes replicas (every node is offline, unhealthy or drained)'
          : `no node has room for it (${service.cpus} cpu, ${service.memory_bytes} bytes of memory)`
      })
    }
  }
  return { assignment, unplaced }
}
