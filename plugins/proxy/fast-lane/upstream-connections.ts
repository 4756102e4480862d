// Keep-alive connections to one replica, for the proxy's fast lane: a request head goes out on an
// idle connection (or a new one), its body after it if it has one (by its length, or chunked, as the
// client's stream gives it, with back-pressure), the answer is read into a buffer of the connection's
// own and parsed by llhttp, and the connection goes back to the idle list when the answer has ended,
// the request's body was sent whole and both sides keep it alive. A body framed by content-length is handed on straight from that buffer, without the
// copy llhttp makes of each piece, and its head with it as it came where it can (head-as-received.ts);
// the buffer is replaced only when the client's socket keeps part of it. A slow client stops the
// reads until it catches up.
// Timeouts (connecting, waiting for the answer's head, silence inside its body, idling) are checked
// by a sweep over all connections a few times a second, not by a timer per request.
import { connect, type Socket } from 'node:net'
import { writeOut } from './direct-write.js'
import { cutHopByHop } from './head-as-received.js'
import { isNamed } from '../headers.js'
import { headEnd, type HttpParser, type ParsedHead, type ParserFactory } from './llhttp.js'

export interface UpstreamSettings {
  connectTimeoutMs: number
  /** Longest wait for the answer's head. */
  headersTimeoutMs: number
  /** Longest silence inside an answer's body; 0: none. */
  bodyTimeoutMs: number
  /** An idle connection is closed after this long. */
  idleTimeoutMs: number
}

export interface Failure {
  /** The socket's error code, or CONNECT_TIMEOUT / HEADERS_TIMEOUT / BODY_TIMEOUT / CLOSED / PARSE. */
  code: string
  /** A reused connection failed before any byte of the answer: the replica had closed it meanwhile. */
  stale: boolean
}

export interface AnswerHandler {
  /** Whether the handler can pass a head on as it was received (then `head` gets its bytes when they allow it). */
  readonly passesHeads: boolean
  /**
   * The answer's head. `received`: its bytes (the hop-by-hop lines cut), when they can go on as they
   * are, as the start of the first body piece; true back when the handler takes them so (false: it
   * writes the head itself, from these bytes or the parsed head, and the first piece starts with the body).
   */
  head: (head: ParsedHead, received: Buffer | undefined) => boolean
  /** A piece of the body: a copy, or a view of the read buffer, whose bytes change with the next read unless `holdsPieces`. */
  body: (chunk: Buffer) => void
  /** The answer has ended: write what is left of it (no flush follows). */
  end: () => void
  /** Called after each read of the replica's answer that does not end it: the moment to write its pieces; false: the client is slow, wait for `resume()`. */
  flush: () => boolean
  /** After a flush or the end: the client's socket may still hold pieces as they were passed (the next read needs a buffer of its own). */
  readonly holdsPieces: boolean
  fail: (failure: Failure) => void
}

export interface Exchange {
  resume: () => void
  /** The client went away: drop the connection, nothing more is reported. */
  abort: () => void
  /**
   * A piece of the request's body, framed as the request said; false when the replica's connection
   * holds enough: `drained` follows once it has room. Nothing is sent once the answer has ended.
   */
  write: (piece: Buffer, drained: () => void) => boolean
  /** The request's body has ended. */
  finish: () => void
}

/** A request for a replica: its head as HTTP/1.1 text, and how its body follows, if it has one. */
export interface OutgoingRequest {
  head: string
  /** A HEAD request, whose answer has no body. */
  headOnly: boolean
  /** The body follows the head through `Exchange.write`, framed by the head's content-length or chunked here. */
  body?: 'length' | 'chunked'
}

export class UpstreamConnections {
  readonly host: string
  readonly port: number
  readonly settings: UpstreamSettings
  readonly parser: ParserFactory
  readonly idle: Connection[] = []
  readonly all = new Set<Connection>()
  closed = false

  constructor (host: string, port: number, settings: UpstreamSettings, parser: ParserFactory) {
    this.host = host
    this.port = port
    this.settings = settings
    this.parser = parser
  }

  /** Send a request's head (`fresh`: on a new connection); its body, if any, goes through the exchange. */
  send (request: OutgoingRequest, handler: AnswerHandler, fresh = false): Exchange {
    const connection = (fresh ? undefined : this.idle.pop()) ?? new Connection(this)
    connection.start(request, handler)
    return connection
  }

  /**
   * The time of the last sweep: connections note it as the start of a phase (no clock read per
   * request), so a noted time is up to one sweep early.
   */
  clock = performance.now()

  /** End the connections whose phase has lasted longer than its timeout (`period`: the time between sweeps). */
  sweep (now: number, period: number): void {
    this.clock = now
    for (const connection of this.all) connection.expire(now - period)
  }

  /** The replica is gone: close idle connections now, busy ones when their answer ends. */
  close (): void {
    this.closed = true
    for (const connection of this.idle.splice(0)) connection.destroy()
  }
}

type Phase = 'connecting' | 'waiting' | 'body' | 'idle'

/** Size of each connection's read buffer. */
const READ_BUFFER = 64 * 1024

/** A content-length value of 1 to 15 digits, as a number; else 0. */
function plainLength (value: string): number {
  if (value.length === 0 || value.length > 15) return 0
  let length = 0
  for (let i = 0; i < value.length; i++) {
    const digit = value.charCodeAt(i) - 48
    if (digit < 0 || digit > 9) return 0
    length = length * 10 + digit
  }
  return length
}

/** The length of a body framed by one plain content-length header, which can be handed on as read; else 0. */
function directLength (headers: string[]): number {
  let length = 0
  let seen = 0
  for (let i = 0; i < headers.length; i += 2) {
    const name = headers[i]
    if (isNamed(name, 'transfer-encoding')) return 0
    if (isNamed(name, 'content-length')) {
      seen++
      length = plainLength(headers[i + 1])
    }
  }
  return seen === 1 ? length : 0
}

class Connection implements Exchange {
  readonly #pool: UpstreamConnections
  readonly #socket: Socket
  readonly #parser: HttpParser
  #buffer = Buffer.allocUnsafeSlow(READ_BUFFER)
  #handler: AnswerHandler | undefined
  /** The handler of the answer being read (kept, for `holdsPieces`, when its answer ends during the read). */
  #flushTarget: AnswerHandler | undefined
  #phase: Phase = 'connecting'
  /** When the phase began, or the last read in a body. */
  #since: number
  #headOnly = false
  /** The request's body is still being sent (how it is framed): the connection cannot be kept until it has ended. */
  #sending: OutgoingRequest['body']
  #used = false
  #reused = false
  #interim = false
  #keepAlive = false
  /** Bytes of the answer's body still to come that are passed on straight from the read buffer. */
  #direct = 0
  /** The read being parsed, and where in it the next head's search starts (-1: not known). */
  #read: Buffer | undefined
  #scanFrom = -1
  /** Where the last head found in the read being parsed starts. */
  #headStart = 0
  /** The last read ended inside a head (or after an interim answer). */
  #carried = false
  /** Pieces of the read buffer went to the handler during this read. */
  #lent = false
  /** Reads stopped for a slow client. */
  #paused = false
  #error: string | undefined

  constructor (pool: UpstreamConnections) {
    this.#pool = pool
    this.#since = pool.clock
    this.#parser = pool.parser('response', 0, {
      head: head => this.#head(head),
      // A copy: a body of another framing (chunked, or ended by the close), or after a head split across reads.
      body: chunk => { this.#handler?.body(chunk) },
      complete: () => { this.#complete() }
    })
    const socket = connect({ host: pool.host, port: pool.port, noDelay: true, onread: { buffer: () => this.#buffer, callback: this.#onRead } })
    this.#socket = socket
    pool.all.add(this)
    socket.once('connect', () => { this.#enter(this.#handler === undefined ? 'idle' : 'waiting') })
    socket.on('end', () => {
      // An answer delimited by the connection's close ends here.
      if (this.#handler !== undefined && this.#answered) this.#parser.finish()
    })
    socket.on('error', (err: NodeJS.ErrnoException) => { this.#error ??= err.code ?? 'CLOSED' })
    socket.on('close', () => { this.#closed() })
  }

  get #answered (): boolean {
    return this.#phase === 'body'
  }

  start (request: OutgoingRequest, handler: AnswerHandler): void {
    this.#reused = this.#used
    this.#used = true
    this.#handler = handler
    this.#flushTarget = handler
    this.#headOnly = request.headOnly
    this.#sending = request.body
    if (this.#phase !== 'connecting') this.#enter('waiting')
    writeOut(this.#socket, request.head)
  }

  write (piece: Buffer, drained: () => void): boolean {
    const socket = this.#socket
    if (this.#handler === undefined || socket.destroyed) return true
    // The wait for the answer's head counts from the last piece sent.
    if (this.#phase === 'waiting') this.#since = this.#pool.clock
    if (this.#sending === 'chunked') {
      socket.cork()
      socket.write(`${piece.length.toString(16)}\r\n`, 'latin1')
      socket.write(piece)
      socket.write('\r\n', 'latin1')
      socket.uncork()
    } else socket.write(piece)
    if (!socket.writableNeedDrain) return true
    socket.once('drain', drained)
    return false
  }

  finish (): void {
    if (this.#handler === undefined || this.#socket.destroyed) return
    if (this.#sending === 'chunked') this.#socket.write('0\r\n\r\n', 'latin1')
    this.#sending = undefined
  }

  resume (): void {
    this.#paused = false
    this.#socket.resume()
  }

  abort (): void {
    this.#handler = undefined
    this.#socket.destroy()
  }

  destroy (): void {
    this.#socket.destroy()
  }

  /** `now`, less the most a noted time can be early. */
  expire (now: number): void {
    const { connectTimeoutMs, headersTimeoutMs, bodyTimeoutMs, idleTimeoutMs } = this.#pool.settings
    const limit = this.#phase === 'connecting' ? connectTimeoutMs : this.#phase === 'waiting' ? headersTimeoutMs : this.#phase === 'body' ? bodyTimeoutMs : idleTimeoutMs
    if (limit === 0 || now - this.#since <= limit) return
    this.#error = `${this.#phase === 'connecting' ? 'CONNECT' : this.#phase === 'waiting' ? 'HEADERS' : this.#phase.toUpperCase()}_TIMEOUT`
    this.#socket.destroy()
  }

  #enter (phase: Phase): void {
    this.#phase = phase
    this.#since = this.#pool.clock
  }

  /** Each read: parse it, hand the body on, flush; false stops the reads (a slow client). */
  readonly #onRead = (length: number, buffer: Buffer): boolean => {
    const read = buffer.subarray(0, length)
    let at = 0
    let result: number | Error = 0
    if (this.#direct > 0) {
      // More of a body passed on as read.
      at = Math.min(length, this.#direct)
      const piece = at === length ? read : read.subarray(0, at)
      this.#direct -= at
      this.#lent = true
      this.#handler?.body(piece)
      result = this.#parser.executeBody(piece)
      if (this.#direct === 0 && !(result instanceof Error)) this.#complete()
    }
    if (at < length && !(result instanceof Error) && !this.#socket.destroyed) {
      this.#read = read
      // A head that began in an earlier read: where it ends in this one is not known.
      this.#scanFrom = this.#carried ? -1 : at
      result = this.#parser.execute(at === 0 ? read : read.subarray(at))
      this.#read = undefined
    }
    if (result instanceof Error) {
      this.#error = 'PARSE'
      this.#socket.destroy()
    }
    this.#carried = this.#phase === 'waiting'
    if (this.#phase === 'body') this.#since = this.#pool.clock
    const target = this.#flushTarget
    const answering = this.#handler !== undefined
    // An answer that ended in this read was flushed by its end.
    if (!answering) this.#flushTarget = undefined
    else if (target?.flush() === false) this.#paused = true
    // The client's socket keeps pieces of this buffer: the next read goes into a new one.
    if (this.#lent && target?.holdsPieces === true) this.#buffer = Buffer.allocUnsafeSlow(READ_BUFFER)
    this.#lent = false
    return !this.#paused
  }

  /** Where the head that just ended in the read being parsed ends; -1: not known. */
  #headEnd (): number {
    const read = this.#read
    if (read === undefined || this.#scanFrom < 0) return -1
    this.#headStart = this.#scanFrom
    this.#scanFrom = headEnd(read, this.#scanFrom)
    return this.#scanFrom
  }

  #head (head: ParsedHead): number | undefined {
    const handler = this.#handler
    if (handler === undefined) {
      // An answer nobody asked for (on an idle connection): nothing can be trusted on it any more.
      this.#error = 'UNASKED'
      this.#socket.destroy()
      return undefined
    }
    const bodyStart = this.#headEnd()
    // An interim answer (100 Continue, 103 Early Hints) is not passed on; the final one follows.
    this.#interim = head.statusCode < 200
    if (this.#interim) return undefined
    this.#enter('body')
    this.#keepAlive = head.keepAlive
    const length = this.#headOnly || head.statusCode === 204 || head.statusCode === 304 || bodyStart === -1 ? 0 : directLength(head.headers)
    if (length === 0) {
      handler.head(head, undefined)
      return this.#headOnly ? 1 : undefined
    }
    // The body is passed on from the read buffer, not through llhttp's copies, and the head with it
    // when its bytes can go on as they came.
    const read = this.#read as Buffer
    const headStart = handler.passesHeads ? cutHopByHop(read, this.#headStart, bodyStart, head) : -1
    const from = handler.head(head, headStart === -1 ? undefined : read.subarray(headStart, bodyStart)) ? headStart : bodyStart
    // The handler could not take the answer and dropped the exchange (the connection is closed).
    if (this.#handler !== handler) return undefined
    const end = Math.min(read.length, bodyStart + length)
    this.#direct = length - (end - bodyStart)
    this.#parser.passOnRest()
    if (end > from) {
      this.#lent = true
      handler.body(read.subarray(from, end))
    }
    if (this.#direct === 0) this.#complete()
    return undefined
  }

  #complete (): void {
    if (this.#interim || this.#socket.destroyed) return
    const handler = this.#handler
    this.#handler = undefined
    this.#direct = 0
    handler?.end()
    // A body not sent whole would be read by the replica as the start of the next request.
    if (!this.#keepAlive || this.#pool.closed || this.#sending !== undefined) {
      this.#socket.destroy()
      return
    }
    this.#enter('idle')
    this.#pool.idle.push(this)
  }

  #closed (): void {
    this.#pool.all.delete(this)
    const index = this.#pool.idle.indexOf(this)
    if (index !== -1) this.#pool.idle.splice(index, 1)
    this.#parser.close()
    const handler = this.#handler
    if (handler === undefined) return
    this.#handler = undefined
    handler.fail({ code: this.#error ?? 'CLOSED', stale: this.#reused && !this.#answered && this.#error !== 'HEADERS_TIMEOUT' })
  }
}
