// Answers the proxy makes itself (404 unknown host, 414, 502, 503, 504, and middleware's refusals): a small HTML page, or
// {"error": "...", "code": "..."} for a client that asks for JSON; through node:http, or as raw bytes
// on the fast lane, or on an HTTP/2 stream of its HTTP/2 lane.
import { STATUS_CODES, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http'
import type { Http2ServerResponse, ServerHttp2Stream } from 'node:http2'
import escapeHtml from 'escape-html'
import { codeOfStatus } from '../../kernel/index.js'

interface ErrorPage { reason: string, contentType: string, body: string }

/** The page of `status` for a client whose Accept header is `accept`. */
function errorPage (accept: string | undefined, status: number, message: string): ErrorPage {
  const reason = STATUS_CODES[status] ?? 'Error'
  const json = accept !== undefined && accept.includes('application/json') && !accept.includes('text/html')
  return json
    ? { reason, contentType: 'application/json; charset=utf-8', body: JSON.stringify({ error: message, code: codeOfStatus(status) }) }
    : { reason, contentType: 'text/html; charset=utf-8', body: `<!doctype html>\n<html><head><meta charset="utf-8"><title>${status} ${reason}</title></head>\n<body><h1>${status} ${reason}</h1><p>${escapeHtml(message)}</p></body></html>\n` }
}

/**
 * writeHead on either kind of response. Both take a status and a header object; their overloads'
 * types differ (node:http's and node:http2's, from @types/node 22 on), so a call on the union does not
 * type-check without this.
 */
export function writeHead (res: ServerResponse | Http2ServerResponse, status: number, headers: OutgoingHttpHeaders): void {
  (res as { writeHead: (status: number, headers: OutgoingHttpHeaders) => unknown }).writeHead(status, headers)
}

export function sendError (req: Pick<IncomingMessage, 'headers' | 'method'>, res: ServerResponse | Http2ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  const page = errorPage(req.headers.accept, status, message)
  withoutHeaders(res)
  writeHead(res, status, { ...headers, 'content-type': page.contentType, 'content-length': Buffer.byteLength(page.body), 'cache-control': 'no-store' })
  if (req.method === 'HEAD') res.end()
  else res.end(page.body)
}

/**
 * Take off the headers a response has been given so far: those of a replica's answer it could not
 * send (node:http2's compatibility layer keeps the headers of a writeHead that failed, one HTTP/2
 * cannot carry), so that the proxy's own answer carries none of them (a cookie, HSTS).
 */
function withoutHeaders (res: ServerResponse | Http2ServerResponse): void {
  const names = res.getHeaderNames()
  if (names.length === 0) return
  for (const name of names) res.removeHeader(name)
  // Taking Date off turns the server's own off, and the compatibility layer keeps the value taken off: a Date of now replaces it.
  res.sendDate = true
  if (names.includes('date')) res.setHeader('date', new Date().toUTCString())
}

/** The same answer as a whole HTTP/1.1 message; `close`: the connection ends after it. */
export function rawError (accept: string | undefined, headOnly: boolean, close: boolean, status: number, message: string): string {
  const page = errorPage(accept, status, message)
  return `HTTP/1.1 ${status} ${page.reason}\r\ncontent-type: ${page.contentType}\r\ncontent-length: ${Buffer.byteLength(page.body)}\r\n` +
    `cache-control: no-store\r\ndate: ${new Date().toUTCString()}\r\n${close ? 'connection: close\r\n' : ''}\r\n${headOnly ? '' : page.body}`
}

/** The same answer on an HTTP/2 stream (`headOnly`: to HEAD, without the page). */
export function streamError (stream: ServerHttp2Stream, accept: string | undefined, headOnly: boolean, status: number, message: string): void {
  const page = errorPage(accept, status, message)
  stream.respond({ ':status': status, 'content-type': page.contentType, 'content-length': Buffer.byteLength(page.body), 'cache-control': 'no-store' }, { endStream: headOnly })
  if (!headOnly) stream.end(page.body)
}
