// What the reconciler keeps in the control plane's state (LMDB, or etcd shared by masters): the
// desired spec of every deployed service (with how its last deploy failed, if it did, and whether a
// stop request stopped it), its canary if one runs, the deploy history (for rollbacks), the last
// reload, liveness restart counts, the deploys under way (written before any container changes); and in this node's own LMDB its id. Containers themselves are
// never stored: the engine is asked each time, so the state survives `kill -9` and adoption needs
// nothing extra.
import { randomBytes } from 'node:crypto'
import type { KeyValueDatabase, KeyValueStore } from '../../kernel/index.js'
import type { ReloadRecord } from './reload.js'
import type { Declared } from './service-set.js'
import type { ServiceSpec } from './spec.js'

export interface StoredService {
  spec: ServiceSpec
  /** Where it was declared: a service file, "request body", or "the leader". */
  source: string
  deployed_at: string
  /** The last deploy of the service failed (a later one that succeeds clears it). */
  failure?: DeployFailure
  /** A stop request (`POST /api/v1/stop`) stopped its containers then: repairs leave them stopped until its next deploy or restart. */
  stopped_at?: string
}

/**
 * How the last deploy of a service failed, and what runs since: `rolled-back`, the replicas it had
 * replaced run the previous spec again (which stays the desired one); `unchanged`, it failed before
 * any container changed (the previous spec stays the desired one); `none`, the new spec stays the
 * desired one and its containers stay as the failure left them (rollback_on_failure off, the
 * rollback failed too, or no earlier spec).
 */
export interface DeployFailure {
  at: string
  trigger: string
  /** The spec that failed: its image and container hash. */
  image: string
  hash: string
  error: string
  recovery: 'rolled-back' | 'unchanged' | 'none'
  /** With `none`: the replacement that did not pass its checks, left as it is (it does not count as serving). */
  unready?: string
}

/** A service to store: its spec and source, and how this deploy of it failed, if it did. */
export interface Saved extends Declared {
  failure?: DeployFailure
}

/** A canary: one replica of another spec running beside a service's replicas, with its share of requests. */
export interface CanaryState {
  spec: ServiceSpec
  /** Where the spec was declared: a service file, or "request body". */
  source: string
  /** specHash of `spec`. */
  hash: string
  /** Percent of the service's requests the proxy sends to the canary (1–99). */
  weight: number
  started_at: string
  /** Name of the token that started it. */
  by?: string
  /** When it is judged by its health (auto-promotion): promoted if healthy then, else rolled back. */
  judge_at?: string
}

/** A deploy about to change a service's containers, kept until its outcome is stored: if that never happens (a full disk, a crash), the status says so. */
export interface PendingDeploy {
  at: string
  trigger: string
  image: string
  hash: string
}

export interface DeployError {
  service: string
  project: string
  error: string
}

export interface HistoryEntry {
  at: string
  /** deploy, redeploy, reload, scale, canary, promote, rollback */
  trigger: string
  /** Name of the token that asked for it. */
  by?: string
  /** Why, when no operator asked (an auto-promotion's judgement). */
  reason?: string
  /** `spec` is the whole spec deployed (what a rollback returns to); entries written before it was kept lack it. */
  services: Array<{ name: string, project: string, image: string, hash: string, spec?: ServiceSpec }>
  deployed: string[]
  errors: DeployError[]
}

export class ReconcilerState {
  readonly #store: KeyValueStore
  readonly #services: KeyValueDatabase<StoredService>
  readonly #history: KeyValueDatabase<HistoryEntry>
  readonly #restarts: KeyValueDatabase<number>
  readonly #canaries: KeyValueDatabase<CanaryState>
  readonly #reloads: KeyValueDatabase<ReloadRecord>
  readonly #pending: KeyValueDatabase<PendingDeploy>
  readonly #node: KeyValueDatabase<string>
  readonly #historyLimit: number
  readonly #room: () => Promise<void>
  #sequence = 0

  /** `store`: the cluster's desired state (shared by masters on etcd); `local`: this node's own (its id). */
  /** `room` throws a StorageFault when the disk could not take a deploy's outcome. */
  constructor (store: KeyValueStore, local: KeyValueStore, historyLimit: number, room: () => Promise<void> = async () => {}) {
    this.#store = store
    this.#room = room
    this.#services = store.db<StoredService>('services')
    this.#history = store.db<HistoryEntry>('history')
    this.#restarts = store.db<number>('restarts')
    this.#canaries = store.db<CanaryState>('canaries')
    this.#reloads = store.db<ReloadRecord>('reloads')
    this.#pending = store.db<PendingDeploy>('pending')
    this.#node = local.db<string>('node')
    this.#historyLimit = historyLimit
  }

  services (): StoredService[] {
    return [...this.#services.getRange()].map(({ value }) => value)
  }

  service (name: string): StoredService | undefined {
    return this.#services.get(name)
  }

  /** The canary running beside a service, if any. */
  canary (name: string): CanaryState | undefined {
    return this.#canaries.get(name)
  }

  canaries (): CanaryState[] {
    return [...this.#canaries.getRange()].map(({ value }) => value)
  }

  /**
   * Write down the deploy about to change these services' containers, before it does: on a disk that
   * could not take its outcome, this throws and nothing changes.
   */
  async begin (trigger: string, services: ReadonlyArray<{ name: string, image: string, hash: string }>): Promise<void> {
    await this.#room()
    const at = new Date().toISOString()
    await this.#store.transaction(() => {
      for (const { name, image, hash } of services) void this.#pending.put(name, { at, trigger, image, hash })
    })
  }

  /** A deploy of the service that began and whose outcome was never stored. */
  pending (name: string): PendingDeploy | undefined {
    return this.#pending.get(name)
  }

  /**
   * Store the specs of `declared` (with their failures; a stop ends), forget `removed` (and their
   * canaries), and set (a state) or end (null) the canaries named in `canaries`, in one transaction
   * that also ends the pending deploys of them all.
   */
  async save (declared: readonly Saved[], removed: readonly string[] = [], canaries: ReadonlyMap<string, CanaryState | null> = new Map()): Promise<void> {
    const now = new Date().toISOString()
    await this.#store.transaction(() => {
      for (const { spec, source, failure } of declared) {
        void this.#services.put(spec.name, { spec, source, deployed_at: now, ...(failure !== undefined && { failure }) })
        void this.#pending.remove(spec.name)
      }
      for (const [name, canary] of canaries) void (canary === null ? this.#canaries.remove(name) : this.#canaries.put(name, canary))
      for (const name of removed) {
        void this.#services.remove(name)
        void this.#pending.remove(name)
        void this.#restarts.remove(name)
        void this.#canaries.remove(name)
      }
    })
  }

  /** Mark `names` as stopped by a stop request (until their next deploy or restart), or with `stopped` false as started again. */
  async markStopped (names: readonly string[], stopped = true): Promise<void> {
    const now = new Date().toISOString()
    await this.#store.transaction(() => {
      for (const name of names) {
        const stored = this.#services.get(name)
        if (stored === undefined) continue
        const { stopped_at: _, ...rest } = stored
        void this.#services.put(name, stopped ? { ...rest, stopped_at: now } : rest)
      }
    })
  }

  /** Append to the history, dropping the oldest entries beyond the limit. */
  async record (entry: HistoryEntry): Promise<void> {
    const key = `${entry.at}#${String(this.#sequence++).padStart(6, '0')}`
    await this.#store.transaction(() => {
      void this.#history.put(key, entry)
      const excess = this.#history.getKeysCount() - this.#historyLimit
      if (excess > 0) for (const old of [...this.#history.getKeys({ limit: excess })]) void this.#history.remove(old)
    })
  }

  history (): HistoryEntry[] {
    return [...this.#history.getRange()].map(({ value }) => value)
  }

  restarts (name: string): number {
    return this.#restarts.get(name) ?? 0
  }

  async countRestart (name: string): Promise<number> {
    const count = this.restarts(name) + 1
    await this.#restarts.put(name, count)
    return count
  }

  /** The last reload asked for, as far as it went. */
  lastReload (): ReloadRecord | undefined {
    return this.#reloads.get('last')
  }

  async recordReload (record: ReloadRecord): Promise<void> {
    await this.#reloads.put('last', record)
  }

  /** A random id made on first use and kept. */
  async nodeId (): Promise<string> {
    const known = this.#node.get('id')
    if (known !== undefined) return known
    const id = randomBytes(8).toString('hex')
    await this.#node.put('id', id)
    return id
  }
}
