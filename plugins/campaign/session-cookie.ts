// The session cookie: the session id with an HMAC-SHA256 signature, checked in constant time;
// HttpOnly, SameSite=Lax, and Secure when the app is served over HTTPS. The key is drawn at start-up,
// or given: instances sharing sessions share it (redis-sessions.ts), and it can be replaced.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'

export const SESSION_COOKIE = 'campaign_session'

export class SessionCookie {
  #key: Buffer
  readonly #secure: boolean

  constructor (options: { secure: boolean, key?: Buffer }) {
    this.#key = options.key ?? randomBytes(32)
    this.#secure = options.secure
  }

  /** Sign with `key` from now on (the shared key was replaced). */
  rekey (key: Buffer): void {
    this.#key = key
  }

  /** The Set-Cookie value carrying session `id`. */
  issue (id: string): string {
    return this.#attributes(`${SESSION_COOKIE}=${id}.${this.#sign(id)}`)
  }

  /** The Set-Cookie value that removes the cookie. */
  clear (): string {
    return this.#attributes(`${SESSION_COOKIE}=; Max-Age=0`)
  }

  /** The session cookie's value in a Cookie request header, signed well or not. */
  presented (cookieHeader: string | undefined): string | undefined {
    return cookieValue(cookieHeader, SESSION_COOKIE)
  }

  /** The session id of a Cookie request header whose signature holds, else undefined. */
  read (cookieHeader: string | undefined): string | undefined {
    const value = this.presented(cookieHeader)
    const dot = value?.lastIndexOf('.') ?? -1
    if (value === undefined || dot <= 0) return undefined
    const id = value.slice(0, dot)
    const given = Buffer.from(value.slice(dot + 1))
    const expected = Buffer.from(this.#sign(id))
    return given.length === expected.length && timingSafeEqual(given, expected) ? id : undefined
  }

  #sign (id: string): string {
    return createHmac('sha256', this.#key).update(id).digest('base64url')
  }

  #attributes (cookie: string): string {
    return `${cookie}; Path=/; HttpOnly; SameSite=Lax${this.#secure ? '; Secure' : ''}`
  }
}

/** The value of cookie `name` in a Cookie header. */
export function cookieValue (header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=')
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim()
  }
  return undefined
}
