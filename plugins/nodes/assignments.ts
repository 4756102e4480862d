// The leader's scheduler: the reconciler asks it, at every deploy, which replicas run on the leader;
// it places every replica (placement.ts), keeps the assignment in the cluster's state (LMDB, or etcd shared by masters), builds each agent's desired
// state (secrets resolved here, never stored there) and has the agents apply it: those that gain or
// change replicas one after the other before the leader converges, those that only lose replicas after.
import type { Logger } from 'pino'
import { Unavailable, type KeyValueDatabase, type KeyValueStore } from '../../kernel/index.js'
import { parseMemory, type RemoteContainer, type RemoteOutcome, type Schedule, type Scheduler, type ScheduleRequest, type ServiceSpec } from '../reconciler/api.js'
import { NodeUnreachable, type LeaderChannel } from './leader.js'
import { place, type Assignment, type PlacementService } from './placement.js'
import type { AssignedService, DeploySummary, DesiredMessage } from './protocol.js'
import type { NodeEntry, NodeRegistry } from './registry.js'
import { RECONCILER_CODES } from '../reconciler/api.js'

export interface SchedulerDeps {
  registry: NodeRegistry
  channel: LeaderChannel
  /** Service name → { replica index (as text) → node name }. */
  db: KeyValueDatabase<Record<string, string>>
  /** The store of `db`, whose transactions make a new assignment one change. */
  store: KeyValueStore
  /** Masters on etcd: whether this one leads, and (when it follows) the agents' containers the leader published. */
  leading?: () => boolean
  published?: () => RemoteContainer[]
  /** The leader's own node name. */
  leaderName(): string
  /** A spec's environment with its secret references resolved. */
  resolveEnv(spec: ServiceSpec): Record<string, string>
  /** Every deployed service's desired spec (the reconciler's). */
  specs(): ServiceSpec[]
  /** How long an agent may take to apply its part of a deploy. */
  deployTimeoutMs: number
  /** How long an agent may take to answer a request (restart, stop, logs). */
  requestTimeoutMs: number
  log: Logger
}

interface Change {
  node: NodeEntry
  desired: DesiredMessage
  /** The node gains or changes replicas (else it only loses some). */
  grows: boolean
  /** Declared services with replicas there before or after: their errors if the node cannot apply. */
  services: Array<{ name: string, project: string }>
}

function placementOf (spec: ServiceSpec, extra: Partial<PlacementService> = {}): PlacementService {
  return {
    name: spec.name,
    replicas: spec.replicas,
    ...(spec.placement !== undefined && { node: spec.placement.node }),
    cpus: spec.resources?.cpu ?? 0,
    memory_bytes: spec.resources?.memory === undefined ? 0 : parseMemory(spec.resources.memory) ?? 0,
    ...extra
  }
}

function ago (ms: number | undefined): string {
  return ms === undefined ? 'no heartbeat since the leader started' : `last heartbeat ${Math.round((Date.now() - ms) / 1000)} s ago`
}

export class ClusterScheduler implements Scheduler {
  readonly #deps: SchedulerDeps
  #assignment: Assignment = new Map()
  /** The desired state last built for each agent, by node id: resent when it reconnects. */
  readonly #desired = new Map<string, DesiredMessage>()
  /** Each service's last resolved environment, for a service whose secrets cannot be resolved now. */
  readonly #env = new Map<string, Record<string, string>>()
  #generation = 0

  constructor (deps: SchedulerDeps) {
    this.#deps = deps
    this.reload()
  }

  /** Read the assignment from the store again and forget the desired states built (a master just elected). */
  reload (): void {
    this.#assignment = new Map()
    this.#desired.clear()
    for (const { key, value } of this.#deps.db.getRange()) {
      this.#assignment.set(key, new Map(Object.entries(value).map(([replica, node]) => [Number(replica), node])))
    }
  }

  /** Service → replica → node, as placed last. */
  get assignment (): Assignment {
    return this.#assignment
  }

  /** The desired state of a node, sent when it (re)connects: the last one built, or (after the leader restarted) what the assignment gives it. */
  desiredFor (node: NodeEntry): DesiredMessage {
    const known = this.#desired.get(node.id)
    if (known !== undefined) return known
    const specs = new Map(this.#deps.specs().map(s => [s.name, s]))
    const desired: DesiredMessage = { type: 'desired', generation: ++this.#generation, services: this.#build(node, this.#assignment, specs, undefined), force: [], pull: 'missing' }
    this.#desired.set(node.id, desired)
    return desired
  }

  /** The services a node runs under `assignment`, with their replicas and environment. */
  #build (node: NodeEntry, assignment: Assignment, specs: ReadonlyMap<string, ServiceSpec>, before: DesiredMessage | undefined): AssignedService[] {
    const beforeServices = new Map((before?.services ?? []).map(s => [s.spec.name, s]))
    const services: AssignedService[] = []
    for (const [name, replicas] of [...assignment].sort(([a], [b]) => a.localeCompare(b))) {
      const spec = specs.get(name)
      if (spec === undefined) continue
      const mine = [...replicas].filter(([, n]) => n === node.name).map(([r]) => r).sort((a, b) => a - b)
      if (mine.length === 0) continue
      const env = this.#environment(spec, beforeServices.get(name))
      if (env !== undefined) services.push({ spec, replicas: mine, env })
    }
    return services
  }

  /** Whether some replica of these services has no node (a node that joins may take it). */
  hasUnplaced (specs: readonly ServiceSpec[]): boolean {
    return specs.some(spec => (this.#assignment.get(spec.name)?.size ?? 0) < spec.replicas)
  }

  /** The replicas placed on a node. */
  replicasOn (name: string): Array<{ service: string, replica: number }> {
    const found: Array<{ service: string, replica: number }> = []
    for (const [service, replicas] of this.#assignment) for (const [replica, node] of replicas) if (node === name) found.push({ service, replica })
    return found
  }

  /**
   * The replicas on node `name` that no node would take if it were drained: pinned to it, or with no
   * other node ready and with room.
   */
  strandedByDrain (name: string): Array<{ service: string, replica: number }> {
    const { assignment } = place(this.#deps.specs().map(spec => placementOf(spec)), this.#deps.registry.placementNodes(name), this.#assignment)
    return this.replicasOn(name).filter(({ service, replica }) => assignment.get(service)?.get(replica) === undefined)
  }

  unavailable (spec: ServiceSpec): string | undefined {
    const pin = spec.placement?.node
    if (pin === undefined) return undefined
    const node = this.#deps.registry.byName(pin)
    if (node === undefined || node.drained) return undefined
    const state = this.#deps.registry.stateOf(node)
    if (state === 'ready') return undefined
    return `service "${spec.name}" is placed on node "${pin}", which is ${state} (${state === 'offline' ? ago(node.lastHeartbeat) : node.engine.error ?? 'its engine does not answer'})`
  }

  async schedule (request: ScheduleRequest): Promise<Schedule> {
    const { registry } = this.#deps
    registry.tick()
    const leader = this.#deps.leaderName()
    const declared = new Set(request.declared.map(s => s.name))
    for (const spec of request.declared) {
      if (!request.changing.has(spec.name)) continue
      const reason = this.unavailable(spec)
      if (reason !== undefined) throw new Unavailable(reason, { code: RECONCILER_CODES.NODE_UNAVAILABLE })
    }
    const services = request.desired.map(spec => placementOf(spec, declared.has(spec.name)
      ? { moveFromUnavailable: request.changing.has(spec.name) }
      : { keep: true }))
    const result = place(services, registry.placementNodes(), this.#assignment)
    const next: Assignment = new Map()
    for (const spec of request.desired) next.set(spec.name, result.assignment.get(spec.name) ?? new Map())
    const unplaced = new Map<string, string>()
    for (const { service, reason } of result.unplaced) {
      if (!declared.has(service)) continue
      const count = result.unplaced.filter(u => u.service === service).length
      unplaced.set(service, `${count} of its replicas cannot be placed: ${reason}`)
    }
    const local = new Map<string, number[]>()
    for (const name of declared) local.set(name, [...(next.get(name) ?? new Map<number, string>())].filter(([, node]) => node === leader).map(([replica]) => replica).sort((a, b) => a - b))

    const previous = this.#assignment
    const changes = this.#changes(request, next)
    await this.#save(next, previous)
    this.#assignment = next
    let grown = false
    return {
      local,
      unplaced,
      grow: async () => {
        grown = true
        const outcome: RemoteOutcome = { errors: [], changed: [] }
        for (const change of changes.filter(c => c.grows)) this.#merge(outcome, await this.#apply(change))
        return outcome
      },
      shrink: async () => {
        if (!grown) throw new Error('shrink before grow')
        const outcome: RemoteOutcome = { errors: [], changed: [] }
        for (const one of await Promise.all(changes.filter(c => !c.grows).map(async c => await this.#apply(c)))) this.#merge(outcome, one)
        return outcome
      }
    }
  }

  #merge (into: RemoteOutcome, from: RemoteOutcome): void {
    into.errors.push(...from.errors)
    for (const name of from.changed) if (!into.changed.includes(name)) into.changed.push(name)
  }

  /** The desired state of every agent whose part changes, or which must recreate or pull. */
  #changes (request: ScheduleRequest, next: Assignment): Change[] {
    const declared = new Set(request.declared.map(s => s.name))
    const specs = new Map(request.desired.map(s => [s.name, s]))
    const changes: Change[] = []
    for (const node of this.#deps.registry.all()) {
      if (node.role === 'leader') continue
      const before = this.#desired.get(node.id) ?? this.desiredFor(node)
      const beforeServices = new Map(before.services.map(s => [s.spec.name, s]))
      const services = this.#build(node, next, specs, before)
      const touched = new Map<string, string>()
      let grows = false
      for (const { spec, replicas } of services) {
        const old = beforeServices.get(spec.name)
        if (declared.has(spec.name)) touched.set(spec.name, spec.project)
        const gained = replicas.some(r => !(old?.replicas ?? []).includes(r))
        if (gained || old === undefined || JSON.stringify(old.spec) !== JSON.stringify(spec) || (declared.has(spec.name) && (request.force || request.pull === 'always'))) grows = true
      }
      for (const [name, old] of beforeServices) if (declared.has(name) || request.removed.includes(name)) touched.set(name, old.spec.project)
      const force = request.force ? services.filter(s => declared.has(s.spec.name)).map(s => s.spec.name) : []
      const pullMatters = request.pull === 'always' && services.some(s => declared.has(s.spec.name))
      if (JSON.stringify(before.services) === JSON.stringify(services) && force.length === 0 && !pullMatters) continue
      const desired: DesiredMessage = { type: 'desired', generation: ++this.#generation, services, force, pull: pullMatters ? 'always' : declared.size > 0 ? request.pull : 'missing' }
      // A resend (the node reconnects) recreates nothing again.
      this.#desired.set(node.id, { ...desired, force: [] })
      changes.push({ node, desired, grows, services: [...touched].map(([name, project]) => ({ name, project })) })
    }
    return changes
  }

  /** A spec's environment resolved now; the last one resolved (or undefined: not sent) when a secret is missing. */
  #environment (spec: ServiceSpec, old: AssignedService | undefined): Record<string, string> | undefined {
    try {
      const env = this.#deps.resolveEnv(spec)
      this.#env.set(spec.name, env)
      return env
    } catch (err) {
      const last = this.#env.get(spec.name) ?? old?.env
      this.#deps.log.warn({ service: spec.name, err: (err as Error).message }, 'environment not resolved; the last one resolved is sent')
      return last
    }
  }

  async #apply (change: Change): Promise<RemoteOutcome> {
    const { node, desired } = change
    const prefix = `node "${node.name}"`
    try {
      if (!this.#deps.channel.connected(node.id)) {
        if (change.services.length === 0 || !change.grows) return { errors: [], changed: [] }
        return { errors: change.services.map(s => ({ service: s.name, project: s.project, error: `${prefix} is ${node.state}: its replicas start when it returns` })), changed: [] }
      }
      const applied = await this.#deps.channel.apply(node.id, desired, this.#deps.deployTimeoutMs)
      return outcomeOf(prefix, applied.result)
    } catch (err) {
      if (!(err instanceof NodeUnreachable)) throw err
      return { errors: change.services.map(s => ({ service: s.name, project: s.project, error: err.message })), changed: [] }
    }
  }

  async #save (next: Assignment, previous: Assignment): Promise<void> {
    const { db, store } = this.#deps
    await store.transaction(() => {
      for (const name of previous.keys()) if (!next.has(name)) void db.remove(name)
      for (const [name, replicas] of next) {
        const value = Object.fromEntries([...replicas].map(([r, n]) => [String(r), n]))
        if (JSON.stringify(Object.fromEntries([...(previous.get(name) ?? [])].map(([r, n]) => [String(r), n]))) !== JSON.stringify(value)) void db.put(name, value)
      }
    })
  }

  remoteContainers (): RemoteContainer[] {
    // A master that follows does not hear agents: it has what the leader published.
    const published = this.#deps.published
    if (published !== undefined && this.#deps.leading?.() === false) return published()
    // A master just elected: agents not reconnected yet are reached where the last leader published them.
    const unheard = published === undefined ? [] : published().filter(c => this.#deps.registry.byName(c.node)?.heartbeats === 0)
    const found: RemoteContainer[] = []
    for (const node of this.#deps.registry.all()) {
      if (node.role === 'leader') continue
      if (node.heartbeats === 0 && unheard.some(c => c.node === node.name)) {
        found.push(...unheard.filter(c => c.node === node.name && this.#assignment.get(c.service)?.get(c.replica) === node.name))
        continue
      }
      const online = node.state !== 'offline'
      // An agent on another host that publishes on a loopback or wildcard address (and advertises none) is reached at its own address.
      const host = isLoopback(node.address) ? undefined : node.address
      for (const c of node.containers) {
        // Only the replicas placed there: a node that returns after its replicas moved shows none of its stale ones.
        if (this.#assignment.get(c.service)?.get(c.replica) !== node.name) continue
        if (!online) {
          found.push({ ...c, node: node.name, running: false, state: 'unknown', address: undefined })
          continue
        }
        const address = c.address !== undefined && host !== undefined && isLoopback(c.address.host) ? { host, port: c.address.port } : c.address
        found.push({ ...c, node: node.name, ...(address !== undefined && { address }) })
      }
    }
    return found
  }

  #agentsWith (service?: string): NodeEntry[] {
    return this.#deps.registry.all().filter(n => n.role === 'agent' && this.#deps.channel.connected(n.id) &&
      (service === undefined || [...(this.#assignment.get(service) ?? new Map<number, string>()).values()].includes(n.name)))
  }

  async stopRemote (): Promise<number> {
    const counts = await Promise.all(this.#agentsWith().map(async n => await this.#deps.channel.request(n.id, { op: 'stop' }, this.#deps.requestTimeoutMs) as number))
    return counts.reduce((a, b) => a + b, 0)
  }

  async restartRemote (service: string): Promise<string[]> {
    const lists = await Promise.all(this.#agentsWith(service).map(async n => await this.#deps.channel.request(n.id, { op: 'restart', service }, this.#deps.requestTimeoutMs) as string[]))
    return lists.flat()
  }

  async logsRemote (service: string, tail: number): Promise<Array<{ label: string, text: string }>> {
    const lists = await Promise.all(this.#agentsWith(service).map(async n => await this.#deps.channel.request(n.id, { op: 'logs', service, tail }, this.#deps.requestTimeoutMs) as Array<{ label: string, text: string }>))
    return lists.flat()
  }
}

/** A loopback or wildcard host: reachable from its own machine only. */
function isLoopback (host: string): boolean {
  return host === '' || host === '0.0.0.0' || host === '::' || host === '::1' || host === 'localhost' || host.startsWith('127.')
}

function outcomeOf (prefix: string, result: DeploySummary): RemoteOutcome {
  return {
    errors: result.errors.map(e => ({ ...e, error: `${prefix}: ${e.error}` })),
    changed: [...result.changed, ...result.removed]
  }
}
