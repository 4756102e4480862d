// The leader's node registry: every node that ever joined (kept in the cluster's state: id, name, address, drained),
// and in memory what its channel said last (heartbeat time, engine health, containers). A node's state
// follows from the clock: ready, unhealthy (heartbeats arrive, its engine does not answer) or offline
// (no heartbeat within offline_after); after reschedule_after unavailable, it no longer keeps replicas.
import { Conflict, NotFound, type KeyValueDatabase } from '../../kernel/index.js'
import type { PlacementNode } from './placement.js'
import type { EngineReport, HeartbeatMessage, HelloMessage, ReportedContainer } from './protocol.js'
import { NODES_CODES } from './errors.js'

export type NodeRole = 'leader' | 'agent'
export type NodeState = 'ready' | 'unhealthy' | 'offline'

/** What survives a restart of the leader. */
export interface StoredNode {
  id: string
  name: string
  role: NodeRole
  /** Where its replicas are reached: its advertised address, or the address its channel came from. */
  address: string
  drained: boolean
  joined_at: string
  version: string
}

export interface NodeEntry extends StoredNode {
  connected: boolean
  /** ms since the epoch. */
  lastHeartbeat?: number
  heartbeats: number
  engine: EngineReport
  containers: ReportedContainer[]
  /** The state the last check found. */
  state: NodeState
  /** When it stopped being ready (ms since the epoch). */
  unavailableSince?: number
  /** Its grace period ended while it was unavailable: its replicas are placed elsewhere. */
  expired: boolean
}

export interface RegistrySettings {
  offlineAfterMs: number
  rescheduleAfterMs: number
  now?: () => number
}

export interface TickResult {
  /** Nodes whose state changed, with the state before and the one after (the node may have changed again since). */
  changed: Array<{ node: NodeEntry, from: NodeState, to: NodeState }>
  /** Nodes whose grace period just ended. */
  expired: NodeEntry[]
}

export class NodeRegistry {
  readonly #db: KeyValueDatabase<StoredNode>
  readonly #settings: Required<RegistrySettings>
  readonly #nodes = new Map<string, NodeEntry>()
  /** What ticks found since the last `events()`: any caller may tick, the node checks act on them. */
  #pending: TickResult = { changed: [], expired: [] }

  constructor (db: KeyValueDatabase<StoredNode>, settings: RegistrySettings) {
    this.#db = db
    this.#settings = { now: Date.now, ...settings }
    this.reload()
  }

  /**
   * Read every node from the store again, all offline (a master that has just been elected: agents
   * reconnect to it). Until it reconnects a node counts as unavailable since then: its grace period
   * runs from then.
   */
  reload (): void {
    const startedAt = this.#settings.now()
    this.#nodes.clear()
    this.#pending = { changed: [], expired: [] }
    for (const { value } of this.#db.getRange()) {
      this.#nodes.set(value.id, { ...value, connected: false, heartbeats: 0, engine: { healthy: false, error: 'not connected since the leader started' }, containers: [], state: 'offline', unavailableSince: startedAt, expired: false })
    }
  }

  get settings (): Required<RegistrySettings> {
    return this.#settings
  }

  all (): NodeEntry[] {
    return [...this.#nodes.values()].sort((a, b) => (a.role === b.role ? a.name.localeCompare(b.name) : a.role === 'leader' ? -1 : 1))
  }

  get (id: string): NodeEntry | undefined {
    return this.#nodes.get(id)
  }

  /** A node by id, else by name; 404 when neither matches. */
  find (idOrName: string): NodeEntry {
    const node = this.#nodes.get(idOrName) ?? [...this.#nodes.values()].find(n => n.name === idOrName)
    if (node === undefined) throw new NotFound(`no node with id or name "${idOrName}"`, { code: NODES_CODES.NO_SUCH_NODE })
    return node
  }

  byName (name: string): NodeEntry | undefined {
    for (const node of this.#nodes.values()) if (node.name === name) return node
    return undefined
  }

  /** The leader's own entry, registered (or renamed) at start. */
  async registerLeader (node: { id: string, name: string, address: string, version: string }, engine: EngineReport): Promise<NodeEntry> {
    const other = this.byName(node.name)
    if (other !== undefined && other.id !== node.id) {
      // An agent took this name while this node was not the leader: the leader's name wins, the agent is forgotten.
      await this.forget(other.id)
    }
    // Another master led before: its node stays (offline, its replicas moved after the grace period) as an agent.
    for (const previous of [...this.#nodes.values()].filter(n => n.role === 'leader' && n.id !== node.id)) {
      await this.#upsert({ id: previous.id, name: previous.name, role: 'agent', address: previous.address, version: previous.version })
    }
    const entry = await this.#upsert({ id: node.id, name: node.name, role: 'leader', address: node.address, version: node.version })
    entry.connected = true
    this.heartbeat(entry.id, { type: 'heartbeat', seq: 0, engine })
    this.tick()
    return entry
  }

  /** An agent said hello on a new channel. Refuses a name another node holds. */
  async join (hello: HelloMessage, address: string): Promise<NodeEntry> {
    const other = this.byName(hello.name)
    if (other !== undefined && other.id !== hello.id) {
      throw new Conflict(`node name "${hello.name}" is taken by node ${other.id} (${other.role}); give this node another [reconciler].node_name, or forget the other one`, { code: NODES_CODES.NODE_NAME_TAKEN })
    }
    const known = this.#nodes.get(hello.id)
    if (known?.role === 'leader') throw new Conflict(`node id ${hello.id} is the leader's own`)
    const entry = await this.#upsert({ id: hello.id, name: hello.name, role: 'agent', address, version: hello.version })
    entry.connected = true
    entry.containers = hello.containers
    this.heartbeat(entry.id, { type: 'heartbeat', seq: 0, engine: hello.engine })
    // Its state at once: its replicas are routed from the moment it joins, not from the next check.
    this.tick()
    return entry
  }

  async #upsert (fields: Omit<StoredNode, 'drained' | 'joined_at'>): Promise<NodeEntry> {
    const known = this.#nodes.get(fields.id)
    const stored: StoredNode = { drained: known?.drained ?? false, joined_at: known?.joined_at ?? new Date(this.#settings.now()).toISOString(), ...fields }
    if (known === undefined || known.name !== stored.name || known.address !== stored.address || known.version !== stored.version || known.role !== stored.role) {
      await this.#db.put(stored.id, stored)
    }
    if (known !== undefined) return Object.assign(known, stored)
    const entry: NodeEntry = { ...stored, connected: false, heartbeats: 0, engine: { healthy: false }, containers: [], state: 'offline', unavailableSince: this.#settings.now(), expired: false }
    this.#nodes.set(entry.id, entry)
    return entry
  }

  /** A heartbeat: the hot path of a large cluster, so it only records. */
  heartbeat (id: string, message: Pick<HeartbeatMessage, 'engine' | 'containers'> & { type: 'heartbeat', seq: number }): void {
    const node = this.#nodes.get(id)
    if (node === undefined) return
    node.lastHeartbeat = this.#settings.now()
    node.heartbeats++
    // An engine that does not answer reports no capacity: the last known one stays.
    node.engine = message.engine.healthy ? message.engine : { ...message.engine, cpus: node.engine.cpus, memory_bytes: node.engine.memory_bytes }
    if (message.containers !== undefined) node.containers = message.containers
  }

  setContainers (id: string, containers: ReportedContainer[]): void {
    const node = this.#nodes.get(id)
    if (node !== undefined) node.containers = containers
  }

  disconnect (id: string): void {
    const node = this.#nodes.get(id)
    if (node === undefined) return
    node.connected = false
  }

  stateOf (node: NodeEntry, now = this.#settings.now()): NodeState {
    if (!node.connected || node.lastHeartbeat === undefined || now - node.lastHeartbeat > this.#settings.offlineAfterMs) return 'offline'
    return node.engine.healthy ? 'ready' : 'unhealthy'
  }

  /** State changes and ended grace periods found by every tick since the last call. */
  events (): TickResult {
    const pending = this.#pending
    this.#pending = { changed: [], expired: [] }
    return pending
  }

  /** Bring every node's state up to date with the clock; what changed is also kept for `events()`. */
  tick (): TickResult {
    const now = this.#settings.now()
    const result: TickResult = { changed: [], expired: [] }
    for (const node of this.#nodes.values()) {
      const state = this.stateOf(node, now)
      if (state !== node.state) {
        result.changed.push({ node, from: node.state, to: state })
        if (state === 'ready') {
          node.unavailableSince = undefined
          node.expired = false
        } else if (node.state === 'ready') {
          node.unavailableSince = now
        }
        node.state = state
      }
      if (state !== 'ready' && !node.expired && now - (node.unavailableSince ?? now) >= this.#settings.rescheduleAfterMs) {
        node.expired = true
        result.expired.push(node)
      }
    }
    this.#pending.changed.push(...result.changed)
    this.#pending.expired.push(...result.expired)
    return result
  }

  /**
   * The nodes as the placement function sees them (with the node named `draining` taken as drained,
   * to see what a drain would do). When no node takes replicas, the leader (unless drained) still
   * does: its own reconciler then reports why they do not run (its engine's error).
   */
  placementNodes (draining?: string): PlacementNode[] {
    const nodes = [...this.#nodes.values()].map(node => {
      const drained = node.drained || node.name === draining
      return {
        name: node.name,
        role: node.role,
        accepts: !drained && node.state === 'ready',
        keeps: !drained && (node.state === 'ready' || !node.expired),
        drained,
        capacity: { cpus: node.engine.cpus ?? 0, memory_bytes: node.engine.memory_bytes ?? 0 }
      }
    })
    if (!nodes.some(n => n.accepts)) {
      for (const n of nodes) if (n.role === 'leader' && !n.drained) Object.assign(n, { accepts: true, keeps: true })
    }
    return nodes.map(({ role: _role, ...n }) => n)
  }

  async setDrained (id: string, drained: boolean): Promise<NodeEntry> {
    const node = this.find(id)
    if (node.drained === drained) return node
    node.drained = drained
    const { connected: _c, lastHeartbeat: _l, heartbeats: _h, engine: _e, containers: _x, state: _s, unavailableSince: _u, expired: _ex, ...stored } = node
    await this.#db.put(node.id, stored)
    return node
  }

  /** Forget a node (it must not be connected): its name becomes free and its pinned work unplaced. */
  async forget (id: string): Promise<void> {
    this.#nodes.delete(id)
    await this.#db.remove(id)
  }
}
