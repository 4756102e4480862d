// The proxy's request path: find the route by Host and path, let its middleware refuse the request
// or not, pick a replica, and stream the request to it and its answer back through undici's
// dispatcher (no buffering either way; compressed on the way when the route asks). Idempotent requests
// without a body are retried once on another replica when a connection fails; a dead or slow upstream
// is answered 502, 503 or 504 with a small page (JSON for JSON clients), never a hang, and counted
// against the replica's health.
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2'
import type { Socket } from 'node:net'
import { Transform, type TransformCallback, type Writable } from 'node:stream'
import type { Dispatcher } from 'undici'
import { KERNEL_CODES } from '../../kernel/index.js'
import { forwardedHeaders, http1Headers, portOf, requestHeaders, responseHeaders } from './headers.js'
import type { RouteCounts } from './metrics.js'
import { encodedHeaders, encoder, encodingFor } from './middleware/index.js'
import type { Pools } from './pools.js'
import { begin, hostname, upstreamPath, type Route, type RouteTable, type Upstream } from './route-table.js'
import { sendError, writeHead } from './error-page.js'
import { requestTarget, type RequestTarget } from './request-target.js'

/** A client's request as node:http (HTTP/1.x) or node:http2's compatibility API (HTTP/2) gives it. */
export type ClientRequest = IncomingMessage | Http2ServerRequest
export type ClientResponse = ServerResponse | Http2ServerResponse

export interface ForwardOptions {
  table: RouteTable
  pools: Pools
  metrics: RouteCounts
  scheme: 'http' | 'https'
  maxUrlBytes: number
  /** A request could not connect to `upstream`, or got no response head in time (`why`: the error's code). */
  failed(upstream: Upstream, why: string): void
  /** HTTP only: the key authorization of an ACME HTTP-01 token being validated. */
  challenge?(token: string): string | undefined
  /** HTTP only: whether a domain has a certificate, so that its requests are redirected to HTTPS. */
  secure?(domain: string): boolean
  /** HTTP only: the port HTTPS is served on (the bound one, asked at each redirect: it may be configured as 0), for the redirects' locations. */
  httpsPort?: () => number
}

export const CHALLENGE_PREFIX = '/.well-known/acme-challenge/'

/** Methods safe to send again when their connection failed. */
export const IDEMPOTENT: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE'])
/** Methods whose request content has a meaning: without a body, they say so with a zero length (RFC 9110 §8.6), as undici does. */
export const PAYLOAD_METHODS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH'])
/** Errors that mean the request never reached the replica: safe to send to another one. */
const CONNECT_FAILURES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EHOSTUNREACH', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_SOCKET'])
const HEADERS_TIMEOUT = 'UND_ERR_HEADERS_TIMEOUT'

/** A request body without a length passed on until it grows past the route's limit. */
class BodyLimit extends Transform {
  #left: number
  constructor (limit: number) {
    super()
    this.#left = limit
  }

  override _transform (chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.#left -= chunk.length
    if (this.#left < 0) done(Object.assign(new Error('the request body is larger than the route allows'), { code: KERNEL_CODES.PAYLOAD_TOO_LARGE.code }))
    else done(null, chunk)
  }
}

/** Client connections whose request waits for a replica's response head: `upstream_timeout_secs` ends that wait, not the client's silence. */
const awaiting = new WeakSet<Socket>()

/** Whether the request on this client connection waits for a replica's response head. */
export function awaitsAnswer (socket: Socket): boolean {
  return awaiting.has(socket)
}

/** The request handler of the proxy's listeners. */
export function forwarder (options: ForwardOptions): (req: ClientRequest, res: ClientResponse) => void {
  return (req, res) => {
    const target = requestTarget(req)
    if ('error' in target) {
      sendError(req, res, target.status, target.error)
      return
    }
    const { url, host } = target
    if (url.length > options.maxUrlBytes) {
      sendError(req, res, 414, `the URL is longer than ${options.maxUrlBytes} bytes`)
      return
    }
    if (options.challenge !== undefined && url.startsWith(CHALLENGE_PREFIX)) {
      const answer = options.challenge(url.slice(CHALLENGE_PREFIX.length))
      if (answer === undefined) sendError(req, res, 404, 'no such ACME challenge')
      else {
        writeHead(res, 200, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(answer) })
        res.end(answer)
      }
      return
    }
    const servername = (req.socket as { servername?: string | false }).servername
    if (typeof servername === 'string' && hostname(host) !== servername.toLowerCase()) {
      sendError(req, res, 421, `this connection was made for ${servername}, not ${host ?? 'no host'}`)
      return
    }
    const route = options.table.route(host, url)
    if (route === undefined) {
      options.metrics.unrouted()
      sendError(req, res, 404, `no service is served at ${host ?? 'this address'}`)
      return
    }
    // An alias goes to the service's primary name, on HTTPS when this is HTTPS or that name has a certificate.
    const primary = route.redirect ?? route.domain
    const secure = options.scheme === 'http' && options.secure?.(primary) === true
    if (route.redirect !== undefined || secure) {
      const location = secure
        ? `https://${primary}${httpsSuffix(options.httpsPort?.())}${url}`
        : `${options.scheme}://${primary}${portOf(host)}${url}`
      writeHead(res, 308, { location, 'content-length': 0 })
      res.end()
      options.metrics.answered(route, 308)
      return
    }

    if (!route.guard.general) {
      forward(options, route, req, res, target)
      return
    }
    route.guard.refusal({ address: req.socket.remoteAddress, authorization: req.headers.authorization, length: req.headers['content-length'] }).then(refusal => {
      if (refusal === undefined) {
        forward(options, route, req, res, target)
        return
      }
      options.metrics.answered(route, refusal.status)
      sendError(req, res, refusal.status, refusal.message, refusal.headers)
    }, (err: Error) => {
      options.metrics.answered(route, 500)
      sendError(req, res, 500, `the route's middleware failed: ${err.message}`)
    })
  }
}

/** Whether a request has a body: by its length or chunking (HTTP/1.x), by its stream not ending with its headers (HTTP/2). */
function hasBody (req: ClientRequest): boolean {
  if (req.headers['content-length'] !== undefined) return req.headers['content-length'] !== '0'
  return 'stream' in req ? !req.stream.endAfterHeaders : req.headers['transfer-encoding'] !== undefined
}

function forward (options: ForwardOptions, route: Route, req: ClientRequest, res: ClientResponse, target: RequestTarget): void {
  const body = hasBody(req)
  const limit = route.guard.maxBody
  const request: Dispatcher.DispatchOptions = {
    method: req.method ?? 'GET',
    path: upstreamPath(route, target.url),
    headers: [...('stream' in req ? http1Headers(target.rawHeaders) : requestHeaders(target.rawHeaders)), ...forwardedHeaders(req.socket.remoteAddress, target.host ?? '', options.scheme)],
    body: !body ? null : limit !== undefined && req.headers['content-length'] === undefined ? req.pipe(new BodyLimit(limit)) : req,
    idempotent: false,
    blocking: true
  }
  const retryable = !body && IDEMPOTENT.has(request.method)
  // An HTTP/2 request waits for the end of the frames of its read: a reset among them (rapid reset
  // sends HEADERS and RST_STREAM together) closes it before anything is sent upstream.
  if ('stream' in req) setImmediate(() => { dispatch(options, route, request, req, res, retryable ? 1 : 0, undefined) })
  else dispatch(options, route, request, req, res, retryable ? 1 : 0, undefined)
}

function dispatch (options: ForwardOptions, route: Route, request: Dispatcher.DispatchOptions, req: ClientRequest, res: ClientResponse, retries: number, failed: Upstream | undefined): void {
  // A client already gone (a stream reset while its middleware was checked): nothing is sent.
  if (clientGone(res)) return
  const upstream = options.table.pick(route, failed)
  if (upstream === undefined) {
    options.metrics.answered(route, 503)
    sendError(req, res, 503, `no replica of ${route.service} is ready to serve`)
    return
  }
  const end = begin(upstream)
  const started = performance.now()
  awaiting.add(req.socket)
  const handler = new ResponseRelay(req, res, { route, scheme: options.scheme }, {
    responded: status => {
      awaiting.delete(req.socket)
      upstream.failures = 0
      options.metrics.answered(route, status, (performance.now() - started) / 1000)
    },
    failed: err => {
      awaiting.delete(req.socket)
      end()
      const code = (err as NodeJS.ErrnoException).code ?? ''
      // The client's own failure (its body broke off, its connection went) says nothing of the replica.
      const client = clientGone(res) || req.readableAborted || req.errored !== null
      if (!client && (CONNECT_FAILURES.has(code) || code === HEADERS_TIMEOUT)) options.failed(upstream, code)
      if (res.headersSent || res.destroyed) return
      if (retries > 0 && CONNECT_FAILURES.has(code) && options.table.pick(route, upstream) !== undefined) {
        dispatch(options, route, request, req, res, retries - 1, upstream)
        return
      }
      const [status, message] = failureAnswer(code, route)
      options.metrics.answered(route, status)
      sendError(req, res, status, message)
    },
    finished: end
  })
  options.pools.get(upstream.origin).dispatch(request, handler)
}

/** Whether the client's connection, or its HTTP/2 stream, is closed. */
function clientGone (res: ClientResponse): boolean {
  return 'stream' in res ? res.stream.destroyed || res.stream.closed : res.destroyed
}

function failureAnswer (code: string, route: Route): [number, string] {
  if (code === KERNEL_CODES.PAYLOAD_TOO_LARGE.code) return [KERNEL_CODES.PAYLOAD_TOO_LARGE.status, `the request body is larger than ${route.guard.maxBody ?? 0} bytes`]
  if (code === 'UND_ERR_CONNECT_TIMEOUT' || code === HEADERS_TIMEOUT) return [504, `${route.service} did not answer in time`]
  return [502, `${route.service} could not be reached`]
}


interface RelayEvents {
  responded(status: number): void
  failed(err: Error): void
  finished(): void
}

/** What shapes an answer on its way: the route's extra headers (by scheme) and compression. */
interface Shaping {
  route: Route
  scheme: 'http' | 'https'
}

/** Streams an upstream answer to the client: headers, then chunks (through an encoder, when compressed) with back-pressure both ways. */
class ResponseRelay implements Dispatcher.DispatchHandler {
  readonly #req: ClientRequest
  readonly #res: ClientResponse
  readonly #shaping: Shaping
  readonly #events: RelayEvents
  /** Where the body goes: the response, or the encoder in front of it. */
  #out: Writable
  #controller: Dispatcher.DispatchController | undefined
  #done = false
  /** The client went before the upstream request started: it is aborted as soon as it does. */
  #gone = false
  #corked = false

  constructor (req: ClientRequest, res: ClientResponse, shaping: Shaping, events: RelayEvents) {
    this.#req = req
    this.#res = res
    this.#out = res
    this.#shaping = shaping
    this.#events = events
    // The client went away (an HTTP/2 stream reset too): stop the upstream request, or never start it.
    res.once('close', () => {
      if (this.#done) return
      this.#gone = true
      this.#controller?.abort(new Error('client closed the connection'))
    })
  }

  #uncork (): void {
    if (!this.#corked) return
    this.#corked = false
    this.#res.uncork()
  }

  onRequestStart (controller: Dispatcher.DispatchController): void {
    this.#controller = controller
    if (this.#gone) controller.abort(new Error('client closed the connection'))
  }

  onResponseStart (_controller: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | string[]>, statusMessage?: string): void {
    if (statusCode < 200) return
    // Headers, the chunks that arrive in this turn and the end go out in one write.
    this.#res.cork()
    this.#corked = true
    process.nextTick(() => { this.#uncork() })
    const { route, scheme } = this.#shaping
    let shaped = route.guard.withExtras(responseHeaders(headers, 'stream' in this.#res), scheme)
    const encoding = route.guard.compress ? encodingFor(this.#req.method ?? 'GET', this.#req.headers['accept-encoding'], statusCode, shaped) : undefined
    if (encoding !== undefined) shaped = encodedHeaders(shaped, encoding)
    // HTTP/2 has no reason phrases. Headers HTTP/2 cannot carry throw here: the request fails with a 502 (sendError starts it clean).
    if ('stream' in this.#res) this.#res.writeHead(statusCode, shaped)
    else this.#res.writeHead(statusCode, statusMessage, shaped)
    if (encoding !== undefined) {
      const encode = encoder(encoding)
      encode.pipe(this.#res)
      this.#out = encode
    }
    this.#events.responded(statusCode)
  }

  onResponseData (controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (!this.#out.write(chunk)) {
      controller.pause()
      this.#out.once('drain', () => { controller.resume() })
    }
  }

  onResponseEnd (): void {
    this.#done = true
    // Node 22 writes the last chunk of a chunked answer at end() ahead of what is still corked.
    this.#uncork()
    this.#out.end()
    this.#events.finished()
  }

  onResponseError (_controller: Dispatcher.DispatchController, err: Error): void {
    if (this.#done) return
    this.#done = true
    if (this.#res.headersSent) this.#res.destroy(err)
    this.#events.failed(err)
  }
}

/** `:port` of an HTTPS location, nothing for 443 (or no port known). */
function httpsSuffix (port: number | undefined): string {
  return port === undefined || port === 443 ? '' : `:${port}`
}
