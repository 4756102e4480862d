// Signed-in sessions, kept in server memory: created at login under a fresh random id, ended by logout,
// and expired after a period without requests (each request slides the expiry). Bounded in number.
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

export interface SessionStoreOptions {
  idleMs: number
  maxSessions: number
  now?: () => number
}

export class SessionStore extends ExpiringMap<SessionRecord> {
  constructor (options: SessionStoreOptions) {
    super({ ttlMs: options.idleMs, maxEntries: options.maxSessions, now: options.now })
  }

  /** Store `record` under a new random id and return the id; the least recently used session gives way when full. */
  create (record: SessionRecord): string {
    const id = randomBytes(32).toString('base64url')
    this.add(id, record)
    return id
  }
}
