// What an HTTP/1 request names, as RFC 9112 §3.2 fixes it: HTTP/1.x only (another version on an
// HTTP/1 connection is a 505); no transfer coding but chunked (another is a 501, as nginx answers;
// RFC 9112 §6.1); exactly one Host header (none, in HTTP/1.1, or several is a 400, as
// nginx answers); a target in absolute form (`GET http://b.test/x`) names the
// authority, which wins over Host: the request is routed by it, the replica gets the origin form
// (`/x`) with Host set to that authority. HTTP/2's :authority is taken as it is.
import type { ClientRequest } from './forward.js'
import { isNamed } from './headers.js'

export interface RequestTarget {
  host: string | undefined
  /** The origin form: path and query. */
  url: string
  /** The headers to forward: the client's, Host rewritten for an absolute-form target. */
  rawHeaders: readonly string[]
}

const ABSOLUTE = /^https?:\/\//i

/** Why a request is refused: its status and message. */
export interface TargetRefusal { status: number, error: string }

/** The request's host and origin-form target, or why it is refused. */
export function requestTarget (req: ClientRequest): RequestTarget | TargetRefusal {
  const url = req.url ?? '/'
  if ('stream' in req) return { host: req.headers[':authority'] as string | undefined ?? req.headers.host, url, rawHeaders: req.rawHeaders }
  if (req.httpVersionMajor !== 1) return { status: 505, error: `HTTP/${req.httpVersion} is not spoken on an HTTP/1 connection` }
  const refused = (error: string): TargetRefusal => ({ status: 400, error })
  const raw = req.rawHeaders
  let hosts = 0
  for (let i = 0; i < raw.length; i += 2) if (isNamed(raw[i], 'host')) hosts++
  const coding = req.headers['transfer-encoding']
  if (coding !== undefined && coding.trim().toLowerCase() !== 'chunked') return { status: 501, error: `the transfer coding "${coding.slice(0, 40)}" is not supported (only chunked)` }
  if (hosts > 1) return refused(`a request has one Host header; this one has ${hosts}`)
  if (hosts === 0 && req.httpVersion !== '1.0') return refused('an HTTP/1.1 request needs a Host header')
  if (!ABSOLUTE.test(url)) return { host: req.headers.host, url, rawHeaders: raw }
  let target: URL
  try {
    target = new URL(url)
  } catch {
    return refused('the request target is not a URL')
  }
  if (target.username !== '' || target.password !== '') return refused('the request target may not hold credentials')
  const rawHeaders = [...raw]
  const at = rawHeaders.findIndex((name, i) => i % 2 === 0 && isNamed(name, 'host'))
  if (at === -1) rawHeaders.push('host', target.host)
  else rawHeaders[at + 1] = target.host
  return { host: target.host, url: `${target.pathname}${target.search}`, rawHeaders }
}
