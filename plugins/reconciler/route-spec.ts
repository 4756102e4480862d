// How a service is reached through the proxy beyond its names: a path prefix it takes on them (with
// the prefix stripped or kept) and the route middleware of `[service.middleware]` (basic auth with
// bcrypt hashes, an IP allow-list, a request rate limit, a body size limit, extra response headers,
// HSTS, compression). Read and checked here; the proxy applies them.
import { isIP } from 'node:net'
import type { Fields } from './fields.js'
import { parseMemory } from './units.js'

/** `[service.middleware]` as checked: plain data, kept with the spec. */
export interface MiddlewareSpec {
  /** `user:bcrypt-hash` entries (`htpasswd -nB` writes them). */
  basic_auth?: string[]
  /** Client addresses and CIDR ranges allowed; every other address gets 403. */
  allow?: string[]
  /** Requests per client address: `requests` each `per_seconds`, bursts of up to `burst`. */
  rate_limit?: { requests: number, per_seconds: number, burst: number }
  /** Requests with a body larger than this get 413. */
  max_body_bytes?: number
  /** Response headers set on every answer (lower-case names; they replace the service's own). */
  headers?: Record<string, string>
  /** `false` (the only value kept): no Strict-Transport-Security header on HTTPS answers. */
  hsts?: false
  /** `true` (the only value kept): text answers are compressed (brotli or gzip) for clients that accept it. */
  compress?: true
}

const PATH_PREFIX = /^(\/[A-Za-z0-9._~!$&'()*+,;=:@%-]+)+\/?$/
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/
const BCRYPT = /^\$2[aby]\$\d\d\$[./A-Za-z0-9]{53}$/
/** Headers that are the proxy's or the connection's, not the service's to set. */
const RESERVED_HEADERS = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'proxy-connection', 'content-length', 'content-encoding'])

/** A path prefix as the service gives it, without a trailing slash; `/` means none. */
export function readPathPrefix (fields: Fields): string | undefined {
  const prefix = fields.string('path_prefix', { pattern: /^\//, hint: 'a path beginning with /' })
  if (prefix === undefined || prefix === '/') return undefined
  if (!PATH_PREFIX.test(prefix) || prefix.split('/').some(segment => segment === '.' || segment === '..')) {
    return fields.fail('path_prefix', `must be a path of segments such as "/api" (no query, no "." or ".." segments), got ${JSON.stringify(prefix)}`)
  }
  return prefix.replace(/\/$/, '')
}

/** `[service.middleware]`, checked; undefined when absent or when it only repeats the defaults. */
export function readMiddleware (fields: Fields): MiddlewareSpec | undefined {
  const table = fields.table('middleware')
  if (table === undefined) return undefined
  const spec: MiddlewareSpec = {}
  const users = table.strings('basic_auth', basicAuthProblem)
  if (users !== undefined && users.length > 0) {
    const names = users.map(entry => entry.slice(0, entry.indexOf(':')))
    const twice = names.find((n, i) => names.indexOf(n) !== i)
    if (twice !== undefined) table.fail('basic_auth', `names user "${twice}" twice`)
    spec.basic_auth = users
  }
  const allow = table.strings('allow', item => parseCidr(item) === undefined ? `must be IP addresses or CIDR ranges such as "10.0.0.0/8", got ${JSON.stringify(item)}` : undefined)
  if (allow !== undefined) {
    if (allow.length === 0) table.fail('allow', 'must not be empty (leave it out to allow every address)')
    spec.allow = allow
  }
  const limit = table.table('rate_limit')
  if (limit !== undefined) {
    const requests = limit.integer('requests', { min: 1, required: true })
    const perSeconds = limit.number('per_seconds', { above: 0 }) ?? 1
    const burst = limit.integer('burst', { min: 1 }) ?? requests
    limit.finish()
    if (requests !== undefined && burst !== undefined) spec.rate_limit = { requests, per_seconds: perSeconds, burst }
  }
  const maxBody = table.string('max_body')
  if (maxBody !== undefined) {
    const bytes = parseMemory(maxBody)
    if (bytes === undefined) table.fail('max_body', `must be a size with a unit such as "1m" or "512k", got ${JSON.stringify(maxBody)}`)
    else spec.max_body_bytes = bytes
  }
  const headers = readHeaders(table)
  if (headers !== undefined) spec.headers = headers
  if (table.boolean('hsts') === false) spec.hsts = false
  if (table.boolean('compress') === true) spec.compress = true
  table.finish()
  return Object.keys(spec).length === 0 ? undefined : spec
}

function readHeaders (table: Fields): Record<string, string> | undefined {
  const given = table.map('headers')
  if (given === undefined) return undefined
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(given)) {
    const lower = name.toLowerCase()
    if (!HEADER_NAME.test(name)) table.fail(`headers.${name}`, 'is not a header name')
    else if (RESERVED_HEADERS.has(lower)) table.fail(`headers.${name}`, 'is set by the proxy, not by a service\'s middleware')
    else if (typeof value !== 'string' || !HEADER_VALUE.test(value)) table.fail(`headers.${name}`, `must be a header value (a string without line breaks), got ${JSON.stringify(value)}`)
    else headers[lower] = value
  }
  return Object.keys(headers).length === 0 ? undefined : headers
}

function basicAuthProblem (entry: string): string | undefined {
  const colon = entry.indexOf(':')
  if (colon <= 0 || !BCRYPT.test(entry.slice(colon + 1))) return 'must be "user:hash" entries with a bcrypt hash (as `htpasswd -nbB user password` prints)'
  return undefined
}

/** An address or CIDR range: the network address, its family and the prefix length; undefined when it is neither. */
export function parseCidr (text: string): { address: string, family: 'ipv4' | 'ipv6', prefix: number } | undefined {
  const [address, bits, more] = text.split('/')
  const version = isIP(address)
  if (version === 0 || more !== undefined) return undefined
  const max = version === 4 ? 32 : 128
  const prefix = bits === undefined ? max : /^\d{1,3}$/.test(bits) ? Number(bits) : NaN
  if (!(prefix >= 0 && prefix <= max)) return undefined
  return { address, family: version === 4 ? 'ipv4' : 'ipv6', prefix }
}
