// Keep-alive connections to one replica, for the proxy's fast lane: a request head goes out on an
// idle connection (or a new one), the answer is parsed by llhttp and handed over piece by piece, and
// the connection goes back to the idle list when the answer has ended and both sides keep it alive.
// Timeouts: connecting, waiting for the answer's head, silence inside its body, and idling.
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
  /** Called once per read of the replica's answer, after its pieces: the moment to flush. */
  flush: () => void
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

  /** The replica is gone: close idle connections now, busy ones when their answer ends. */
  close (): void {
    this.closed = true
    for (const connection of this.idle.splice(0)) connection.destroy()
  }
}

class Connection implements Exchange {
  readonly #pool: UpstreamConnections
  readonly #socket: Socket
  readonly #parser: HttpParser
  #handler: AnswerHandler | undefined
  #headOnly = false
  #used = false
  #reused = false
  #answered = false
  #interim = false
  #keepAlive = false
  #error: string | undefined

  constructor (pool: UpstreamConnections) {
    this.#pool = pool
    this.#parser = pool.parser('response', 0, {
      head: head => this.#head(head),
      body: chunk => { if (this.#handler?.body(chunk) === false) this.#socket.pause() },
      complete: () => { this.#complete() }
    })
    const socket = connect({ host: pool.host, port: pool.port, noDelay: true })
    this.#socket = socket
    socket.setTimeout(pool.settings.connectTimeoutMs)
    socket.once('connect', () => { socket.setTimeout(pool.settings.headersTimeoutMs) })
    socket.on('timeout', () => {
      this.#error = socket.connecting ? 'CONNECT_TIMEOUT' : this.#answered ? 'BODY_TIMEOUT' : this.#handler !== undefined ? 'HEADERS_TIMEOUT' : 'IDLE'
      socket.destroy()
    })
    socket.on('data', (chunk: Buffer) => { this.#read(chunk) })
    socket.on('end', () => {
      // An answer delimited by the connection's close ends here.
      if (this.#handler !== undefined && this.#answered) this.#parser.finish()
    })
    socket.on('error', (err: NodeJS.ErrnoException) => { this.#error ??= err.code ?? 'CLOSED' })
    socket.on('close', () => { this.#closed() })
  }

  start (head: string, headOnly: boolean, handler: AnswerHandler): void {
    this.#reused = this.#used
    this.#used = true
    this.#handler = handler
    this.#headOnly = headOnly
    this.#answered = false
    if (this.#reused) this.#socket.setTimeout(this.#pool.settings.headersTimeoutMs)
    this.#socket.write(head, 'latin1')
  }

  resume (): void {
    this.#socket.resume()
  }

  abort (): void {
    this.#handler = undefined
    this.#socket.destroy()
  }

  destroy (): void {
    this.#socket.destroy()
  }

  #read (chunk: Buffer): void {
    const handler = this.#handler
    if (handler === undefined) {
      // Bytes from an idle connection: nothing can be trusted on it any more.
      this.#socket.destroy()
      return
    }
    const parsed = this.#parser.execute(chunk)
    if (parsed instanceof Error) {
      this.#error = 'PARSE'
      this.#socket.destroy()
    }
    handler.flush()
  }

  #head (head: ParsedHead): number | undefined {
    // An interim answer (100 Continue, 103 Early Hints) is not passed on; the final one follows.
    this.#interim = head.statusCode < 200
    if (this.#interim) return undefined
    this.#answered = true
    this.#keepAlive = head.keepAlive
    this.#socket.setTimeout(this.#pool.settings.bodyTimeoutMs)
    this.#handler?.head(head)
    return this.#headOnly ? 1 : undefined
  }

  #complete (): void {
    if (this.#interim) return
    const handler = this.#handler
    this.#handler = undefined
    handler?.end()
    if (!this.#keepAlive || this.#pool.closed || this.#socket.destroyed) {
      this.#socket.destroy()
      return
    }
    this.#socket.setTimeout(this.#pool.settings.idleTimeoutMs)
    this.#pool.idle.push(this)
  }

  #closed (): void {
    const index = this.#pool.idle.indexOf(this)
    if (index !== -1) this.#pool.idle.splice(index, 1)
    this.#parser.close()
    const handler = this.#handler
    if (handler === undefined) return
    this.#handler = undefined
    handler.fail({ code: this.#error ?? 'CLOSED', stale: this.#reused && !this.#answered && this.#error !== 'HEADERS_TIMEOUT' })
  }
}
