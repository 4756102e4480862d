// Which session a request belongs to (signed cookie → live session, expiry slid once per request; or
// an API token sent as `Authorization: Bearer`, which stands for its role), and the Set-Cookie values
// that start a session at login (always under a new id) and end it.
import type { FastifyRequest } from 'fastify'
import type { SessionCookie } from './session-cookie.js'
import type { SessionRecord, SessionStore } from './sessions.js'

export interface SessionAuthOptions {
  sessions: SessionStore
  cookie: SessionCookie
  /**
   * Called when a cookie's signature does not hold: fetch the shared key again (another instance may
   * have made a new one); true when it changed, and the cookie is then read again.
   */
  refreshKey?: () => Promise<boolean>
}

export class SessionAuth {
  readonly #sessions: SessionStore
  readonly #cookie: SessionCookie
  readonly #refreshKey: () => Promise<boolean>
  readonly #seen = new WeakMap<FastifyRequest, Promise<SessionRecord | undefined>>()
  #tokens: ((bearer: string) => Promise<SessionRecord | undefined>) | undefined

  constructor (options: SessionAuthOptions) {
    this.#sessions = options.sessions
    this.#cookie = options.cookie
    this.#refreshKey = options.refreshKey ?? (async () => false)
  }

  /** Take `Authorization: Bearer` tokens: `session` tells what a token stands for (undefined: none). */
  acceptTokens (session: (bearer: string) => Promise<SessionRecord | undefined>): void {
    this.#tokens = session
  }

  /** The request's live session, or undefined (looked up once per request). */
  async current (request: FastifyRequest): Promise<SessionRecord | undefined> {
    let found = this.#seen.get(request)
    if (found === undefined) {
      found = this.#lookup(request)
      this.#seen.set(request, found)
    }
    return await found
  }

  /** Start a session for `record`, ending the one the request carried (the id changes at every login). */
  async start (request: FastifyRequest, record: SessionRecord): Promise<string> {
    await this.#endCarried(request)
    return this.#cookie.issue(await this.#sessions.create(record))
  }

  /** End the request's session; returns the Set-Cookie value that clears the cookie. */
  async end (request: FastifyRequest): Promise<string> {
    await this.#endCarried(request)
    return this.#cookie.clear()
  }

  async #endCarried (request: FastifyRequest): Promise<void> {
    const id = await this.#carriedId(request)
    this.#seen.delete(request)
    if (id !== undefined) await this.#sessions.delete(id)
  }

  async #carriedId (request: FastifyRequest): Promise<string | undefined> {
    const header = request.headers.cookie
    const id = this.#cookie.read(header)
    if (id !== undefined || this.#cookie.presented(header) === undefined || !await this.#refreshKey()) return id
    return this.#cookie.read(header)
  }

  async #lookup (request: FastifyRequest): Promise<SessionRecord | undefined> {
    // A bearer token is the request's credential, whatever cookie comes with it: a bad one is no session.
    const bearer = /^bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '')?.[1]
    if (bearer !== undefined && this.#tokens !== undefined) return await this.#tokens(bearer)
    const id = await this.#carriedId(request)
    return id === undefined ? undefined : await this.#sessions.touch(id)
  }
}
