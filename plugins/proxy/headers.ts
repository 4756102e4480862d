// Headers across the proxy: hop-by-hop headers (RFC 9110 §7.6.1, and any a Connection header names)
// never cross it; the proxy is the edge, so forwarding headers a client sent are dropped and set anew:
// X-Forwarded-For/-Proto/-Host and Forwarded (a client's X-Real-IP is dropped); HTTP/2 answers carry
// none of the headers HTTP/2 forbids (RFC 9113 §8.2.2); the port of a Host header, kept in redirects to another name.
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade'])
// X-Real-IP too: a backend that trusts it must not be told a client's own word.
const FORWARDING = new Set(['x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host', 'forwarded', 'x-real-ip'])

const NONE: ReadonlySet<string> = new Set()

/**
 * Whether header name (or token) `text` is `lower`, a lower-case name, in any case: no lower-case
 * copy is made (a name read from the wire is a new string each time, and a copy of it too).
 */
export function isNamed (text: string, lower: string): boolean {
  if (text.length !== lower.length) return false
  if (text === lower) return true
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c !== lower.charCodeAt(i) && (c < 65 || c > 90 || c + 32 !== lower.charCodeAt(i))) return false
  }
  return true
}

/** Header names a Connection header lists as hop-by-hop for this message. */
function connectionTokens (value: string | undefined): Set<string> | undefined {
  // The usual values name no header: keep-alive, close, in any case (others are taken apart).
  if (value === undefined || isNamed(value, 'keep-alive') || isNamed(value, 'close')) return undefined
  const tokens = value.toLowerCase().split(',').map(t => t.trim()).filter(t => t !== '' && t !== 'close' && t !== 'keep-alive')
  return tokens.length === 0 ? undefined : new Set(tokens)
}

/** The hop-by-hop and forwarding header names, by their length: a name of another length is neither. */
const BY_LENGTH: string[][] = []
for (const name of [...HOP_BY_HOP, ...FORWARDING]) (BY_LENGTH[name.length] ??= []).push(name)

/** The header names a message's Connection header lists, if any. */
export function namedByConnection (raw: readonly string[]): Set<string> | undefined {
  let named: Set<string> | undefined
  for (let i = 0; i < raw.length; i += 2) {
    if (isNamed(raw[i], 'connection')) named = connectionTokens(raw[i + 1])
  }
  return named
}

/** Whether header `name` crosses the proxy; a request's (`forwarding`) forwarding headers do not. */
export function crosses (name: string, forwarding: boolean, named: Set<string> | undefined, keep: ReadonlySet<string> = NONE): boolean {
  if (named === undefined && keep.size === 0) {
    // The usual case, told without a lower-case copy of the name.
    const candidates = BY_LENGTH[name.length]
    if (candidates === undefined) return true
    for (const lower of candidates) {
      if (isNamed(name, lower)) return !(HOP_BY_HOP.has(lower) || (forwarding && FORWARDING.has(lower)))
    }
    return true
  }
  const lower = name.toLowerCase()
  return keep.has(lower) || !(HOP_BY_HOP.has(lower) || (forwarding && FORWARDING.has(lower)) || named?.has(lower) === true)
}

/** A message's end-to-end headers, as a flat name/value list; a request's forwarding headers go too. */
function endToEnd (raw: readonly string[], forwarding: boolean, keep: ReadonlySet<string>): string[] {
  const named = namedByConnection(raw)
  const out: string[] = []
  for (let i = 0; i < raw.length; i += 2) {
    if (crosses(raw[i], forwarding, named, keep)) out.push(raw[i], raw[i + 1])
  }
  return out
}

/** The end-to-end headers of a request, as a flat name/value list (the form undici takes). */
export function requestHeaders (raw: readonly string[], keep: ReadonlySet<string> = NONE): string[] {
  return endToEnd(raw, true, keep)
}

/** The end-to-end header lines of a message's head (`request`: its forwarding headers go too). */
export function headerLines (raw: readonly string[], request: boolean): string {
  const named = namedByConnection(raw)
  let lines = ''
  for (let i = 0; i < raw.length; i += 2) {
    if (crosses(raw[i], request, named, NONE)) lines += `${raw[i]}: ${raw[i + 1]}\r\n`
  }
  return lines
}

/** Whether a flat name/value list has a header of this (lower-case) name. */
export function hasHeader (raw: readonly string[], name: string): boolean {
  for (let i = 0; i < raw.length; i += 2) {
    if (isNamed(raw[i], name)) return true
  }
  return false
}

/** The client's address as the proxy saw it, and how and where (`host`: its Host header) it asked. */
export function forwardedHeaders (remoteAddress: string | undefined, host: string, scheme: 'http' | 'https'): string[] {
  const address = remoteAddress ?? 'unknown'
  const node = address.includes(':') ? `"[${address}]"` : address
  return [
    'x-forwarded-for', address,
    'x-forwarded-proto', scheme,
    'x-forwarded-host', host,
    'forwarded', `for=${node};host="${host.replace(/["\\]/g, '')}";proto=${scheme}`
  ]
}

/** The one header HTTP/2 forbids in a message that is not hop-by-hop in HTTP/1.1 (RFC 9113 §8.2.2). */
const HTTP2_SETTINGS = 'http2-settings'

/** An upstream answer's headers (lower-case names) without the hop-by-hop ones, nor, for an HTTP/2 client (`http2`), HTTP2-Settings. */
export function responseHeaders (headers: Record<string, string | string[]>, http2 = false): Record<string, string | string[]> {
  const connection = headers.connection
  const named = connectionTokens(Array.isArray(connection) ? connection.join(',') : connection)
  let out: Record<string, string | string[]> | undefined
  for (const name of Object.keys(headers)) {
    if (HOP_BY_HOP.has(name) || named?.has(name) === true || (http2 && name === HTTP2_SETTINGS)) {
      out ??= { ...headers }
      delete out[name]
    }
  }
  return out ?? headers
}

/**
 * An HTTP/2 request's headers for an HTTP/1.1 replica: the pseudo-headers go (`:authority` becomes
 * Host, unless the client sent one) and the cookie fields HTTP/2 may split are joined into one
 * (RFC 9113 §8.2.3).
 */
export function http1Headers (raw: readonly string[]): string[] {
  const out: string[] = []
  const cookies: string[] = []
  let authority: string | undefined
  let host = false
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]
    if (name === ':authority') authority = raw[i + 1]
    else if (name.startsWith(':')) continue
    else if (name === 'cookie') cookies.push(raw[i + 1])
    else if (crosses(name, true, undefined)) {
      host ||= name === 'host'
      out.push(name, raw[i + 1])
    }
  }
  if (!host && authority !== undefined) out.unshift('host', authority)
  if (cookies.length > 0) out.push('cookie', cookies.join('; '))
  return out
}

/** The header lines of an HTTP/2 request for an HTTP/1.1 replica (`http1Headers`). */
export function http1HeaderLines (raw: readonly string[]): string {
  const headers = http1Headers(raw)
  let lines = ''
  for (let i = 0; i < headers.length; i += 2) lines += `${headers[i]}: ${headers[i + 1]}\r\n`
  return lines
}

/**
 * An HTTP/1.1 answer's headers (a flat name/value list) for an HTTP/2 client, as `responseHeaders`
 * gives them from undici's: names in lower case, the values of a repeated name in a list, without the
 * hop-by-hop headers and HTTP2-Settings.
 */
export function http2ResponseHeaders (raw: readonly string[]): Record<string, string | string[]> {
  const named = namedByConnection(raw)
  const out: Record<string, string | string[]> = Object.create(null) as Record<string, string | string[]>
  for (let i = 0; i < raw.length; i += 2) {
    if (!crosses(raw[i], false, named)) continue
    const name = raw[i].toLowerCase()
    if (name === HTTP2_SETTINGS) continue
    const value = raw[i + 1]
    const had = out[name]
    if (had === undefined) out[name] = value
    else if (Array.isArray(had)) had.push(value)
    else out[name] = [had, value]
  }
  return out
}

/** The headers a WebSocket handshake keeps: Connection and Upgrade must reach the replica. */
export const UPGRADE_HEADERS: ReadonlySet<string> = new Set(['connection', 'upgrade'])

/** The `:port` of a Host header value ('' when it has none): kept in a redirect to another name. */
export function portOf (host: string | undefined): string {
  const port = /:(\d+)$/.exec(host ?? '')?.[1]
  return port === undefined ? '' : `:${port}`
}
