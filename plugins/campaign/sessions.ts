// Signed-in sessions: what every session store does (a session is created at login under a fresh
// random id, ended by logout, and expires after a period without requests, each request sliding the
// expiry), and the default store, in this process's memory and bounded in number. The Redis store
// shared by several instances is in redis-sessions.ts.
import { randomBytes } from 'node:crypto'
import { ExpiringMap } from './expiring-map.js'
import type { Role } from './roles.js'

/** The spec's session record. */
export interface SessionRecord {
  sub: string
  email: string
  name: string
  role: Role
  access_token: string
  refresh_token: string
  /** Sent back to the provider at logout as id_token_hint. */
  id_token: string
}

export interface SessionStore {
  /** Store `record` under a new random id; the id. */
  create(record: SessionRecord): Promise<string>
  /** The live session under `id`, its expiry pushed back; undefined when unknown or expired. */
  touch(id: string): Promise<SessionRecord | undefined>
  delete(id: string): Promise<void>
  /** Sessions alive now (for the admin panel). */
  count(): Promise<number>
}

/** A session id: 256 random bits, base64url. */
export const newSessionId = (): string => randomBytes(32).toString('base64url')

export interface MemorySessionsOptions {
  idleMs: number
  maxSessions: number
  now?: () => number
}

/** Sessions in memory; the least recently used gives way when full. */
export class MemorySessions implements SessionStore {
  readonly #entries: ExpiringMap<SessionRecord>

  constructor (options: MemorySessionsOptions) {
    this.#entries = new ExpiringMap({ ttlMs: options.idleMs, maxEntries: options.maxSessions, now: options.now })
  }

  async create (record: SessionRecord): Promise<string> {
    const id = newSessionId()
    this.#entries.add(id, record)
    return id
  }

  async touch (id: string): Promise<SessionRecord | undefined> {
    return this.#entries.touch(id)
  }

  async delete (id: string): Promise<void> {
    this.#entries.delete(id)
  }

  async count (): Promise<number> {
    this.#entries.sweep()
    return this.#entries.size
  }

  /** Drop expired sessions (run every minute). */
  sweep (): void {
    this.#entries.sweep()
  }
}
