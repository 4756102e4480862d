// Named listeners: one fastify instance per listener with the shared error format {"error": "..."},
// a body-size limit, request counting, and clear errors when a port cannot be bound.
import diagnostics from 'node:diagnostics_channel'
import type { ServerResponse } from 'node:http'
import Fastify, { type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyPluginAsync, type FastifyReply, type FastifyRequest } from 'fastify'
import type { Logger } from 'pino'
import { BerthError, StartupError, messageOf } from './errors.js'
import type { ListenerName, RouteOptions } from './plugin.js'

export interface ListenerConfig {
  host: string
  port: number
  body_limit: number
}

/** A request URL without its query string, which may carry credentials and is never logged. */
const pathOf = (url: string): string => url.split('?')[0]

/** What the access log records of a request and a reply: never headers, never the query string. */
const ACCESS_LOG_SERIALIZERS = {
  req: (request: FastifyRequest) => ({ method: request.method, path: pathOf(request.url), remoteAddress: request.ip }),
  res: (reply: FastifyReply) => ({ statusCode: reply.statusCode })
}

/** Node publishes every finished response here; listeners count theirs by status without per-request hooks. */
const RESPONSE_FINISHED = diagnostics.channel('http.server.response.finish')

export class Listener {
  readonly name: ListenerName
  readonly app: FastifyInstance
  readonly #config: ListenerConfig
  readonly #log: Logger
  #mounted = false
  #url: URL | undefined
  /** Responses sent, by status code; read when metrics are collected (cheaper than a labelled counter per request). */
  readonly responses = new Map<number, number>()
  readonly #count = (message: unknown): void => {
    const { server, response } = message as { server: unknown, response: ServerResponse }
    if (server === this.app.server) this.responses.set(response.statusCode, (this.responses.get(response.statusCode) ?? 0) + 1)
  }

  /**
   * With `accessLog` off, fastify runs without a logger, which spares it a child logger and two
   * response listeners per request: `request.log` is then silent, and plugins log through `ctx.log`.
   * With it on, every request is logged at info with its own request id.
   */
  constructor (name: ListenerName, config: ListenerConfig, log: Logger, options: { accessLog: boolean }) {
    this.name = name
    this.#config = config
    this.#log = log.child({ listener: name }, { serializers: ACCESS_LOG_SERIALIZERS })
    this.app = Fastify({
      ...(options.accessLog ? { loggerInstance: this.#log as FastifyBaseLogger } : {}),
      bodyLimit: config.body_limit,
      forceCloseConnections: true,
      return503OnClosing: true
    })
    this.app.setErrorHandler(async (error: FastifyError, request, reply) => {
      const { status, message } = describeHttpError(error, request)
      if (status >= 500) this.#log.error({ err: error, reqId: request.id, method: request.method, path: pathOf(request.url) }, 'request failed')
      reply.code(status)
      return { error: message }
    })
    this.app.setNotFoundHandler(async (request, reply) => {
      reply.code(404)
      return { error: `no route for ${request.method} ${pathOf(request.url)}` }
    })
  }

  /** Whether any plugin mounted routes here; unmounted listeners are not opened. */
  get mounted (): boolean {
    return this.#mounted
  }

  mount (plugin: string, routes: FastifyPluginAsync, options: RouteOptions = {}): void {
    this.#mounted = true
    this.app.register(async (scope, opts) => {
      try {
        await routes(scope, opts)
      } catch (err) {
        throw new StartupError(`plugin "${plugin}": mounting routes on the ${this.name} listener failed: ${messageOf(err)}`)
      }
    }, { prefix: options.prefix })
  }

  async listen (): Promise<URL> {
    const { host, port } = this.#config
    try {
      await this.app.listen({ host, port })
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code
      const reason = code === 'EADDRINUSE'
        ? 'is already in use'
        : code === 'EACCES' ? 'needs privileges this process lacks' : `cannot be bound: ${messageOf(err)}`
      throw new StartupError(`${this.name} listener: port ${port} on ${host} ${reason} (set [server.listeners.${this.name}].port)`)
    }
    RESPONSE_FINISHED.subscribe(this.#count)
    const address = this.app.server.address()
    const bound = typeof address === 'object' && address !== null ? address.port : port
    const shownHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host
    this.#url = new URL(`http://${shownHost.includes(':') ? `[${shownHost}]` : shownHost}:${bound}`)
    return this.#url
  }

  get url (): URL | undefined {
    return this.#url
  }

  async close (): Promise<void> {
    await this.app.close()
    RESPONSE_FINISHED.unsubscribe(this.#count)
    this.#url = undefined
  }
}

/** Status and client-facing message of any error; 5xx details are for the log only. */
export function describeHttpError (error: FastifyError, request?: FastifyRequest): { status: number, message: string } {
  const status = statusOf(error)
  if (status === 500) return { status, message: 'internal server error' }
  if (status === 415 && !(error instanceof BerthError)) return { status, message: `unsupported content type: ${request?.headers['content-type'] ?? 'none'}` }
  return { status, message: clientMessage(error) }
}

function statusOf (error: FastifyError): number {
  if (error instanceof BerthError) return error.statusCode
  if (error.validation !== undefined) return 400
  const status = error.statusCode
  return typeof status === 'number' && status >= 400 && status < 600 ? status : 500
}

function clientMessage (error: FastifyError): string {
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return 'request body is too large'
  if (error.validation !== undefined) {
    return `invalid ${error.validationContext ?? 'body'}: ${error.message.replace(/^(body|querystring|params|headers)\/? ?/, '')}`
  }
  return error.message
}
