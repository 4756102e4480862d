// The proxy's fast lane for HTTP/2: the streams of the HTTPS listener's HTTP/2 sessions are taken from
// node:http2's core API (the server's 'stream' event with the request's headers, `stream.respond()`;
// not the request and response objects of its compatibility layer) and forwarded as HTTP/1.1 on the
// lane's keep-alive connections to the replica (upstream-connections.ts), without undici. A request
// body streams to the replica as the client sends it (by its length, else chunked), the stream paused
// while the replica's connection is full, so the client's flow-control window stays shut; an answer
// streams back with back-pressure, its hop-by-hop headers and those HTTP/2 forbids dropped, the route's
// extra headers (HSTS) added. Forwarding, retries and failures (502, 504, an answer broken off by
// RST_STREAM) are the HTTP/1.1 lane's (lane-request.ts). A stream is sent after the turn of the event
// loop that read it, so that a reset read with it (rapid reset) never reaches a replica; a stream
// reset later drops its replica's connection, whose answer is then never read by another request.
// Anything else goes to the general path as node:http2's compatibility layer gives it (`fallback`):
// CONNECT, an Expect header, a target not in origin form or longer than max_url_bytes, an unknown
// host or one unlike the TLS name, an alias, a name with path routes, middleware that checks requests
// or compresses, no replica in rotation.
import { type Http2Session, type IncomingHttpHeaders, type ServerHttp2Stream } from 'node:http2'
import type { Socket } from 'node:net'
import { streamError } from '../error-page.js'
import { IDEMPOTENT, PAYLOAD_METHODS } from '../forward.js'
import { http1HeaderLines, http2ResponseHeaders } from '../headers.js'
import { ConnectionRoutes, LaneRequest, type Forwarded, type LaneRouting } from './lane-request.js'
import { HELD_FOR_CLIENT } from './lane.js'
import type { ParsedHead } from './llhttp.js'
import type { Upstream } from '../route-table.js'

/** What node:http2's server passes with a new stream (its 'stream' event). */
export type StreamHandler = (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, flags: number, rawHeaders: string[]) => void

export interface Http2LaneOptions extends LaneRouting {
  maxUrlBytes: number
  /** The general path takes this stream. */
  fallback: StreamHandler
}

/** Body pieces up to this size are copied, so that the replica's read buffer stays free for its next read. */
const SMALL_PIECE = 1024

export class Http2Lane {
  readonly #options: Http2LaneOptions
  /** Each session's routes, by its TLS socket's server name, and forwarding headers, by its client's address. */
  readonly #sessions = new WeakMap<Http2Session, ConnectionRoutes>()
  /** Streams taken in this turn of the event loop, sent after it. */
  #queued: LaneStream[] = []

  constructor (options: Http2LaneOptions) {
    this.#options = options
  }

  /** A new session, on the client's TLS socket `socket`. */
  session (session: Http2Session, socket: Socket): void {
    this.#sessions.set(session, new ConnectionRoutes(socket, 'https'))
  }

  readonly stream: StreamHandler = (stream, headers, flags, rawHeaders) => {
    const options = this.#options
    const method = headers[':method'] as string
    const path = headers[':path']
    const host = headers[':authority'] ?? headers.host
    const routes = this.#sessions.get(stream.session as Http2Session)
    const route = routes === undefined || method === 'CONNECT' || path === undefined || path.charCodeAt(0) !== 47 || path.length > options.maxUrlBytes || headers.expect !== undefined
      ? undefined
      : routes.route(options.table, host)
    // An alias, a name with path routes, and a route whose middleware checks requests or compresses take the general path.
    const upstream = route === undefined || route.redirect !== undefined || route.prefix !== undefined || route.guard.general ? undefined : options.table.pick(route)
    if (route === undefined || upstream === undefined) {
      options.fallback(stream, headers, flags, rawHeaders)
      return
    }
    const length = headers['content-length']
    // As the general path tells it: by a length, or by the stream not ending with its headers.
    const body = length !== undefined ? length !== '0' : !stream.endAfterHeaders
    const chunked = body && length === undefined
    // A method that gives content a meaning says its empty content's length (RFC 9110 §8.6), as undici does.
    const empty = !body && length === undefined && PAYLOAD_METHODS.has(method) ? 'content-length: 0\r\n' : ''
    const head = `${method} ${path as string} HTTP/1.1\r\n${http1HeaderLines(rawHeaders)}${(routes as ConnectionRoutes).forwarded(host ?? '')}${chunked ? 'transfer-encoding: chunked\r\n' : empty}\r\n`
    const request: Forwarded = { head, headOnly: method === 'HEAD', idempotent: !body && IDEMPOTENT.has(method), accept: headers.accept, route }
    if (body) request.body = chunked ? 'chunked' : 'length'
    if (this.#queued.length === 0) setImmediate(this.#sendQueued)
    this.#queued.push(new LaneStream(options, stream, request, upstream))
  }

  readonly #sendQueued = (): void => {
    const queued = this.#queued
    this.#queued = []
    for (const stream of queued) stream.send()
  }
}

function ignore (): void {}

/** A stream on the lane: its request sent to a replica, the answer written to it. */
class LaneStream extends LaneRequest {
  /** An HTTP/2 answer's head is written anew, always. */
  readonly passesHeads = false
  readonly #stream: ServerHttp2Stream
  /** Small pieces of the answer copied since the last write, written once per read of the replica's. */
  #pending: Buffer[] = []
  /** The answer's writable side was ended with its head (HEAD, 204, 304). */
  #ended = false
  /** Body pieces went to the stream as they came (not copied), and it may still hold them. */
  #piecesWritten = false
  #awaitingDrain = false
  /** The request's body is being read from the client. */
  #reading = false

  constructor (routing: LaneRouting, stream: ServerHttp2Stream, request: Forwarded, upstream: Upstream) {
    super(routing)
    this.#stream = stream
    this.begin(request, upstream)
    stream.on('close', this.#closed)
    // A reset with an error code is reported as an error, which the close above handles.
    stream.on('error', ignore)
  }

  /** Send the request, unless the client reset the stream meanwhile (its close ended it). */
  send (): void {
    const stream = this.#stream
    if (stream.destroyed || stream.closed) return
    this.dispatch()
    if ((this.request as Forwarded).body === undefined) return
    this.#reading = true
    const sendMore = (): void => { stream.resume() }
    stream.on('data', (piece: Buffer) => {
      if (this.exchange?.write(piece, sendMore) === false) stream.pause()
    })
    stream.once('end', () => {
      this.#reading = false
      this.exchange?.finish()
    })
  }

  /** The stream is closed (answered, or reset by the client): a request in flight drops its replica's connection. */
  readonly #closed = (): void => {
    const exchange = this.exchange
    this.exchange = undefined
    exchange?.abort()
    this.endRequest()
  }

  head (answer: ParsedHead): boolean {
    const request = this.request as Forwarded
    const status = answer.statusCode
    const headers = request.route.guard.addExtras(http2ResponseHeaders(answer.headers), 'https')
    headers[':status'] = String(status)
    const ended = request.headOnly || status === 204 || status === 304
    try {
      this.#stream.respond(headers, { endStream: ended })
    } catch {
      // Headers HTTP/2 cannot carry (a repeated Content-Type, say): a malformed answer for this client,
      // answered 502 as the general path answers it; the rest of it is not read.
      const exchange = this.exchange
      this.exchange = undefined
      exchange?.abort()
      this.fail({ code: 'PARSE', stale: false })
      return false
    }
    this.#ended = ended
    this.answering(answer)
    return false
  }

  body (chunk: Buffer): void {
    if (chunk.length <= SMALL_PIECE) {
      this.#pending.push(Buffer.from(chunk))
      return
    }
    this.#writePending()
    this.#stream.write(chunk)
    this.#piecesWritten = true
  }

  #writePending (): void {
    const pending = this.#pending
    if (pending.length === 0) return
    this.#pending = []
    this.#stream.write(pending.length === 1 ? pending[0] : Buffer.concat(pending))
  }

  flush (): boolean {
    this.#writePending()
    const stream = this.#stream
    if (stream.writableLength < HELD_FOR_CLIENT) return true
    // Past the mark a write said "wait for drain", so 'drain' comes.
    if (!this.#awaitingDrain) {
      this.#awaitingDrain = true
      stream.once('drain', () => {
        this.#awaitingDrain = false
        this.exchange?.resume()
      })
    }
    return false
  }

  get holdsPieces (): boolean {
    // A stream keeps a piece until nghttp2 has framed it and the TLS socket has taken it.
    if (this.#piecesWritten && this.#stream.writableLength === 0 && !this.#stream.destroyed) this.#piecesWritten = false
    return this.#piecesWritten
  }

  end (): void {
    const stream = this.#stream
    this.exchange = undefined
    this.endRequest()
    if (!this.#ended) {
      const pending = this.#pending
      this.#pending = []
      stream.end(pending.length === 0 ? undefined : pending.length === 1 ? pending[0] : Buffer.concat(pending))
    }
    this.#answered()
    this.routing.answered(this.status)
  }

  protected broken (): void {
    this.exchange = undefined
    // RST_STREAM INTERNAL_ERROR, as the general path breaks it off (closing the stream with a code
    // would end its writable side first, and the client would take the short body as whole).
    this.#stream.destroy(new Error('the replica\'s answer broke off'))
  }

  protected refuse (status: number, message: string): void {
    const request = this.request as Forwarded
    this.exchange = undefined
    this.#answered()
    const stream = this.#stream
    if (!stream.destroyed && !stream.closed) streamError(stream, request.accept, request.headOnly, status, message)
  }

  /** The answer is out: what more the client sends of its body is read and dropped, so that its stream can end. */
  #answered (): void {
    if (this.#reading) this.#stream.resume()
  }
}
