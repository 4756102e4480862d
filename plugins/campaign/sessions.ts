// Signed-in sessions, kept in server memory: created at login under a fresh random id, ended by logout,
// and expired after a period without requests (each request slides the expiry). Bounded in number.
import { randomBytes } from 'node:crypto'
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

export interface SessionStoreOptions {
  idleMs: number
  maxSessions: number
  now?: () => number
}

export class SessionStore {
  readonly #sessions = new Map<string, { record: SessionRecord, lastSeen: number }>()
  readonly #idleMs: number
  readonly #maxSessions: number
  readonly #now: () => number

  constructor (options: SessionStoreOptions) {
    this.#idleMs = options.idleMs
    this.#maxSessions = options.maxSessions
    this.#now = options.now ?? Date.now
  }

  get size (): number {
    return this.#sessions.size
  }

  /** Store `record` under a new random id and return the id; the least recently used session gives way when full. */
  create (record: SessionRecord): string {
    this.sweep()
    // Entries are re-inserted on each use, so the first key is the least recently used one.
    while (this.#sessions.size >= this.#maxSessions) this.#sessions.delete(this.#sessions.keys().next().value as string)
    const id = randomBytes(32).toString('base64url')
    this.#sessions.set(id, { record, lastSeen: this.#now() })
    return id
  }

  /** The live session `id` names, its expiry pushed back; undefined when unknown or idle too long. */
  touch (id: string): SessionRecord | undefined {
    const entry = this.#sessions.get(id)
    if (entry === undefined) return undefined
    this.#sessions.delete(id)
    const now = this.#now()
    if (now - entry.lastSeen >= this.#idleMs) return undefined
    entry.lastSeen = now
    this.#sessions.set(id, entry)
    return entry.record
  }

  delete (id: string): void {
    this.#sessions.delete(id)
  }

  /** Drop sessions idle for too long. */
  sweep (): void {
    const now = this.#now()
    for (const [id, entry] of this.#sessions) {
      if (now - entry.lastSeen >= this.#idleMs) this.#sessions.delete(id)
    }
  }
}
