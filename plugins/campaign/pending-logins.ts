// Logins that went to the identity provider and have not come back yet, kept by state: each usable
// once (take) and expiring after a while. The default store is in this process's memory, bounded in
// number (the oldest gives way); the Redis store shared by several instances is in redis-sessions.ts.
import { ExpiringMap, type ExpiringMapOptions } from './expiring-map.js'

export interface PendingLogin {
  codeVerifier: string
  /** Local path to return to after the login. */
  redirectPath: string
}

export interface PendingLoginStore {
  add(state: string, login: PendingLogin): Promise<void>
  /** The live login under `state`, removed so it cannot be used again; undefined when unknown or expired. */
  take(state: string): Promise<PendingLogin | undefined>
  /** Logins waiting now (for the admin panel). */
  count(): Promise<number>
}

export class MemoryPendingLogins implements PendingLoginStore {
  readonly #entries: ExpiringMap<PendingLogin>

  constructor (options: ExpiringMapOptions) {
    this.#entries = new ExpiringMap(options)
  }

  async add (state: string, login: PendingLogin): Promise<void> {
    this.#entries.add(state, login)
  }

  async take (state: string): Promise<PendingLogin | undefined> {
    return this.#entries.take(state)
  }

  async count (): Promise<number> {
    this.#entries.sweep()
    return this.#entries.size
  }

  /** Drop expired logins (run every minute). */
  sweep (): void {
    this.#entries.sweep()
  }
}
