// Listeners: a fastify instance per fastify listener, or a raw server a plugin drives itself. A
// fastify listener answers every failure in the shared {"error": "..."} format, in JSON or in the
// format a plugin declares for its prefix: route failures, unknown routes, bad URLs, a path parameter
// longer than the router matches, a query parameter given twice, and the requests node refuses before
// routing; and it limits body sizes. Both kinds receive their connections from an acceptor
// (acceptors.ts), which binds the address with clear errors when a port cannot be bound and may
// outlive the listener; they count their responses, and close by closing their WebSockets (1001)
// and draining in-flight requests up to a deadline.
import diagnostics from 'node:diagnostics_channel'
import { maxHeaderSize, STATUS_CODES, type ServerResponse } from 'node:http'
import type { Server, Socket } from 'node:net'
import Fastify, { type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyPluginAsync, type FastifyReply, type FastifyRequest } from 'fastify'
import type { Logger } from 'pino'
import type { Acceptor, Acceptors } from './acceptors.js'
import { BadRequest, codeOfStatus, KERNEL_CODES, StartupError, messageOf } from './errors.js'
import { describeHttpError, pathOf } from './http-errors.js'
import { reachableUrl, type OwnedListener } from './listeners.js'
import type { ErrorBody, ErrorFormat, RouteOptions, ServeOptions } from './plugin.js'

export interface ListenerSettings {
  host: string
  port: number
  body_limit: number
  headers_timeout_ms?: number
  request_timeout_ms?: number
  idle_timeout_ms?: number
}

/** What the access log records of a request and a reply: never headers, never the query string. */
const ACCESS_LOG_SERIALIZERS = {
  req: (request: FastifyRequest) => ({ method: request.method, path: pathOf(request.url), remoteAddress: request.ip }),
  res: (reply: FastifyReply) => ({ statusCode: reply.statusCode })
}

/** The router's longest path parameter (fastify's default). */
const MAX_PARAM_LENGTH = 100
/** Largest WebSocket message a listener takes (an agent's state report can be large). */
const WEBSOCKET_MAX_PAYLOAD = 64 * 1024 * 1024

/** A listener's error bodies unless a plugin declares another format for its prefix. */
const JSON_ERRORS: ErrorFormat = { type: 'application/json; charset=utf-8', encode: body => JSON.stringify(body) }

/** How long a connection whose request node refused is kept to read what the client still sends. */
const REFUSAL_LINGER_MS = 2000

/** What node's HTTP parser reports when it refuses a request; `rawPacket` is the last bytes it read. */
type ClientError = Error & { code?: string, reason?: unknown, rawPacket?: unknown }

/**
 * The answer to a request node refused before fastify saw it, and the path of its request line when
 * the bytes node kept begin with one (they do when the request line arrived in the same read as the
 * failure; otherwise the path is unknown). A request line longer than node's header limit is a URL too
 * long (414); headers over it are 431.
 */
function refusal (err: ClientError): { status: number, message: string, path: string | undefined } {
  const head = Buffer.isBuffer(err.rawPacket) ? err.rawPacket.toString('latin1') : ''
  // A method is any token here: a request refused for its method ("get") still names its path.
  const target = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+ (\/\S*)/.exec(head)?.[1]
  const path = target === undefined ? undefined : pathOf(target)
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW': {
      const lineEnd = head.indexOf('\n')
      return target !== undefined && (lineEnd === -1 || lineEnd >= maxHeaderSize)
        ? { status: 414, message: `the URL is too long: the request line and headers may have ${maxHeaderSize} bytes`, path }
        : { status: 431, message: `the request headers are too large: the request line and headers may have ${maxHeaderSize} bytes`, path }
    }
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW': return { status: 413, message: 'the chunk extensions of the request body are too large', path }
    case 'ERR_HTTP_REQUEST_TIMEOUT': return { status: 408, message: 'the request was not received in time', path }
    default: return { status: 400, message: `malformed HTTP request: ${typeof err.reason === 'string' ? err.reason : err.message}`, path }
  }
}

/** Node publishes every finished response here; listeners count theirs by status without per-request hooks. */
const RESPONSE_FINISHED = diagnostics.channel('http.server.response.finish')
/** ... and every request as it begins: a closing listener turns keep-alive off on each (subscribed only then). */
const REQUEST_STARTED = diagnostics.channel('http.server.request.start')

/** While closing, idle connections are looked at this often (or as often as the idle grace, if shorter). */
const DRAIN_SWEEP_MS = 250

/** The response a connection of node:http is writing, if any (node's own field, as its refusals use). */
type HttpSocket = Socket & { _httpMessage?: ServerResponse | null }

/** A raw server that can stop keeping connections alive (its answers say `Connection: close` from now on). */
interface DrainableServer { drain?: () => void, closeIdleConnections?: () => void }

export class Listener {
  readonly name: string
  readonly declaration: OwnedListener
  /** The fastify instance of a fastify listener. */
  readonly app: FastifyInstance | undefined
  readonly #settings: ListenerSettings
  readonly #log: Logger
  #server: Server | undefined
  /** A raw listener's address is bound with SO_REUSEPORT (its owner's threads bind it too). */
  #reusePort = false
  #acceptor: Acceptor | undefined
  #url: URL | undefined
  readonly #sockets = new Set<Socket>()
  /** Called when the last connection has closed (while closing). */
  #allClosed: (() => void) | undefined
  /** Plugins that mounted routes here or serve it. */
  readonly users = new Set<string>()
  /** Responses sent, by status code; read when metrics are collected (cheaper than a labelled counter per request). */
  readonly responses = new Map<number, number>()
  /** The routes of a fastify listener: method and URL pattern, in the order they were added. */
  readonly routes: Array<{ method: string, url: string }> = []
  /** Connections answered after node refused their request, closing now. */
  readonly #refused = new WeakSet<Socket>()
  /** Error formats plugins declared, by path prefix (without a trailing slash). */
  readonly #errorFormats: Array<{ prefix: string, format: ErrorFormat }> = []
  /** What plugins with WebSocket routes run when the listener closes; undefined until one mounts such routes. */
  #websocketClosers: Array<() => void> | undefined
  #closing = false
  /** While closing: when each connection last finished a response (or closing began), to close it once idle long enough. */
  readonly #idleSince = new WeakMap<Socket, number>()
  readonly #count = (message: unknown): void => {
    const { server, response } = message as { server: unknown, response: ServerResponse }
    if (server !== this.#server) return
    this.#tally(response.statusCode)
    // Raw servers publish answers of their own making (no socket): only node:http's are timed here.
    if (this.#closing && this.app !== undefined && response.socket !== null && response.socket !== undefined) this.#idleSince.set(response.socket, Date.now())
  }

  /** A request that begins while closing is the last of its connection. */
  readonly #noKeepAlive = (message: unknown): void => {
    const { server, response } = message as { server: unknown, response: ServerResponse }
    if (server === this.#server) response.shouldKeepAlive = false
  }

  /**
   * With `accessLog` off, fastify runs without a logger, which spares it a child logger and two
   * response listeners per request: `request.log` is then silent, and plugins log through `ctx.log`.
   * With it on, every request is logged at info with its own request id.
   */
  /**
   * While closing, a kept-alive connection idle this long is closed: its client may be sending its
   * next request right now, which is answered (with `Connection: close`) instead of being cut off.
   */
  readonly #idleGraceMs: number

  constructor (declaration: OwnedListener, settings: ListenerSettings, log: Logger, options: { accessLog: boolean, idleGraceMs: number }) {
    this.name = declaration.name
    this.#idleGraceMs = options.idleGraceMs
    this.declaration = declaration
    this.#settings = settings
    this.#log = log.child({ listener: declaration.name }, { serializers: ACCESS_LOG_SERIALIZERS })
    if (declaration.kind === 'raw') return
    const app = Fastify({
      ...(options.accessLog ? { loggerInstance: this.#log as FastifyBaseLogger } : {}),
      bodyLimit: settings.body_limit,
      // Answered before any hook: a longer parameter would otherwise make the route unknown (404).
      routerOptions: {
        maxParamLength: MAX_PARAM_LENGTH,
        onMaxParamLength: (_path: string, request: { url?: string }, response: ServerResponse) => {
          this.#answerRaw(response, request.url, 400, `a path parameter is longer than ${MAX_PARAM_LENGTH} characters`)
        },
        onBadUrl: (_path: string, request: { url?: string }, response: ServerResponse) => {
          this.#answerRaw(response, request.url, 400, 'the URL path is not valid percent-encoding')
        }
      },
      clientErrorHandler: (err, socket) => { this.#refuse(err, socket) },
      forceCloseConnections: 'idle',
      return503OnClosing: true,
      ...(settings.request_timeout_ms !== undefined ? { requestTimeout: settings.request_timeout_ms } : {}),
      ...(settings.idle_timeout_ms !== undefined ? { keepAliveTimeout: settings.idle_timeout_ms } : {})
    })
    if (settings.headers_timeout_ms !== undefined) app.server.headersTimeout = Math.min(settings.headers_timeout_ms, settings.request_timeout_ms ?? settings.headers_timeout_ms)
    // Many clients say `Content-Type: application/json` on every call: an empty body is no body, not a 400.
    const parseJson = app.getDefaultJsonParser('error', 'error')
    app.removeContentTypeParser('application/json')
    app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
      if (body === '') done(null, undefined)
      else parseJson(request, body as string, done)
    })
    // Routes read each query parameter as one string; one given twice would reach them as an array.
    app.addHook('onRequest', (request, _reply, done) => {
      const repeated = Object.keys(request.query as object).find(name => Array.isArray((request.query as Record<string, unknown>)[name]))
      done(repeated === undefined ? undefined : new BadRequest(`invalid querystring: ${repeated.slice(0, 64)} is given more than once`))
    })
    app.addHook('onRoute', route => {
      for (const method of [route.method].flat()) this.routes.push({ method, url: route.url })
    })
    app.setErrorHandler(async (error: FastifyError, request, reply) => {
      const { status, message, code } = describeHttpError(error, request)
      // 507: the store refuses writes, which the health report and one log line at the change tell.
      if (status >= 500 && status !== 507) this.#log.error({ err: error, reqId: request.id, method: request.method, path: pathOf(request.url) }, 'request failed')
      return this.#answer(reply.code(status), request.url, { error: message, code })
    })
    app.setNotFoundHandler(async (request, reply) => this.#answer(reply.code(404), request.url, { error: `no route for ${request.method} ${pathOf(request.url)}`, code: KERNEL_CODES.NO_ROUTE.code }))
    this.app = app
    this.#server = app.server
  }

  /** Whether it will be opened: a fastify listener once routes are mounted, a raw one once served. */
  get used (): boolean {
    return this.users.size > 0
  }

  mount (plugin: string, routes: FastifyPluginAsync, options: RouteOptions = {}): void {
    if (this.app === undefined) throw new StartupError(`plugin "${plugin}": the ${this.name} listener is raw; hand it a server with ctx.serve()`)
    this.users.add(plugin)
    if (options.errors !== undefined) {
      if (options.prefix === undefined) throw new StartupError(`plugin "${plugin}": an error format for the ${this.name} listener needs a prefix`)
      this.#errorFormats.push({ prefix: options.prefix.replace(/\/+$/, ''), format: options.errors })
    }
    if (options.websocket !== undefined) this.#useWebsockets(this.app, options.websocket.preClose)
    this.app.register(async (scope, opts) => {
      try {
        await routes(scope, opts)
      } catch (err) {
        throw new StartupError(`plugin "${plugin}": mounting routes on the ${this.name} listener failed: ${messageOf(err)}`)
      }
    }, { prefix: options.prefix })
  }

  /**
   * WebSocket routes on this listener: @fastify/websocket registered once, at the root (one listener of
   * the server's `upgrade` event for every plugin: two would each route the same upgrade).
   */
  #useWebsockets (app: FastifyInstance, preClose: (() => void) | undefined): void {
    if (this.#websocketClosers === undefined) {
      this.#websocketClosers = []
      app.register(import('@fastify/websocket'), {
        options: { maxPayload: WEBSOCKET_MAX_PAYLOAD },
        preClose: async () => { this.#closeWebsockets() }
      })
    }
    if (preClose !== undefined) this.#websocketClosers.push(preClose)
  }

  /**
   * Run the WebSocket routes' closers, then close every WebSocket still open with 1001: at the start
   * of a close (a WebSocket has no request in flight to finish, and would hold the drain to its
   * deadline) and again when fastify closes.
   */
  #closeWebsockets (): void {
    if (this.#websocketClosers === undefined || this.app === undefined) return
    for (const close of this.#websocketClosers) close()
    for (const client of this.app.websocketServer.clients) client.close(1001, 'the server is stopping')
  }

  serve (plugin: string, server: Server, options: ServeOptions = {}): void {
    if (this.app !== undefined) throw new StartupError(`plugin "${plugin}": the ${this.name} listener is a fastify listener; mount routes with ctx.http()`)
    if (this.#server !== undefined) throw new StartupError(`plugin "${plugin}": the ${this.name} listener already has a server`)
    this.users.add(plugin)
    this.#server = server
    this.#reusePort = options.reusePort === true
  }

  /** Take the connections of this listener's address from `acceptors` (binding it unless it is bound already). */
  async listen (acceptors: Acceptors): Promise<URL> {
    const server = this.#server as Server
    const { host, port } = this.#settings
    let acceptor: Acceptor
    try {
      acceptor = await acceptors.acquire(this.name, host, port, this.#reusePort)
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code
      const reason = code === 'EADDRINUSE'
        ? 'is already in use'
        : code === 'EACCES' ? 'needs privileges this process lacks' : `cannot be bound: ${messageOf(err)}`
      const key = this.declaration.portKey === undefined ? `[server.listeners.${this.name}].port` : `[${this.declaration.owner}].${this.declaration.portKey}`
      throw new StartupError(`${this.name} listener: port ${port} on ${host} ${reason} (set ${key})`)
    }
    server.on('connection', this.#track)
    RESPONSE_FINISHED.subscribe(this.#count)
    acceptor.attach(server)
    this.#acceptor = acceptor
    this.#url = reachableUrl(host, acceptor.boundPort, 'setSecureContext' in server ? 'https' : 'http')
    return this.#url
  }

  get url (): URL | undefined {
    return this.#url
  }

  /** The host (as configured: `0.0.0.0` stays so) and port bound, while open. */
  get bound (): { host: string, port: number } | undefined {
    return this.#acceptor === undefined ? undefined : { host: this.#settings.host, port: this.#acceptor.boundPort }
  }

  /**
   * Take no more connections (the acceptor keeps new ones for whoever attaches next); let requests in
   * flight finish for up to `graceMs`, then cut every connection.
   */
  async close (graceMs: number): Promise<void> {
    const server = this.#server
    const acceptor = this.#acceptor
    if (server === undefined || acceptor === undefined) {
      await this.app?.close()
      return
    }
    acceptor.detach(server)
    this.#acceptor = undefined
    this.#closing = true
    this.#closeWebsockets()
    const closed = new Promise<void>(resolve => {
      this.#allClosed = resolve
      if (this.#sockets.size === 0) resolve()
    })
    const sweeper = this.#drain()
    let timer: NodeJS.Timeout | undefined
    const drained = await Promise.race([
      closed.then(() => true),
      new Promise<boolean>(resolve => { timer = setTimeout(() => { resolve(false) }, graceMs) })
    ])
    clearTimeout(timer)
    clearInterval(sweeper)
    REQUEST_STARTED.unsubscribe(this.#noKeepAlive)
    if (!drained) {
      this.#log.warn({ connections: this.#sockets.size }, `requests still in flight after ${graceMs / 1000} s; closing their connections`)
      for (const socket of this.#sockets) socket.destroy()
      await closed
    }
    // Ends node:http's connection checks and runs fastify's onClose hooks; no connection is left.
    if (this.app !== undefined) await this.app.close()
    else server.close()
    server.off('connection', this.#track)
    RESPONSE_FINISHED.unsubscribe(this.#count)
    this.#allClosed = undefined
    this.#closing = false
    this.#url = undefined
  }

  /** The format of error bodies for a request path: the one declared for its prefix, or JSON. */
  #formatOf (url: string | undefined): ErrorFormat {
    const path = url === undefined ? undefined : pathOf(url)
    return this.#errorFormats.find(({ prefix }) => path === prefix || path?.startsWith(`${prefix}/`) === true)?.format ?? JSON_ERRORS
  }

  /** An error answer through fastify: the body to return, in the format of the request's path. */
  #answer (reply: FastifyReply, url: string, body: ErrorBody): string | Uint8Array {
    const format = this.#formatOf(url)
    reply.type(format.type)
    return format.encode(body)
  }

  /** An error answer the router gives before fastify has a request (a bad URL, a parameter too long). */
  #answerRaw (response: ServerResponse, url: string | undefined, status: number, message: string): void {
    const format = this.#formatOf(url)
    response.writeHead(status, { 'content-type': format.type }).end(format.encode({ error: message, code: codeOfStatus(status) }))
  }

  /**
   * Node refused a request before routing (malformed, headers over its limit, too slow): answer on the
   * socket, as node would, unless a response on the connection has begun. Then close it lingering:
   * closing at once while the client still sends (a body after headers too large) resets the
   * connection, and the client may lose the answer; so the write side is ended and what still arrives
   * is read and dropped until the client ends too, for REFUSAL_LINGER_MS at most.
   */
  #refuse (err: ClientError, socket: Socket): void {
    if (err.code === 'ECONNRESET' || socket.destroyed || this.#refused.has(socket)) return
    const { status, message, path } = refusal(err)
    // Node's own rule: write nothing once a response on this connection has begun.
    const inFlight = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage
    if (!socket.writable || (inFlight !== undefined && inFlight !== null && inFlight.headersSent)) {
      socket.destroy(err)
      return
    }
    // The parser stays failed: more bytes from the client report the same error again, ignored here.
    this.#refused.add(socket)
    const format = this.#formatOf(path)
    const body = format.encode({ error: message, code: codeOfStatus(status) })
    socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: ${format.type}\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n`)
    socket.end(body)
    this.#tally(status)
    const linger = setTimeout(() => { socket.destroy() }, REFUSAL_LINGER_MS)
    socket.once('end', () => { socket.destroy() })
    socket.once('close', () => { clearTimeout(linger) })
  }

  #tally (status: number): void {
    this.responses.set(status, (this.responses.get(status) ?? 0) + 1)
  }

  /**
   * Stop keeping connections alive without cutting off a request on its way: every answer from now on
   * (and every one not begun yet) says `Connection: close` and its connection closes after it; a
   * connection idle for the idle grace is closed by a sweep. Returns the sweep's timer.
   */
  #drain (): NodeJS.Timeout {
    const server = this.#server as Server & DrainableServer
    const started = Date.now()
    if (this.app !== undefined) {
      REQUEST_STARTED.subscribe(this.#noKeepAlive)
      for (const socket of this.#sockets as Set<HttpSocket>) {
        const response = socket._httpMessage
        if (response !== undefined && response !== null && !response.headersSent) response.shouldKeepAlive = false
        else this.#idleSince.set(socket, started)
      }
    } else {
      server.drain?.()
    }
    const sweep = (): void => {
      const now = Date.now()
      if (this.app === undefined) {
        if (now - started >= this.#idleGraceMs) server.closeIdleConnections?.()
        return
      }
      for (const socket of this.#sockets as Set<HttpSocket>) {
        const busy = socket._httpMessage !== undefined && socket._httpMessage !== null
        if (!busy && now - (this.#idleSince.get(socket) ?? started) >= this.#idleGraceMs) socket.destroy()
      }
    }
    return setInterval(sweep, Math.max(10, Math.min(DRAIN_SWEEP_MS, this.#idleGraceMs)))
  }

  readonly #track = (socket: Socket): void => {
    this.#sockets.add(socket)
    socket.once('close', () => {
      this.#sockets.delete(socket)
      if (this.#sockets.size === 0) this.#allClosed?.()
    })
  }
}
