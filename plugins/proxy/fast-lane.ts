// The proxy's fast lane: the common request (HTTP/1.1, no body, for a routed domain with a replica
// in rotation) is read straight off the client's connection by llhttp and forwarded on the lane's own
// keep-alive connections to the replica; the answer streams back with back-pressure. Anything else
// (a body, an upgrade, pipelined requests, a parse error, HTTP/1.0, an ACME challenge, a redirect to
// HTTPS, an unknown host, no replica) is handed, with its bytes put back, to node:http's server,
// which answers it through the general path and keeps the connection from then on.
import type { Socket } from 'node:net'
import { rawError } from './error-page.js'
import { answerHeaders, forwardedHeaders, requestHeaders } from './headers.js'
import type { HttpParser, ParsedHead, ParserFactory } from './llhttp.js'
import type { RouteMetrics } from './metrics.js'
import type { Pools } from './pools.js'
import { begin, hostname, type Route, type RouteTable, type Upstream } from './route-table.js'
import type { AnswerHandler, Exchange, Failure } from './upstream-connections.js'

export interface LaneOptions {
  parser: ParserFactory
  table: RouteTable
  pools: Pools
  metrics: RouteMetrics
  scheme: 'http' | 'https'
  maxHeaderBytes: number
  maxUrlBytes: number
  headersTimeoutMs: number
  idleTimeoutMs: number
  connectionFailed: (upstream: Upstream) => void
  /** Whether the general path answers this request itself (an ACME challenge, a redirect to HTTPS). */
  general?: (url: string, route: Route) => boolean
  /** Give the connection (its unread bytes put back) to node:http's server. */
  handOff: (socket: Socket) => void
  /** An answer went out, with this status. */
  answered: (status: number) => void
}

/** Failures that mean the request never reached the replica's application: safe to send to another one. */
const CONNECT_FAILURES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EHOSTUNREACH', 'EPIPE', 'CONNECT_TIMEOUT', 'CLOSED'])
const TIMEOUTS = new Set(['CONNECT_TIMEOUT', 'HEADERS_TIMEOUT'])
const REQUEST_TIMEOUT = 'HTTP/1.1 408 Request Timeout\r\nconnection: close\r\ncontent-length: 0\r\n\r\n'

export class FastLane {
  readonly options: LaneOptions
  readonly connections = new Set<LaneConnection>()
  /** The listener is closing: connections end after their answer in flight, idle ones at once. */
  closing = false

  constructor (options: LaneOptions) {
    this.options = options
  }

  accept (socket: Socket): void {
    this.connections.add(new LaneConnection(this, socket))
  }

  closeIdle (): void {
    this.closing = true
    for (const connection of this.connections) connection.closeIfIdle()
  }

  closeAll (): void {
    for (const connection of this.connections) connection.destroy()
  }
}

/** A request taken by the lane, kept for a retry. */
interface Forwarded {
  head: string
  headOnly: boolean
  accept: string | undefined
  route: Route
}

class LaneConnection {
  readonly #lane: FastLane
  readonly #socket: Socket
  readonly #parser: HttpParser
  /** Bytes of the request being read, for a hand-off. */
  #raw: Buffer[] = []
  /** Bytes that came while a request was in flight. */
  readonly #queued: Buffer[] = []
  #head: ParsedHead | undefined
  #begun = 0
  #completed = 0
  #body = false
  #exchange: Exchange | undefined
  #busy = false
  #closeAfter = false
  #corked = false
  #headersTimer: NodeJS.Timeout | undefined
  #endRequest: (() => void) | undefined
  #forwarded: string | undefined
  /** Requests taken on this connection. */
  #served = 0
  #forwardedHost = ''

  constructor (lane: FastLane, socket: Socket) {
    this.#lane = lane
    this.#socket = socket
    this.#parser = lane.options.parser('request', lane.options.maxHeaderBytes, {
      begin: () => { this.#begun++ },
      head: head => { this.#head = head; return undefined },
      body: () => { this.#body = true },
      complete: () => { this.#completed++ }
    })
    socket.setNoDelay(true)
    socket.setTimeout(lane.options.idleTimeoutMs)
    socket.on('timeout', this.#onTimeout)
    socket.on('data', this.#onData)
    socket.on('error', this.#onError)
    socket.on('close', this.#onClose)
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

  readonly #onTimeout = (): void => { this.#socket.destroy() }
  readonly #onError = (): void => { this.#socket.destroy() }

  readonly #onClose = (): void => {
    clearTimeout(this.#headersTimer)
    this.#exchange?.abort()
    this.#endRequest?.()
    this.#parser.close()
    this.#lane.connections.delete(this)
  }

  readonly #onData = (chunk: Buffer): void => {
    if (this.#busy) {
      this.#queued.push(chunk)
      this.#socket.pause()
      return
    }
    this.#read(chunk)
  }

  #read (chunk: Buffer): void {
    this.#raw.push(chunk)
    const parsed = this.#parser.execute(chunk)
    const head = this.#head
    if (parsed instanceof Error || this.#body || this.#begun > 1 || (head !== undefined && this.#completed === 0)) {
      this.#handOff()
      return
    }
    if (head === undefined) {
      this.#headersTimer ??= setTimeout(this.#headersTimedOut, this.#lane.options.headersTimeoutMs)
      return
    }
    this.#take(head)
  }

  readonly #headersTimedOut = (): void => {
    this.#socket.end(REQUEST_TIMEOUT, () => { this.#socket.destroy() })
  }

  /** Forward a complete request without a body, or hand it to the general path. */
  #take (head: ParsedHead): void {
    const options = this.#lane.options
    if (head.upgrade || head.versionMinor !== 1 || head.url.length > options.maxUrlBytes) {
      this.#handOff()
      return
    }
    const headers = head.headers
    let host: string | undefined
    let accept: string | undefined
    for (let i = 0; i < headers.length; i += 2) {
      const name = headers[i]
      if (name.length === 4 && name.toLowerCase() === 'host') host = headers[i + 1]
      else if (name.length === 6 && name.toLowerCase() === 'accept') accept = headers[i + 1]
    }
    const servername = (this.#socket as { servername?: string | false }).servername
    const route = options.table.route(host)
    const upstream = route === undefined || (typeof servername === 'string' && hostname(host) !== servername.toLowerCase()) || options.general?.(head.url, route) === true
      ? undefined
      : options.table.pick(route)
    if (route === undefined || upstream === undefined) {
      this.#handOff()
      return
    }
    clearTimeout(this.#headersTimer)
    this.#headersTimer = undefined
    this.#raw = []
    this.#head = undefined
    this.#begun = this.#completed = 0
    this.#busy = true
    this.#served++
    this.#closeAfter = !head.keepAlive
    let lines = `${head.method} ${head.url} HTTP/1.1\r\n`
    const kept = requestHeaders(headers)
    for (let i = 0; i < kept.length; i += 2) lines += `${kept[i]}: ${kept[i + 1]}\r\n`
    this.#forward({ head: `${lines}${this.#forwardedLines(host ?? '')}\r\n`, headOnly: head.method === 'HEAD', accept, route }, upstream, 1, false)
  }

  /** The forwarding headers of this connection's requests for `host` (the same on every request, as a rule). */
  #forwardedLines (host: string): string {
    if (host !== this.#forwardedHost || this.#forwarded === undefined) {
      const forwarded = forwardedHeaders(this.#socket.remoteAddress, host, this.#lane.options.scheme)
      let lines = ''
      for (let i = 0; i < forwarded.length; i += 2) lines += `${forwarded[i]}: ${forwarded[i + 1]}\r\n`
      this.#forwarded = lines
      this.#forwardedHost = host
    }
    return this.#forwarded
  }

  #forward (request: Forwarded, upstream: Upstream, retries: number, fresh: boolean): void {
    const options = this.#lane.options
    const end = begin(upstream)
    this.#endRequest = end
    const started = performance.now()
    const socket = this.#socket
    let status = 0
    let chunked = false
    const handler: AnswerHandler = {
      head: answer => {
        status = answer.statusCode
        options.metrics.answered(request.route, status, (performance.now() - started) / 1000)
        const headers = answerHeaders(answer.headers)
        let lines = `HTTP/1.1 ${status} ${answer.statusMessage}\r\n`
        let length = false
        for (let i = 0; i < headers.length; i += 2) {
          if (headers[i].length === 14 && headers[i].toLowerCase() === 'content-length') length = true
          lines += `${headers[i]}: ${headers[i + 1]}\r\n`
        }
        // An answer without a length (chunked, or ended by the replica closing) goes out chunked.
        chunked = !length && status !== 204 && status !== 304
        if (chunked) lines += 'transfer-encoding: chunked\r\n'
        if (this.#closeAfter || this.#lane.closing) lines += 'connection: close\r\n'
        socket.cork()
        this.#corked = true
        socket.write(`${lines}\r\n`, 'latin1')
      },
      body: chunk => {
        if (socket.destroyed) return true
        if (chunked) socket.write(`${chunk.length.toString(16)}\r\n`, 'latin1')
        const more = socket.write(chunk)
        if (chunked) socket.write('\r\n', 'latin1')
        if (!more) socket.once('drain', () => { this.#exchange?.resume() })
        return more
      },
      end: () => {
        end()
        if (chunked && !request.headOnly) socket.write('0\r\n\r\n', 'latin1')
        options.answered(status)
        this.#finished()
      },
      flush: () => {
        if (!this.#corked) return
        this.#corked = false
        socket.uncork()
      },
      fail: failure => { this.#failed(request, upstream, failure, status !== 0, retries, fresh) }
    }
    this.#exchange = options.pools.lane(upstream.origin, upstream.host, upstream.port, options.parser).send(request.head, request.headOnly, handler, fresh)
  }

  #failed (request: Forwarded, upstream: Upstream, failure: Failure, answered: boolean, retries: number, fresh: boolean): void {
    this.#endRequest?.()
    if (answered) {
      // Part of the answer went out: the client can only learn of the failure by the connection's end.
      this.#socket.destroy()
      return
    }
    if (failure.stale && !fresh) {
      // The replica had closed the kept connection: the same request on a new connection.
      this.#forward(request, upstream, retries, true)
      return
    }
    const connection = CONNECT_FAILURES.has(failure.code)
    if (connection) this.#lane.options.connectionFailed(upstream)
    const next = connection && retries > 0 ? this.#lane.options.table.pick(request.route, upstream) : undefined
    if (next !== undefined) {
      this.#forward(request, next, retries - 1, false)
      return
    }
    const service = request.route.service
    if (TIMEOUTS.has(failure.code)) this.#answerError(request, 504, `${service} did not answer in time`)
    else this.#answerError(request, 502, `${service} could not be reached`)
  }

  #answerError (request: Forwarded, status: number, message: string): void {
    this.#lane.options.metrics.answered(request.route, status)
    this.#socket.write(rawError(request.accept, request.headOnly, this.#closeAfter || this.#lane.closing, status, message))
    this.#lane.options.answered(status)
    this.#finished()
  }

  /** The answer is out: end the connection, or read what came meanwhile. */
  #finished (): void {
    this.#busy = false
    this.#exchange = undefined
    this.#endRequest = undefined
    if (this.#closeAfter || this.#lane.closing) {
      this.#socket.end()
      return
    }
    if (this.#queued.length > 0) process.nextTick(this.#readQueued)
  }

  readonly #readQueued = (): void => {
    while (this.#queued.length > 0 && !this.#busy && !this.#socket.destroyed) {
      const chunk = this.#queued.shift() as Buffer
      this.#read(chunk)
      if (!this.#lane.connections.has(this)) return
    }
    if (!this.#busy) this.#socket.resume()
  }

  /** The general path takes the connection from here, starting with the bytes of the current request. */
  #handOff (): void {
    const socket = this.#socket
    clearTimeout(this.#headersTimer)
    socket.setTimeout(0)
    socket.off('timeout', this.#onTimeout)
    socket.off('data', this.#onData)
    socket.off('error', this.#onError)
    socket.off('close', this.#onClose)
    this.#parser.close()
    this.#lane.connections.delete(this)
    socket.unshift(Buffer.concat([...this.#raw, ...this.#queued.splice(0)]))
    this.#lane.options.handOff(socket)
  }
}
