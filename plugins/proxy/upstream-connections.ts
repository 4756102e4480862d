// Keep-alive connections to one replica, for the proxy's fast lane: a request head goes out on an
// idle connection (or a new one), the answer is read by llhttp straight off the socket and handed
// over piece by piece, and the connection goes back to the idle list when the answer has ended and
// both sides keep it alive. A slow client switches the connection to 'data' events, which can pause.
// Timeouts (connecting, waiting for the answer's head, silence inside its body, idling) are checked
// by a sweep over all connections a few times a second, not by a timer per request.
import { connect, type Socket } from 'node:net'
import type { HttpParser, ParsedHead, ParserFactory } from './llhttp.js'

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
  head: (head: ParsedHead) => void
  /** A piece of the body; false: the client is slow, wait for `resume()`. */
  body: (chunk: Buffer) => boolean
  end: () => void
  /** Called once per read of the replica's answer, after its pieces: the moment to flush; false: the client is slow. */
  flush: () => boolean
  fail: (failure: Failure) => void
}

export interface Exchange {
  resume: () => void
  /** The client went away: drop the connection, nothing more is reported. */
  abort: () => void
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

  /** Send a request head (`headOnly`: a HEAD request, whose answer has no body). */
  send (head: string, headOnly: boolean, handler: AnswerHandler, fresh = false): Exchange {
    const connection = (fresh ? undefined : this.idle.pop()) ?? new Connection(this)
    connection.start(head, headOnly, handler)
    return connection
  }

  /** End the connections whose phase has lasted longer than its timeout. */
  sweep (now: number): void {
    for (const connection of this.all) connection.expire(now)
  }

  /** The replica is gone: close idle connections now, busy ones when their answer ends. */
  close (): void {
    this.closed = true
    for (const connection of this.idle.splice(0)) connection.destroy()
  }
}

type Phase = 'connecting' | 'waiting' | 'body' | 'idle'

class Connection implements Exchange {
  readonly #pool: UpstreamConnections
  readonly #socket: Socket
  readonly #parser: HttpParser
  #handler: AnswerHandler | undefined
  /** The handler to flush after each read (kept when its answer ends during the read). */
  #flushTarget: AnswerHandler | undefined
  #phase: Phase = 'connecting'
  /** When the phase began, or the last read in a body. */
  #since = performance.now()
  #headOnly = false
  #used = false
  #reused = false
  #interim = false
  #keepAlive = false
  /** Read by the parser in C++; false once a slow client made it switch to 'data' events. */
  #consumed = false
  #slowClient = false
  #error: string | undefined

  constructor (pool: UpstreamConnections) {
    this.#pool = pool
    this.#parser = pool.parser('response', 0, {
      head: head => this.#head(head),
      body: chunk => { if (this.#handler?.body(chunk) === false) this.#slowClient = true },
      complete: () => { this.#complete() }
    })
    const socket = connect({ host: pool.host, port: pool.port, noDelay: true })
    this.#socket = socket
    pool.all.add(this)
    socket.once('connect', () => {
      this.#enter(this.#handler === undefined ? 'idle' : 'waiting')
      this.#consumed = this.#parser.consume(socket, this.#executed)
      if (!this.#consumed) socket.on('data', this.#onData)
    })
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

  start (head: string, headOnly: boolean, handler: AnswerHandler): void {
    this.#reused = this.#used
    this.#used = true
    this.#handler = handler
    this.#flushTarget = handler
    this.#headOnly = headOnly
    if (this.#phase !== 'connecting') this.#enter('waiting')
    this.#socket.write(head, 'latin1')
  }

  resume (): void {
    this.#slowClient = false
    this.#socket.resume()
  }

  abort (): void {
    this.#handler = undefined
    this.#socket.destroy()
  }

  destroy (): void {
    this.#socket.destroy()
  }

  expire (now: number): void {
    const { connectTimeoutMs, headersTimeoutMs, bodyTimeoutMs, idleTimeoutMs } = this.#pool.settings
    const limit = this.#phase === 'connecting' ? connectTimeoutMs : this.#phase === 'waiting' ? headersTimeoutMs : this.#phase === 'body' ? bodyTimeoutMs : idleTimeoutMs
    if (limit === 0 || now - this.#since <= limit) return
    this.#error = `${this.#phase === 'connecting' ? 'CONNECT' : this.#phase === 'waiting' ? 'HEADERS' : this.#phase.toUpperCase()}_TIMEOUT`
    this.#socket.destroy()
  }

  #enter (phase: Phase): void {
    this.#phase = phase
    this.#since = performance.now()
  }

  /** After each read the parser had in C++. */
  readonly #executed = (result: number | Error): void => {
    this.#afterRead(result)
    if (this.#slowClient && this.#consumed && !this.#socket.destroyed) {
      this.#consumed = false
      this.#parser.unconsume()
      this.#socket.on('data', this.#onData)
      this.#socket.pause()
    }
  }

  readonly #onData = (chunk: Buffer): void => {
    this.#afterRead(this.#parser.execute(chunk))
    if (this.#slowClient) this.#socket.pause()
  }

  #afterRead (result: number | Error): void {
    if (result instanceof Error) {
      this.#error = 'PARSE'
      this.#socket.destroy()
    }
    if (this.#phase === 'body') this.#since = performance.now()
    const target = this.#flushTarget
    if (this.#handler === undefined) this.#flushTarget = undefined
    if (target?.flush() === false && this.#handler !== undefined) this.#slowClient = true
  }

  #head (head: ParsedHead): number | undefined {
    if (this.#handler === undefined) {
      // An answer nobody asked for (on an idle connection): nothing can be trusted on it any more.
      this.#error = 'UNASKED'
      this.#socket.destroy()
      return undefined
    }
    // An interim answer (100 Continue, 103 Early Hints) is not passed on; the final one follows.
    this.#interim = head.statusCode < 200
    if (this.#interim) return undefined
    this.#enter('body')
    this.#keepAlive = head.keepAlive
    this.#handler?.head(head)
    return this.#headOnly ? 1 : undefined
  }

  #complete (): void {
    if (this.#interim || this.#socket.destroyed) return
    const handler = this.#handler
    this.#handler = undefined
    this.#slowClient = false
    handler?.end()
    if (!this.#keepAlive || this.#pool.closed) {
      this.#socket.destroy()
      return
    }
    // Paused for a slow client: the next answer on it must flow.
    if (this.#socket.isPaused()) this.#socket.resume()
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
