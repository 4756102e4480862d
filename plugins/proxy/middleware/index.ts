// A route's middleware as the proxy applies it, made once from the service's `[service.middleware]`
// (kept across routing snapshots, so rate-limit buckets and remembered credentials carry over):
// who may send a request (allow-list, rate limit, basic auth, body size), and what every answer gets
// (extra headers, HSTS on HTTPS, compression). Checks run in that order: a refused address costs
// nothing, a flood of guesses is limited before bcrypt runs.
import { BlockList } from 'node:net'
import { parseCidr, type MiddlewareSpec } from '../../reconciler/api.js'
import { crosses, namedByConnection } from '../headers.js'
import { BasicAuth } from './basic-auth.js'
import { RateLimiter } from './rate-limit.js'

export { encodedHeaders, encoder, encodingFor, type Encoding } from './compression.js'

/** Strict-Transport-Security of HTTPS answers (a year; subdomains are left to their own routes). */
const HSTS = 'max-age=31536000'

/** Why a request is refused, as the proxy answers it. */
export interface Refusal {
  status: number
  message: string
  headers?: Record<string, string>
}

/** What of a request the checks read. */
export interface Asking {
  address: string | undefined
  authorization: string | undefined
  /** The Content-Length header, if any. */
  length: string | undefined
}

export class RouteMiddleware {
  readonly #allow: BlockList | undefined
  readonly #limit: RateLimiter | undefined
  readonly #auth: BasicAuth | undefined
  readonly #realm: string
  readonly maxBody: number | undefined
  readonly compress: boolean
  /** Extra response headers by scheme, as name/value pairs. */
  readonly #extra: Record<'http' | 'https', Array<[string, string]>>
  readonly #hstsOnly: Record<'http' | 'https', string | undefined>
  /** Requests must take the general path: a check or compression is needed (headers alone the fast lane adds). */
  readonly general: boolean

  constructor (spec: MiddlewareSpec | undefined, service: string) {
    this.#realm = service
    if (spec?.allow !== undefined) {
      const list = new BlockList()
      for (const item of spec.allow) {
        const cidr = parseCidr(item)
        if (cidr !== undefined) list.addSubnet(cidr.address, cidr.prefix, cidr.family)
      }
      this.#allow = list
    }
    if (spec?.rate_limit !== undefined) this.#limit = new RateLimiter(spec.rate_limit)
    if (spec?.basic_auth !== undefined) this.#auth = new BasicAuth(spec.basic_auth)
    this.maxBody = spec?.max_body_bytes
    this.compress = spec?.compress === true
    const headers = Object.entries(spec?.headers ?? {})
    const hsts = spec?.hsts !== false && spec?.headers?.['strict-transport-security'] === undefined
    this.#extra = { http: headers, https: hsts ? [...headers, ['strict-transport-security', HSTS]] : headers }
    const only = (extra: Array<[string, string]>): string | undefined => extra.length === 1 && extra[0][0] === 'strict-transport-security' ? `strict-transport-security: ${extra[0][1]}\r\n` : undefined
    this.#hstsOnly = { http: only(this.#extra.http), https: only(this.#extra.https) }
    this.general = this.#allow !== undefined || this.#limit !== undefined || this.#auth !== undefined || this.maxBody !== undefined || this.compress
  }

  /** The HSTS header line when it is the only header answers on this scheme get; else undefined. */
  hstsOnly (scheme: 'http' | 'https'): string | undefined {
    return this.#hstsOnly[scheme]
  }

  /** Whether answers on this scheme get headers added. */
  adds (scheme: 'http' | 'https'): boolean {
    return this.#extra[scheme].length > 0
  }

  /** Why the request may not go on, or undefined when it may. */
  async refusal (asking: Asking): Promise<Refusal | undefined> {
    const address = clientAddress(asking.address)
    if (this.#allow !== undefined && !this.#allow.check(address, address.includes(':') ? 'ipv6' : 'ipv4')) {
      return { status: 403, message: `${address} is not allowed here` }
    }
    const wait = this.#limit?.take(address) ?? 0
    if (wait > 0) return { status: 429, message: 'too many requests from this address; try again later', headers: { 'retry-after': String(wait) } }
    if (this.#auth !== undefined && !await this.#auth.admits(asking.authorization)) {
      return { status: 401, message: 'sign in to reach this service', headers: { 'www-authenticate': `Basic realm="${this.#realm}", charset="UTF-8"` } }
    }
    if (this.maxBody !== undefined && asking.length !== undefined && Number(asking.length) > this.maxBody) {
      return { status: 413, message: `the request body is larger than ${this.maxBody} bytes` }
    }
    return undefined
  }

  /** An answer's headers with the extras: they replace the service's own, except HSTS, which a service may set itself. */
  withExtras (headers: Record<string, string | string[]>, scheme: 'http' | 'https'): Record<string, string | string[]> {
    return this.#extra[scheme].length === 0 ? headers : this.addExtras({ ...headers }, scheme)
  }

  /** The same extras added to `headers` (lower-case names) themselves. */
  addExtras (headers: Record<string, string | string[]>, scheme: 'http' | 'https'): Record<string, string | string[]> {
    for (const [name, value] of this.#extra[scheme]) if (!(name === 'strict-transport-security' && headers[name] !== undefined)) headers[name] = value
    return headers
  }

  /** The header lines of a raw answer head (`raw`: name/value pairs) that cross the proxy, with the extras. */
  headLines (raw: readonly string[], scheme: 'http' | 'https'): string {
    const extra = this.#extra[scheme]
    const named = namedByConnection(raw)
    let text = ''
    let ownHsts = false
    for (let i = 0; i < raw.length; i += 2) {
      const lower = raw[i].toLowerCase()
      if (lower === 'strict-transport-security') ownHsts = true
      if (crosses(raw[i], false, named) && !extra.some(([name]) => name === lower && name !== 'strict-transport-security')) text += `${raw[i]}: ${raw[i + 1]}\r\n`
    }
    for (const [name, value] of extra) if (!(ownHsts && name === 'strict-transport-security')) text += `${name}: ${value}\r\n`
    return text
  }
}

/** A client's address as an allow-list reads it: an IPv4 address mapped into IPv6 is the IPv4 one. */
function clientAddress (address: string | undefined): string {
  if (address === undefined) return '0.0.0.0'
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address
}
