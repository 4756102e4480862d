// Which session a request belongs to (signed cookie → live session, expiry slid once per request),
// and the Set-Cookie values that start a session at login (always under a new id) and end it.
import type { FastifyRequest } from 'fastify'
import type { SessionCookie } from './session-cookie.js'
import type { SessionRecord, SessionStore } from './sessions.js'

export class SessionAuth {
  readonly #sessions: SessionStore
  readonly #cookie: SessionCookie
  readonly #seen = new WeakMap<FastifyRequest, { id: string, record: SessionRecord } | null>()

  constructor (sessions: SessionStore, cookie: SessionCookie) {
    this.#sessions = sessions
    this.#cookie = cookie
  }

  /** The request's live session, or undefined. */
  current (request: FastifyRequest): SessionRecord | undefined {
    return this.#lookup(request)?.record
  }

  /** Start a session for `record`, ending the one the request carried (the id changes at every login). */
  start (request: FastifyRequest, record: SessionRecord): string {
    this.#endCarried(request)
    return this.#cookie.issue(this.#sessions.create(record))
  }

  /** End the request's session; returns the Set-Cookie value that clears the cookie. */
  end (request: FastifyRequest): string {
    this.#endCarried(request)
    return this.#cookie.clear()
  }

  #endCarried (request: FastifyRequest): void {
    const id = this.#cookie.read(request.headers.cookie)
    if (id !== undefined) this.#sessions.delete(id)
    this.#seen.delete(request)
  }

  #lookup (request: FastifyRequest): { id: string, record: SessionRecord } | undefined {
    let found = this.#seen.get(request)
    if (found === undefined) {
      const id = this.#cookie.read(request.headers.cookie)
      const record = id === undefined ? undefined : this.#sessions.touch(id)
      found = id === undefined || record === undefined ? null : { id, record }
      this.#seen.set(request, found)
    }
    return found ?? undefined
  }
}
