// A request on the proxy's fast lane, whichever protocol the client spoke (HTTP/1.1 in lane.ts, HTTP/2
// in http2.ts): sent to its replica on the lane's keep-alive connections (upstream-connections.ts),
// counted in flight there, its answer counted per route; when the replica's connection fails it goes
// again as the general path would send it again (a kept connection the replica had closed: on a new
// one, for a request that may go twice; one that could not connect: once to another replica), else
// the client gets 502 or 504 in its protocol, or, with part of the answer out, the answer broken off.
// Also the route and forwarding headers of a client connection's Host, kept from one request to the next.
import type { Socket } from 'node:net'
import { forwardedHeaders } from '../headers.js'
import type { RouteCounts } from '../metrics.js'
import type { Pools } from '../pools.js'
import { endOn, hostname, type Route, type RouteTable, type Upstream } from '../route-table.js'
import type { ParsedHead, ParserFactory } from './llhttp.js'
import type { AnswerHandler, Exchange, Failure, OutgoingRequest } from './upstream-connections.js'

/** What the lane's requests reach: the routes, the replicas' connections, the metrics. */
export interface LaneRouting {
  parser: ParserFactory
  table: RouteTable
  pools: Pools
  metrics: RouteCounts
  /** A request could not connect to `upstream`, or got no response head in time (`why`: the failure's code). */
  failed: (upstream: Upstream, why: string) => void
  /** An answer went out, with this status. */
  answered: (status: number) => void
}

/** A request taken by the lane, kept for a retry. */
export interface Forwarded extends OutgoingRequest {
  /** GET, HEAD, OPTIONS, TRACE without a body: safe to send again when its connection failed. */
  idempotent: boolean
  accept: string | undefined
  route: Route
}

/** Failures that mean the request never reached the replica's application: safe to send to another one. */
const CONNECT_FAILURES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EHOSTUNREACH', 'EPIPE', 'CONNECT_TIMEOUT', 'CLOSED'])
const TIMEOUTS = new Set(['CONNECT_TIMEOUT', 'HEADERS_TIMEOUT'])

export abstract class LaneRequest implements AnswerHandler {
  protected readonly routing: LaneRouting
  protected request: Forwarded | undefined
  /** The request's exchange with its replica, until its answer has ended or failed. */
  protected exchange: Exchange | undefined
  /** The status of the answer's head; 0 until it has come. */
  protected status = 0
  #upstream: Upstream | undefined
  #retries = 0
  #fresh = false
  #started = 0

  constructor (routing: LaneRouting) {
    this.routing = routing
  }

  abstract readonly passesHeads: boolean
  abstract head (answer: ParsedHead, received: Buffer | undefined): boolean
  abstract body (chunk: Buffer): void
  abstract end (): void
  abstract flush (): boolean
  abstract get holdsPieces (): boolean
  /** Part of the answer went out and the rest cannot come: the client learns it by the answer's break. */
  protected abstract broken (): void
  /** Answer the request with the proxy's own answer (502, 504) in the client's protocol. */
  protected abstract refuse (status: number, message: string): void

  /** Count `request` in flight on `upstream`, the replica picked for it (`dispatch` sends it). */
  protected begin (request: Forwarded, upstream: Upstream): void {
    this.request = request
    this.#retries = request.idempotent ? 1 : 0
    this.#upstream = upstream
    upstream.inflight++
  }

  /** Send the request begun to its replica (`fresh`: on a new connection). */
  protected dispatch (fresh = false): void {
    const upstream = this.#upstream as Upstream
    const routing = this.routing
    this.#fresh = fresh
    this.status = 0
    this.#started = performance.now()
    this.exchange = routing.pools.lane(upstream.origin, upstream.host, upstream.port, routing.parser).send(this.request as Forwarded, this, fresh)
  }

  /** The request no longer counts as in flight on its replica. */
  protected endRequest (): void {
    const upstream = this.#upstream
    if (upstream === undefined) return
    this.#upstream = undefined
    endOn(upstream)
  }

  /** The answer's head has come: its replica serves, and the route counts the answer. */
  protected answering (answer: ParsedHead): void {
    this.status = answer.statusCode
    const upstream = this.#upstream as Upstream
    upstream.failures = 0
    this.routing.metrics.answered((this.request as Forwarded).route, this.status, (performance.now() - this.#started) / 1000)
  }

  fail (failure: Failure): void {
    const request = this.request as Forwarded
    const upstream = this.#upstream as Upstream
    this.endRequest()
    if (this.status !== 0) {
      this.broken()
      return
    }
    if (failure.stale && !this.#fresh && request.idempotent) {
      // The replica had closed the kept connection: the same request on a new connection.
      this.#forward(upstream, true)
      return
    }
    const routing = this.routing
    const connection = CONNECT_FAILURES.has(failure.code)
    const timeout = TIMEOUTS.has(failure.code)
    if (connection || timeout) routing.failed(upstream, failure.code)
    const next = connection && this.#retries > 0 ? routing.table.pick(request.route, upstream) : undefined
    if (next !== undefined) {
      this.#retries--
      this.#forward(next, false)
      return
    }
    const service = request.route.service
    const [status, message] = timeout ? [504, `${service} did not answer in time`] : [502, `${service} could not be reached`]
    routing.metrics.answered(request.route, status)
    this.refuse(status, message)
    routing.answered(status)
  }

  #forward (upstream: Upstream, fresh: boolean): void {
    this.#upstream = upstream
    upstream.inflight++
    this.dispatch(fresh)
  }
}

/**
 * The route of a client connection's Host (none when it differs from the TLS server name) and the
 * forwarding header lines of its requests, kept for the next request with the same Host while the
 * routing table is the same snapshot.
 */
export class ConnectionRoutes {
  readonly #socket: Socket
  readonly #scheme: 'http' | 'https'
  #host: string | undefined
  #version = -1
  #route: Route | undefined
  #forwardedHost = ''
  #forwarded: string | undefined

  constructor (socket: Socket, scheme: 'http' | 'https') {
    this.#socket = socket
    this.#scheme = scheme
  }

  route (table: RouteTable, host: string | undefined): Route | undefined {
    if (host !== this.#host || table.version !== this.#version) {
      const servername = (this.#socket as { servername?: string | false }).servername
      this.#route = typeof servername === 'string' && hostname(host) !== servername.toLowerCase() ? undefined : table.route(host)
      this.#host = host
      this.#version = table.version
    }
    return this.#route
  }

  /** The forwarding header lines of a request for `host` (the same on every request, as a rule). */
  forwarded (host: string): string {
    if (host !== this.#forwardedHost || this.#forwarded === undefined) {
      const forwarded = forwardedHeaders(this.#socket.remoteAddress, host, this.#scheme)
      let lines = ''
      for (let i = 0; i < forwarded.length; i += 2) lines += `${forwarded[i]}: ${forwarded[i + 1]}\r\n`
      this.#forwarded = lines
      this.#forwardedHost = host
    }
    return this.#forwarded
  }
}
