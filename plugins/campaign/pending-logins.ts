// Logins that went to the identity provider and have not come back yet: kept in memory by state,
// each usable once, expiring after a while, and bounded in number (the oldest gives way).
export interface PendingLogin {
  codeVerifier: string
  /** Local path to return to after the login. */
  redirectPath: string
}

export interface PendingLoginsOptions {
  ttlMs: number
  maxEntries: number
  now?: () => number
}

export class PendingLogins {
  readonly #entries = new Map<string, PendingLogin & { expiresAt: number }>()
  readonly #ttlMs: number
  readonly #maxEntries: number
  readonly #now: () => number

  constructor (options: PendingLoginsOptions) {
    this.#ttlMs = options.ttlMs
    this.#maxEntries = options.maxEntries
    this.#now = options.now ?? Date.now
  }

  get size (): number {
    return this.#entries.size
  }

  add (state: string, login: PendingLogin): void {
    this.sweep()
    // Map iteration follows insertion order: the first key is the oldest entry.
    while (this.#entries.size >= this.#maxEntries) this.#entries.delete(this.#entries.keys().next().value as string)
    this.#entries.set(state, { ...login, expiresAt: this.#now() + this.#ttlMs })
  }

  /** The login started with `state`, removed so it cannot be used again; undefined when unknown or expired. */
  take (state: string): PendingLogin | undefined {
    const entry = this.#entries.get(state)
    if (entry === undefined) return undefined
    this.#entries.delete(state)
    if (entry.expiresAt <= this.#now()) return undefined
    return { codeVerifier: entry.codeVerifier, redirectPath: entry.redirectPath }
  }

  /** Drop expired entries. */
  sweep (): void {
    const now = this.#now()
    for (const [state, entry] of this.#entries) {
      if (entry.expiresAt <= now) this.#entries.delete(state)
    }
  }
}
