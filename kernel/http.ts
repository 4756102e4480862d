// Listeners: a fastify instance per fastify listener (the shared {"error": "..."} format, a body-size
// limit, a 400 for a path parameter longer than the router matches), or a raw server a plugin drives itself. Both receive their connections from an acceptor
// (acceptors.ts), which binds the address with clear errors when a port cannot be bound and may
// outlive the listener; they count their responses, and close by draining in-flight requests up to
// a deadline.
import diagnostics from 'node:diagnostics_channel'
import type { ServerResponse } from 'node:http'
import type { Server, Socket } from 'node:net'
import Fastify, { type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyPluginAsync, type FastifyReply, type FastifyRequest } from 'fastify'
import type { Logger } from 'pino'
import type { Acceptor, Acceptors } from './acceptors.js'
import { StartupError, messageOf } from './errors.js'
import { describeHttpError, pathOf } from './http-errors.js'
import { reachableUrl, type OwnedListener } from './listeners.js'
import type { RouteOptions } from './plugin.js'

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
const PARAM_TOO_LONG = JSON.stringify({ error: `a path parameter is longer than ${MAX_PARAM_LENGTH} characters` })

/** Node publishes every finished response here; listeners count theirs by status without per-request hooks. */
const RESPONSE_FINISHED = diagnostics.channel('http.server.response.finish')

export class Listener {
  readonly name: string
  readonly declaration: OwnedListener
  /** The fastify instance of a fastify listener. */
  readonly app: FastifyInstance | undefined
  readonly #settings: ListenerSettings
  readonly #log: Logger
  #server: Server | undefined
  #acceptor: Acceptor | undefined
  #url: URL | undefined
  readonly #sockets = new Set<Socket>()
  /** Called when the last connection has closed (while closing). */
  #allClosed: (() => void) | undefined
  /** Plugins that mounted routes here or serve it. */
  readonly users = new Set<string>()
  /** Responses sent, by status code; read when metrics are collected (cheaper than a labelled counter per request). */
  readonly responses = new Map<number, number>()
  #closing = false
  readonly #count = (message: unknown): void => {
    const { server, response } = message as { server: unknown, response: ServerResponse }
    if (server !== this.#server) return
    this.responses.set(response.statusCode, (this.responses.get(response.statusCode) ?? 0) + 1)
    // A keep-alive connection whose last request finished while closing is idle now: let it go.
    if (this.#closing) setImmediate(() => { this.#closeIdle() })
  }

  /**
   * With `accessLog` off, fastify runs without a logger, which spares it a child logger and two
   * response listeners per request: `request.log` is then silent, and plugins log through `ctx.log`.
   * With it on, every request is logged at info with its own request id.
   */
  constructor (declaration: OwnedListener, settings: ListenerSettings, log: Logger, options: { accessLog: boolean }) {
    this.name = declaration.name
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
        onMaxParamLength: (_path: string, _request: unknown, response: ServerResponse) => { response.writeHead(400, { 'content-type': 'application/json; charset=utf-8' }).end(PARAM_TOO_LONG) }
      },
      forceCloseConnections: 'idle',
      return503OnClosing: true,
      ...(settings.request_timeout_ms !== undefined ? { requestTimeout: settings.request_timeout_ms } : {}),
      ...(settings.idle_timeout_ms !== undefined ? { keepAliveTimeout: settings.idle_timeout_ms } : {})
    })
    if (settings.headers_timeout_ms !== undefined) app.server.headersTimeout = Math.min(settings.headers_timeout_ms, settings.request_timeout_ms ?? settings.headers_timeout_ms)
    app.setErrorHandler(async (error: FastifyError, request, reply) => {
      const { status, message } = describeHttpError(error, request)
      // 507: the store refuses writes, which the health report and one log line at the change tell.
      if (status >= 500 && status !== 507) this.#log.error({ err: error, reqId: request.id, method: request.method, path: pathOf(request.url) }, 'request failed')
      reply.code(status)
      return { error: message }
    })
    app.setNotFoundHandler(async (request, reply) => {
      reply.code(404)
      return { error: `no route for ${request.method} ${pathOf(request.url)}` }
    })
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
    this.app.register(async (scope, opts) => {
      try {
        await routes(scope, opts)
      } catch (err) {
        throw new StartupError(`plugin "${plugin}": mounting routes on the ${this.name} listener failed: ${messageOf(err)}`)
      }
    }, { prefix: options.prefix })
  }

  serve (plugin: string, server: Server): void {
    if (this.app !== undefined) throw new StartupError(`plugin "${plugin}": the ${this.name} listener is a fastify listener; mount routes with ctx.http()`)
    if (this.#server !== undefined) throw new StartupError(`plugin "${plugin}": the ${this.name} listener already has a server`)
    this.users.add(plugin)
    this.#server = server
  }

  /** Take the connections of this listener's address from `acceptors` (binding it unless it is bound already). */
  async listen (acceptors: Acceptors): Promise<URL> {
    const server = this.#server as Server
    const { host, port } = this.#settings
    let acceptor: Acceptor
    try {
      acceptor = await acceptors.acquire(this.name, host, port)
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
    const closed = new Promise<void>(resolve => {
      this.#allClosed = resolve
      if (this.#sockets.size === 0) resolve()
    })
    this.#closeIdle()
    let timer: NodeJS.Timeout | undefined
    const drained = await Promise.race([
      closed.then(() => true),
      new Promise<boolean>(resolve => { timer = setTimeout(() => { resolve(false) }, graceMs) })
    ])
    clearTimeout(timer)
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

  #closeIdle (): void {
    (this.#server as Server & { closeIdleConnections?: () => void }).closeIdleConnections?.()
  }

  readonly #track = (socket: Socket): void => {
    this.#sockets.add(socket)
    socket.once('close', () => {
      this.#sockets.delete(socket)
      if (this.#sockets.size === 0) this.#allClosed?.()
    })
  }
}
