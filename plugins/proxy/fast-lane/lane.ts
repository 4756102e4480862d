// The proxy's fast lane: the common request (HTTP/1.1, no body, for a routed domain with a replica
// in rotation) is read straight off the client's connection by llhttp (in C++ where the socket allows
// it) and forwarded on the lane's own keep-alive connections to the replica; the answer streams back
// with back-pressure, a small one in a single write, with the route's extra headers (HSTS on HTTPS).
// Anything else (a body, an upgrade, pipelined requests, a parse error, HTTP/1.0, an ACME challenge,
// a redirect to HTTPS, an unknown host, a name with path routes, middleware that checks requests or
// compresses, no replica) is handed, with its bytes put back, to node:http's server, which answers it through the
// general path and keeps the connection from then on.
import type { Socket } from 'node:net'
import { heldBy, writeOut, writePiece } from './direct-write.js'
import { rawError } from '../error-page.js'
import { IDEMPOTENT, PAYLOAD_METHODS } from '../forward.js'
import { hasHeader, headerLines, isNamed } from '../headers.js'
import { headEnd, type HttpParser, type ParsedHead } from './llhttp.js'
import type { Route } from '../route-table.js'
import { ConnectionRoutes, LaneRequest, type Forwarded, type LaneRouting } from './lane-request.js'

export interface LaneOptions extends LaneRouting {
  scheme: 'http' | 'https'
  maxHeaderBytes: number
  maxUrlBytes: number
  headersTimeoutMs: number
  idleTimeoutMs: number
  /** Whether the general path answers this request itself (an ACME challenge, a redirect to HTTPS). */
  general?: (url: string, route: Route) => boolean
  /** Give the connection (its unread bytes put back) to node:http's server. */
  handOff: (socket: Socket) => void
}

const REQUEST_TIMEOUT = 'HTTP/1.1 408 Request Timeout\r\nconnection: close\r\ncontent-length: 0\r\n\r\n'

/** The length of a request head written the usual way: `METHOD url HTTP/1.1`, `Name: value` lines, an empty line. */
function usualLength (head: ParsedHead): number {
  const headers = head.headers
  let length = head.method.length + head.url.length + 14
  for (let i = 0; i < headers.length; i += 2) length += headers[i].length + headers[i + 1].length + 4
  return length
}

/** How often the lane's connections are checked against the idle timeout. */
const SWEEP_MS = 250

export class FastLane {
  readonly options: LaneOptions
  readonly connections = new Set<LaneConnection>()
  /** The listener is closing: connections end after their answer in flight, idle ones at once. */
  closing = false
  /** The time of the last sweep: a connection notes it as the time it was last active (no clock read per request). */
  now = performance.now()
  #sweeper: NodeJS.Timeout | undefined

  constructor (options: LaneOptions) {
    this.options = options
  }

  accept (socket: Socket): void {
    this.connections.add(new LaneConnection(this, socket))
    this.#sweeper ??= setInterval(this.#sweep, SWEEP_MS).unref()
  }

  /** Close the connections silent for longer than the idle timeout (noted times are up to a sweep old: one sweep more). */
  readonly #sweep = (): void => {
    this.now = performance.now()
    const since = this.now - this.options.idleTimeoutMs - SWEEP_MS
    for (const connection of this.connections) connection.closeIfSilentSince(since)
    if (this.connections.size > 0) return
    clearInterval(this.#sweeper)
    this.#sweeper = undefined
  }

  closeIdle (): void {
    this.closing = true
    for (const connection of this.connections) connection.closeIfIdle()
  }

  closeAll (): void {
    for (const connection of this.connections) connection.destroy()
  }
}

/**
 * Bytes of answers the lane holds for a client before it pauses the replica (at most that, plus one
 * read); also the client sockets' high-water mark, where they take one (plain TCP).
 */
export const HELD_FOR_CLIENT = 256 * 1024
/** Body pieces up to this size are copied into the answer's pending text, so a small answer is one write. */
const SMALL_PIECE = 1024

class LaneConnection extends LaneRequest {
  readonly passesHeads = true
  readonly #lane: FastLane
  readonly #socket: Socket
  readonly #parser: HttpParser
  /** Bytes of the request being read, for a hand-off. */
  #raw: Buffer[] = []
  /** The read being parsed ('data' events), or undefined while consuming (then the parser has a copy). */
  #current: Buffer | undefined
  /** Bytes that came while a request was in flight: the connection goes to the general path after it. */
  readonly #queued: Buffer[] = []
  #head: ParsedHead | undefined
  /** Heads complete in the bytes read since the last request was taken (two: pipelined requests). */
  #heads = 0
  #busy = false
  #closeAfter = false
  #headersTimer: NodeJS.Timeout | undefined
  /** Requests taken on this connection. */
  #served = 0
  /** When the client last sent or was sent something (as the lane's sweep clock tells it). */
  #active: number
  readonly #routes: ConnectionRoutes
  // The answer in flight.
  #chunked = false
  /** Text of the answer not written yet (its head and small pieces), written once per read. */
  #pending = ''
  #corked = false
  #awaitingDrain = false
  /** Body pieces were written as they came (not copied), and the socket may still hold them. */
  #piecesWritten = false

  constructor (lane: FastLane, socket: Socket) {
    super(lane.options)
    this.#lane = lane
    this.#socket = socket
    this.#routes = new ConnectionRoutes(socket, lane.options.scheme)
    this.#active = lane.now
    this.#parser = lane.options.parser('request', lane.options.maxHeaderBytes, {
      head: head => {
        this.#head = head
        this.#heads++
        return undefined
      },
    })
    socket.setNoDelay(true)
    socket.on('error', this.#onError)
    socket.on('close', this.#onClose)
    // Read by the parser in C++ where the socket allows it, else through 'data' events.
    if (!this.#parser.consume(socket, this.#executed)) socket.on('data', this.#onData)
  }

  /**
   * While the listener closes: a kept connection between requests is closed now; one accepted but not
   * read yet gets its first request answered (with `connection: close`) unless its headers time out.
   */
  closeIfIdle (): void {
    if (this.#busy || this.#raw.length > 0) return
    if (this.#served > 0) this.#socket.destroy()
    else this.#headersTimer ??= setTimeout(this.#headersTimedOut, this.#lane.options.headersTimeoutMs)
  }

  destroy (): void {
    this.#socket.destroy()
  }

  /** Close the connection if it has been silent since `time`, unless its request waits for a replica's head (`upstream_timeout_secs` ends that). */
  closeIfSilentSince (time: number): void {
    if (this.#active < time && !(this.exchange !== undefined && this.status === 0)) this.#socket.destroy()
  }
  readonly #onError = (): void => { this.#socket.destroy() }

  readonly #onClose = (): void => {
    clearTimeout(this.#headersTimer)
    this.exchange?.abort()
    this.endRequest()
    this.#parser.close()
    this.#lane.connections.delete(this)
  }

  readonly #onData = (chunk: Buffer): void => {
    if (this.#busy) {
      this.#queued.push(chunk)
      this.#socket.pause()
      return
    }
    this.#current = chunk
    this.#parsed(this.#parser.execute(chunk))
  }

  /** After each read the parser had in C++. */
  readonly #executed = (result: number | Error): void => {
    if (this.#busy) {
      // A request while one is in flight (pipelining): the parser is ahead of the answers now.
      this.#queued.push(this.#parser.currentBuffer())
      this.#parser.unconsume()
      this.#socket.pause()
      return
    }
    this.#current = undefined
    this.#parsed(result)
  }

  /** The bytes of the read being parsed. */
  #bytes (): Buffer {
    return this.#current ?? this.#parser.currentBuffer()
  }

  #parsed (result: number | Error): void {
    this.#active = this.#lane.now
    const head = this.#head
    if (head === undefined && !(result instanceof Error)) {
      this.#raw.push(this.#bytes())
      this.#headersTimer ??= setTimeout(this.#headersTimedOut, this.#lane.options.headersTimeoutMs)
      return
    }
    if (head === undefined || result instanceof Error || this.#heads > 1 || !this.#alone(head, result)) {
      this.#handOff(this.#bytes())
      return
    }
    this.#take(head)
  }

  /** Whether the bytes read since the last request (`read` of them in this read) are this request's and no more. */
  #alone (head: ParsedHead, read: number): boolean {
    let total = read
    for (const piece of this.#raw) total += piece.length
    if (total === usualLength(head)) return true
    // Written some other way (other spaces, empty lines before it), or more after it: look at the bytes.
    const bytes = Buffer.concat([...this.#raw, this.#bytes()])
    return headEnd(bytes, 0) === bytes.length
  }

  readonly #headersTimedOut = (): void => {
    this.#socket.end(REQUEST_TIMEOUT, () => { this.#socket.destroy() })
  }

  /** Forward a request without a body (llhttp has read all of it with its head), or hand it to the general path. */
  #take (head: ParsedHead): void {
    const options = this.#lane.options
    const headers = head.headers
    let host: string | undefined
    let hosts = 0
    let accept: string | undefined
    let body = false
    /** A content-length (of 0 here) frames the request. */
    let framed = false
    for (let i = 0; i < headers.length; i += 2) {
      const name = headers[i]
      if (isNamed(name, 'host')) {
        host = headers[i + 1]
        hosts++
      } else if (isNamed(name, 'accept')) accept = headers[i + 1]
      else if (isNamed(name, 'content-length')) {
        framed = true
        body ||= headers[i + 1] !== '0'
      } else if (isNamed(name, 'transfer-encoding')) body = true
    }
    // Not one Host, or a target not in origin form: the general path answers or rewrites it (request-target.ts).
    if (body || head.upgrade || head.versionMinor !== 1 || head.url.length > options.maxUrlBytes || hosts !== 1 || head.url.charCodeAt(0) !== 47) {
      this.#handOff(this.#bytes())
      return
    }
    const route = this.#routes.route(options.table, host)
    // A name with path routes, and a route whose middleware checks requests or compresses, take the general path.
    const upstream = route === undefined || route.prefix !== undefined || route.guard.general || options.general?.(head.url, route) === true ? undefined : options.table.pick(route)
    if (route === undefined || upstream === undefined) {
      this.#handOff(this.#bytes())
      return
    }
    clearTimeout(this.#headersTimer)
    this.#headersTimer = undefined
    this.#raw = []
    this.#head = undefined
    this.#heads = 0
    this.#busy = true
    this.#served++
    this.#closeAfter = !head.keepAlive
    // A method that gives content a meaning says its empty content's length, as the HTTP/2 lane and undici do.
    const empty = !framed && PAYLOAD_METHODS.has(head.method) ? 'content-length: 0\r\n' : ''
    const text = `${head.method} ${head.url} HTTP/1.1\r\n${headerLines(headers, true)}${this.#routes.forwarded(host ?? '')}${empty}\r\n`
    this.begin({ head: text, headOnly: head.method === 'HEAD', idempotent: IDEMPOTENT.has(head.method), accept, route }, upstream)
    this.dispatch()
  }

  head (answer: ParsedHead, received: Buffer | undefined): boolean {
    this.answering(answer)
    const status = this.status
    const guard = (this.request as Forwarded).route.guard
    const scheme = this.#lane.options.scheme
    const adds = guard.adds(scheme)
    // Whether this answer ends the connection is decided with its head: one whose head went out
    // keeping the connection alive keeps it, its client may already be sending on it again.
    if (this.#lane.closing) this.#closeAfter = true
    const ends = this.#closeAfter
    // As received (it has a content-length): unless this connection ends after it, it goes on unchanged.
    if (received !== undefined && !ends) {
      this.#chunked = false
      if (!adds) return true
      // Only HSTS to add (an HTTPS route's default): its line goes before the received head's end, unless the replica sent one.
      const hsts = guard.hstsOnly(scheme)
      if (hsts !== undefined) {
        this.#pending = hasHeader(answer.headers, 'strict-transport-security') ? received.toString('latin1') : `${received.toString('latin1', 0, received.length - 2)}${hsts}\r\n`
        return false
      }
    }
    // Other extra headers replace the replica's of their names: the head is written anew with them.
    let text = `HTTP/1.1 ${status} ${answer.statusMessage}\r\n${adds ? guard.headLines(answer.headers, scheme) : headerLines(answer.headers, false)}`
    // An answer without a length (chunked, or ended by the replica closing) goes out chunked.
    this.#chunked = status !== 204 && status !== 304 && !hasHeader(answer.headers, 'content-length')
    if (this.#chunked) text += 'transfer-encoding: chunked\r\n'
    if (ends) text += 'connection: close\r\n'
    this.#pending = `${text}\r\n`
    return false
  }

  body (chunk: Buffer): void {
    if (this.#chunked) this.#pending += `${chunk.length.toString(16)}\r\n`
    else if (this.#pending === '') {
      // Nothing to put before it (the head went with it, or earlier): it goes as it is, but a small
      // piece the socket would keep (TLS) as a copy, so that the replica's read buffer stays free.
      if (writePiece(this.#socket, chunk, SMALL_PIECE)) this.#piecesWritten = true
      return
    }
    if (chunk.length <= SMALL_PIECE) {
      this.#pending += chunk.toString('latin1')
      if (this.#chunked) this.#pending += '\r\n'
      return
    }
    // Larger pieces go out as they are, with the pending text, in one write per read (corked until flush).
    if (!this.#corked) {
      this.#corked = true
      this.#socket.cork()
    }
    this.#writePending()
    this.#socket.write(chunk)
    this.#piecesWritten = true
    if (this.#chunked) this.#pending = '\r\n'
  }

  readonly #drained = (): void => {
    this.#awaitingDrain = false
    this.exchange?.resume()
  }

  /** Write what this read gathered; false when the client is slow (its 'drain' resumes the replica). */
  flush (): boolean {
    this.#active = this.#lane.now
    this.#writePending()
    if (this.#corked) {
      this.#corked = false
      this.#socket.uncork()
    }
    // Pieces written as they came stay referenced until written out (a TLS socket's writes end later).
    if (heldBy(this.#socket) === 0) this.#piecesWritten = false
    // Only the socket's queue counts here: one write to its handle that has not finished (at most a
    // read's worth, which all writes after it queue behind) says nothing of 'drain'.
    if (this.#socket.writableLength < HELD_FOR_CLIENT) return true
    // Past the high-water mark a write said "wait for drain", so 'drain' comes.
    if (!this.#awaitingDrain) {
      this.#awaitingDrain = true
      this.#socket.once('drain', this.#drained)
    }
    return false
  }

  get holdsPieces (): boolean {
    return this.#piecesWritten
  }

  #writePending (): void {
    const text = this.#pending
    if (text === '') return
    this.#pending = ''
    if (!this.#socket.destroyed) writeOut(this.#socket, text)
  }

  end (): void {
    if (this.#chunked && !(this.request as Forwarded).headOnly) this.#pending += '0\r\n\r\n'
    this.flush()
    this.endRequest()
    this.#lane.options.answered(this.status)
    this.#finished()
  }

  protected broken (): void {
    this.#socket.destroy()
  }

  protected refuse (status: number, message: string): void {
    const request = this.request as Forwarded
    this.#active = this.#lane.now
    if (this.#lane.closing) this.#closeAfter = true
    this.#socket.write(rawError(request.accept, request.headOnly, this.#closeAfter, status, message))
    this.#finished()
  }

  /** The answer is out: end the connection, or hand it over if requests came meanwhile. */
  #finished (): void {
    this.#busy = false
    this.exchange = undefined
    this.request = undefined
    if (this.#closeAfter) this.#socket.end()
    else if (this.#queued.length > 0) this.#handOff()
  }

  /** The general path takes the connection from here, starting with the bytes of the current request. */
  #handOff (current?: Buffer): void {
    const socket = this.#socket
    clearTimeout(this.#headersTimer)
    socket.off('data', this.#onData)
    socket.off('error', this.#onError)
    socket.off('close', this.#onClose)
    this.#parser.close()
    this.#lane.connections.delete(this)
    if (current !== undefined) this.#raw.push(current)
    socket.unshift(Buffer.concat([...this.#raw, ...this.#queued]))
    this.#lane.options.handOff(socket)
  }
}
