// What the reconciler keeps in LMDB: the desired spec of every deployed service, the deploy history
// (for rollbacks), liveness restart counts, and this node's id. Containers themselves are never stored:
// the engine is asked each time, so the state survives `kill -9` and adoption needs nothing extra.
import { randomBytes } from 'node:crypto'
import type { Database } from 'lmdb'
import type { PluginStore } from '../../kernel/index.js'
import type { Declared } from './service-set.js'
import type { ServiceSpec } from './spec.js'

export interface StoredService {
  spec: ServiceSpec
  /** Where it was declared: a service file, or "request body". */
  source: string
  deployed_at: string
}

export interface DeployError {
  service: string
  project: string
  error: string
}

export interface HistoryEntry {
  at: string
  /** deploy, redeploy, reload, scale, ... */
  trigger: string
  /** Name of the token that asked for it. */
  by?: string
  services: Array<{ name: string, project: string, image: string, hash: string }>
  deployed: string[]
  errors: DeployError[]
}

export class ReconcilerState {
  readonly #store: PluginStore
  readonly #services: Database<StoredService, string>
  readonly #history: Database<HistoryEntry, string>
  readonly #restarts: Database<number, string>
  readonly #node: Database<string, string>
  readonly #historyLimit: number
  #sequence = 0

  constructor (store: PluginStore, historyLimit: number) {
    this.#store = store
    this.#services = store.db<StoredService, string>('services')
    this.#history = store.db<HistoryEntry, string>('history')
    this.#restarts = store.db<number, string>('restarts')
    this.#node = store.db<string, string>('node')
    this.#historyLimit = historyLimit
  }

  services (): StoredService[] {
    return [...this.#services.getRange()].map(({ value }) => value)
  }

  service (name: string): StoredService | undefined {
    return this.#services.get(name)
  }

  /** Store the specs of `declared` and forget `removed`, in one transaction. */
  async save (declared: readonly Declared[], removed: readonly string[] = []): Promise<void> {
    const now = new Date().toISOString()
    await this.#store.transaction(() => {
      for (const { spec, source } of declared) void this.#services.put(spec.name, { spec, source, deployed_at: now })
      for (const name of removed) {
        void this.#services.remove(name)
        void this.#restarts.remove(name)
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

  /** A random id made on first use and kept. */
  async nodeId (): Promise<string> {
    const known = this.#node.get('id')
    if (known !== undefined) return known
    const id = randomBytes(8).toString('hex')
    await this.#node.put('id', id)
    return id
  }
}
