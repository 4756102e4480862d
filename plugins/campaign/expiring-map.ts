// A bounded in-memory map whose entries expire a fixed time after they were added or last touched.
// When it is full, the entry that has gone longest without being added or touched gives way.
export interface ExpiringMapOptions {
  ttlMs: number
  maxEntries: number
  now?: () => number
}

export class ExpiringMap<V> {
  // Map iteration follows insertion order, and touching re-inserts: the first key is the stalest entry.
  readonly #entries = new Map<string, { value: V, expiresAt: number }>()
  readonly #ttlMs: number
  readonly #maxEntries: number
  readonly #now: () => number

  constructor (options: ExpiringMapOptions) {
    this.#ttlMs = options.ttlMs
    this.#maxEntries = options.maxEntries
    this.#now = options.now ?? Date.now
  }

  get size (): number {
    return this.#entries.size
  }

  add (key: string, value: V): void {
    this.sweep()
    while (this.#entries.size >= this.#maxEntries) this.#entries.delete(this.#entries.keys().next().value as string)
    this.#entries.set(key, { value, expiresAt: this.#now() + this.#ttlMs })
  }

  /** The live value under `key`, its expiry pushed back; undefined when unknown or expired. */
  touch (key: string): V | undefined {
    const value = this.take(key)
    if (value !== undefined) this.#entries.set(key, { value, expiresAt: this.#now() + this.#ttlMs })
    return value
  }

  /** The live value under `key`, removed so it cannot be used again; undefined when unknown or expired. */
  take (key: string): V | undefined {
    const entry = this.#entries.get(key)
    if (entry === undefined) return undefined
    this.#entries.delete(key)
    return entry.expiresAt <= this.#now() ? undefined : entry.value
  }

  delete (key: string): void {
    this.#entries.delete(key)
  }

  /** Drop expired entries. */
  sweep (): void {
    const now = this.#now()
    for (const [key, entry] of this.#entries) {
      if (entry.expiresAt <= now) this.#entries.delete(key)
    }
  }
}
