// The proxy plugin at work: the routing table fed by the reconciler when one runs (and, while the
// engine does not answer, the last one remembered) and the static routes, the HTTP listener's server with its limits and timeouts, health
// checks, the traffic hooks of zero-downtime deploys and liveness restarts, the routes on the
// control API, and, with [proxy].workers > 1, the worker threads that serve the same listeners
// (workers/). Imported by setup only (and by the worker threads, for the listeners' servers).
import diagnostics from 'node:diagnostics_channel'
import { createServer, type Server, type ServerOptions } from 'node:http'
import { constants as http2Constants, createServer as createHttp2Server, type Http2Session, type ServerHttp2Stream } from 'node:http2'
import { createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net'
import { createServer as createTlsServer, type SecureContext, type Server as TlsServer } from 'node:tls'
import { resolve } from 'node:path'
import { StartupError, type KeyValueDatabase, type PluginContext, type Services } from '../../kernel/index.js'
import type { TrafficHooks } from '../reconciler/api.js'
import { AcmeIssuer } from './acme.js'
import { CertificateManager } from './certificate-manager.js'
import { Certificates, fallbackContext, selfSigned, type StoredCertificate } from './certificates.js'
import { proxyRoutes } from './control-routes.js'
import { createParser, FastLane, HELD_FOR_CLIENT, Http2Lane, laneSupport, type LaneOptions, type ParserFactory } from './fast-lane/index.js'
import { awaitsAnswer, CHALLENGE_PREFIX, forwarder, type ForwardOptions } from './forward.js'
import type { ProxyConfig, ProxySections, ProxyService } from './index.js'
import { RouteMetrics } from './metrics.js'
import { Pools, type PoolSettings } from './pools.js'
import { RememberedRoutes, type RememberedTable } from './remembered-routes.js'
import { RouteTable, routedNames, type Upstream } from './route-table.js'
import { Router } from './router.js'
import { claimedDomain, staticRoutes } from './static-routes.js'
import { upgrader } from './upgrade.js'
import { WorkerPool } from './workers/pool.js'
import type { UpstreamState } from './workers/protocol.js'
import { reusePortUnsupported } from './workers/support.js'
import { controlState } from '../cluster/index.js'

/** The name on the certificate of connections for no routed name. */
export const UNKNOWN_HOST = 'unknown.berth.invalid'
/** How often the table is rebuilt even without a change (containers restarted outside a deploy). */
const REFRESH_MS = 10_000
/** The server checks its connections' header and request timeouts this often. */
const CONNECTION_CHECK_MS = 1_000

export function setupProxy (ctx: PluginContext<ProxyConfig, ProxySections>): ProxyService {
  const config = ctx.config
  const acmeSection = ctx.sections.acme
  // Without the reconciler (a proxy on its own, like Caddy) only the static routes are served.
  const orchestration = ctx.useOptional('reconciler')
  const clusterService = ctx.useOptional('cluster')
  const cluster = clusterService?.settings ?? { domain: '', acme_email: '' }
  // Certificates and the ACME account are the cluster's: every master serves them.
  const state = controlState(ctx)
  const unsupported = config.workers > 1 ? reusePortUnsupported() : undefined
  if (unsupported !== undefined) throw new StartupError(`[proxy].workers = ${config.workers}: ${unsupported}; set it to 1`)
  const table = new RouteTable(staticRoutes(config.routes))
  // A domain has one owner: a static route's is no deployed service's, and no service deployed later may claim it.
  const claim = (service: string, domain: string | undefined): string | undefined => claimedDomain(table.statics, service, domain)
  const claimed = (orchestration?.reconciler.specs() ?? []).flatMap(spec => [...routedNames(spec, cluster.domain), ...(spec.aliases ?? [])].map(name => claim(spec.name, name))).find(problem => problem !== undefined)
  if (claimed !== undefined) throw new StartupError(`[proxy].routes: deployed ${claimed}; remove the service or route another domain`)
  if (orchestration !== undefined) {
    orchestration.reconciler.claimedDomain = claim
    ctx.onClose(() => { orchestration.reconciler.claimedDomain = undefined })
  }
  const pools = new Pools(poolSettings(config))
  /** The worker threads, once started (config.workers > 1). */
  const workers: { pool?: WorkerPool } = {}
  ctx.onClose(async () => { await pools.closeAll() })

  const certificates = new Certificates(state.db<StoredCertificate>('certificates'))
  const issuer = acmeSection.directory === ''
    ? undefined
    : new AcmeIssuer({ directory: acmeSection.directory, email: acmeSection.email !== '' ? acmeSection.email : cluster.acme_email, caFile: acmeSection.ca_file === '' ? '' : resolve(ctx.cwd, acmeSection.ca_file) }, { accounts: state.db('acme-accounts'), challenges: observed(state.db<string>('acme-challenges'), () => { workers.pool?.challengesChanged() }) }, ctx.log)
  const manager = new CertificateManager({
    certificates,
    issuer,
    settings: { renewBeforeDays: acmeSection.renew_before_days, retryBaseMs: acmeSection.retry_base_secs * 1000 },
    log: ctx.log,
    outcomes: ctx.metrics.counter({ name: 'berth_proxy_certificate_orders_total', help: 'ACME orders by outcome: issued, renewed, failed.', labelNames: ['outcome'] }),
    track: work => { void ctx.track(work) },
    changed: () => { reportAcme(); workers.pool?.certificatesChanged() },
    alert: alert => { ctx.events.emit('operator.alert', alert) },
    leading: () => clusterService?.isLeader() ?? true
  })
  // Among masters the leader orders and renews; a master elected checks at once.
  clusterService?.onLeadership(leading => { if (leading) manager.check() })
  const reportAcme = (): void => {
    if (issuer === undefined) return
    const failing = manager.failing()
    ctx.check('acme', failing.length === 0
      ? { status: 'ok', reason: issuer.directory }
      : { status: 'degraded', reason: `certificate orders failing for ${failing.length} domain(s), retried with backoff: ${failing.slice(0, 3).map(f => `${f.domain} (${f.error})`).join('; ')}` })
  }
  reportAcme()

  const remembered = new RememberedRoutes(ctx.store.db<RememberedTable, string>('routes'))
  const followDomains = (): void => { manager.follow([...new Set(table.routes.map(route => route.domain))]) }
  const router = new Router({
    table,
    pools,
    specs: () => orchestration?.reconciler.specs() ?? [],
    canaries: () => orchestration?.reconciler.canaryWeights() ?? new Map(),
    containers: async () => await orchestration?.reconciler.containers() ?? [],
    defaultDomain: cluster.domain,
    drainTimeoutMs: config.drain_timeout_secs * 1000,
    readyTimeoutMs: config.ready_timeout_secs * 1000,
    maxFails: config.max_fails,
    probeTimeoutMs: Math.min(config.connect_timeout_ms * 2, 5000),
    log: ctx.log,
    changed: () => {
      void ctx.track(remembered.keep(table.records()))
      followDomains()
      workers.pool?.sync()
    },
    trusted: () => clusterService?.isLeader() === false
  })
  if (orchestration !== undefined) {
    ctx.onClose(orchestration.traffic.add(withWorkers(router, workers, config.drain_timeout_secs * 1000)))
    // A liveness restart goes through the same seam: drained first, back in rotation once it serves.
    orchestration.liveness.traffic = orchestration.traffic
  }
  const metrics = new RouteMetrics(ctx.metrics)
  reportLane(ctx, config.fast_lane)
  const failed = (upstream: Upstream, why: string): void => {
    router.failed(upstream, why)
    workers.pool?.sync()
  }
  const forwarding = { table, pools, metrics, failed }
  // With workers, the listeners' addresses are bound with SO_REUSEPORT: the worker threads bind them too.
  const serving = { reusePort: config.workers > 1 }
  const connections = ctx.metrics.counter({ name: 'berth_proxy_worker_connections_total', help: 'Connections the proxy\'s listeners accepted, by event loop (worker "0" is the main thread).', labelNames: ['worker'] })
  const http = proxyServer(config, {
    ...forwarding,
    challenge: token => issuer?.challenges.get(token),
    secure: domain => manager.hasCertificate(domain),
    httpsPort: () => Number(ctx.address('proxy-https').port === '' ? 443 : ctx.address('proxy-https').port)
  })
  ctx.serve('proxy-http', http, serving)
  // Names nobody routes, and clients that send no name, share one self-signed certificate.
  const unknownHost = new Map<string, Promise<SecureContext>>()
  const tls = proxyTlsServer(config, forwarding, async servername => {
    const route = table.route(servername)
    return route !== undefined ? await certificates.contextFor(route.domain) : await fallbackContext(unknownHost, UNKNOWN_HOST)
  })
  void ctx.track(selfSigned(UNKNOWN_HOST).then(pair => { tls.setSecureContext(pair) }))
  ctx.serve('proxy-https', tls, serving)
  const mainConnections = connections.labels('0')
  for (const front of [http, tls]) front.on('connection', () => { mainConnections.inc() })

  const refresh = async (): Promise<void> => {
    try {
      await router.refresh()
      ctx.check('routes', { status: 'ok', reason: orchestration === undefined ? `${table.routes.length} static route(s) of [proxy.routes]; no reconciler runs` : `${table.routes.length} route(s), from the container engine` })
    } catch (err) {
      const cause = (err as Error).message
      ctx.log.warn({ err: cause }, 'routing table not refreshed: the engine did not answer')
      // Started while the engine does not answer: the table of the last run (if any) and the static routes serve meanwhile.
      if (table.version === 0) {
        table.restore(remembered.recall()?.routes ?? [])
        followDomains()
      }
      ctx.check('routes', remembered.since() === 0
        ? { status: 'down', reason: `the routing table could not be built (${cause}) and none is remembered: nothing${table.statics.length > 0 ? ' but the static routes of [proxy.routes]' : ''} is routed until the container engine answers` }
        : { status: 'degraded', reason: `the routing table could not be refreshed (${cause}); serving the last one the engine gave (${table.routes.length} route(s), unchanged since ${new Date(remembered.since()).toISOString()}) until it answers` })
    }
  }
  ctx.events.on('reconciler.changed', ({ services }) => {
    router.settled(services)
    void ctx.track(refresh())
  })
  ctx.schedule.every('refresh', REFRESH_MS, refresh)
  ctx.schedule.every('health', config.health_interval_secs * 1000, async () => {
    await router.checkHealth()
    workers.pool?.sync()
  })
  ctx.schedule.every('certificates', acmeSection.check_interval_secs * 1000, () => { manager.check() })
  const tokens = ctx.useOptional('tokens')
  if (tokens !== undefined) ctx.http('control', proxyRoutes(table, manager, tokens), { prefix: '/api/v1/proxy' })
  if (orchestration !== undefined) reportRoutes(orchestration.reconciler, table, manager, ctx)
  const restarts = ctx.metrics.counter({ name: 'berth_proxy_worker_restarts_total', help: 'Proxy worker threads started again after they died.' })
  const start = async (): Promise<void> => {
    if (config.workers === 1) return
    workers.pool = await WorkerPool.start({
      settings: serverSettings(config),
      pools: poolSettings(config),
      statics: table.statics,
      http: ctx.bound('proxy-http'),
      https: ctx.bound('proxy-https')
    }, config.workers - 1, {
      table: () => ({ type: 'table', routes: table.records(), states: table.routes.flatMap(route => route.upstreams.map(u => [u.id, u.healthy, u.draining] as UpstreamState)), secure: table.routes.map(r => r.domain).filter(domain => manager.hasCertificate(domain)) }),
      challenges: () => issuer === undefined ? [] : [...issuer.challenges.getRange()].map(({ key, value }) => [key, value]),
      pair: async name => await certificates.pair(name),
      failed: (id, why) => {
        const upstream = table.upstream(id)
        if (upstream !== undefined) failed(upstream, why)
      },
      counted: (worker, report, accepted) => {
        if (report !== undefined) metrics.add(report)
        if (accepted > 0) connections.labels(String(worker)).inc(accepted)
      },
      restarted: () => { restarts.inc() },
      log: ctx.log
    })
  }
  ctx.onClose(async () => {
    const pool = workers.pool
    workers.pool = undefined
    // A restart in place: the threads serve on until the next kernel's proxy takes them over.
    if (ctx.restarting) pool?.park()
    else await pool?.close(config.drain_timeout_secs * 1000)
  })
  return { table, router, certificates: manager, refresh, start, workers: () => workers.pool }
}

/** The settings of the listeners' servers and of the connections to replicas, as every thread uses them. */
function serverSettings (config: ProxyConfig): ServerSettings {
  const { fast_lane, http2, max_header_bytes, max_url_bytes, client_headers_timeout_secs, client_idle_timeout_secs, connect_timeout_ms } = config
  return { fast_lane, http2, max_header_bytes, max_url_bytes, client_headers_timeout_secs, client_idle_timeout_secs, connect_timeout_ms }
}

function poolSettings (config: ProxyConfig): PoolSettings {
  return { connectTimeoutMs: config.connect_timeout_ms, headersTimeoutMs: config.upstream_timeout_secs * 1000, bodyTimeoutMs: config.upstream_idle_timeout_secs * 1000 }
}

/**
 * The reconciler's traffic hooks with worker threads: a drain ends once the main thread and every
 * worker (told by a table saying the replica drains, then asked) have no request in flight on it.
 */
function withWorkers (router: Router, workers: { pool?: WorkerPool }, drainTimeoutMs: number): TrafficHooks {
  return {
    drain: async container => {
      const draining = router.drain(container)
      await Promise.all([draining, workers.pool?.drain(container.id, drainTimeoutMs)])
    },
    ready: async (spec, id) => {
      await router.ready(spec, id)
      workers.pool?.sync()
    }
  }
}

/** `db` whose writes call `changed` once made. */
function observed<V> (db: KeyValueDatabase<V>, changed: () => void): KeyValueDatabase<V> {
  return {
    get: key => db.get(key),
    getRange: range => db.getRange(range),
    getKeys: range => db.getKeys(range),
    getKeysCount: range => db.getKeysCount(range),
    put: async (key, value) => { const done = await db.put(key, value); changed(); return done },
    remove: async key => { const done = await db.remove(key); changed(); return done }
  }
}

/** Give the reconciler's status each service's route and certificates. */
function reportRoutes (reconciler: Services['reconciler']['reconciler'], table: RouteTable, manager: CertificateManager, ctx: PluginContext<ProxyConfig, ProxySections>): void {
  reconciler.routes = service => {
    const routes = table.routes.filter(r => r.service === service && r.static !== true)
    const route = routes.find(r => r.primary === true) ?? routes.find(r => r.redirect === undefined)
    if (route === undefined) return undefined
    const others = routes.filter(r => r !== route)
    return {
      domain: route.domain,
      ...(route.prefix !== undefined && { path_prefix: route.prefix }),
      ...(others.length > 0 && { names: others.map(r => ({ domain: r.domain, ...(r.redirect !== undefined && { redirect: r.redirect }), certificate: manager.state(r.domain) })) }),
      serving: route.upstreams.filter(u => u.healthy && !u.draining).length,
      certificate: manager.state(route.domain)
    }
  }
  ctx.onClose(() => { reconciler.routes = undefined })
}

/** Say whether the fast lane runs, and warn when this Node took it away although it is asked for. */
function reportLane (ctx: PluginContext<ProxyConfig, ProxySections>, wanted: boolean): void {
  const support = laneSupport()
  const on = wanted && support.parser
  ctx.metrics.gauge({ name: 'berth_proxy_fast_lane', help: 'Whether the proxy\'s fast lane takes requests (1) or every request goes through the general path (0).' }).set(on ? 1 : 0)
  if (wanted && !support.parser) ctx.log.warn({ node: process.version }, 'proxy fast lane off: this Node does not offer node:http\'s parser as expected; every request takes the general path (correct, slower)')
  else if (on && !support.directWrites) ctx.log.info({ node: process.version }, 'proxy fast lane writes through the sockets: this Node does not offer its stream binding as expected')
}

export type ServerSettings = Pick<ProxyConfig, 'fast_lane' | 'http2' | 'max_header_bytes' | 'max_url_bytes' | 'client_headers_timeout_secs' | 'client_idle_timeout_secs' | 'connect_timeout_ms'>

type ServerDeps = Omit<ForwardOptions, 'scheme' | 'maxUrlBytes'>

/** Header size, header and idle timeouts: a client slow to send its headers gets 408, a silent connection is closed. */
function serverOptions (settings: ServerSettings): ServerOptions {
  return {
    maxHeaderSize: settings.max_header_bytes,
    headersTimeout: settings.client_headers_timeout_secs * 1000,
    requestTimeout: 0,
    keepAliveTimeout: settings.client_idle_timeout_secs * 1000,
    connectionsCheckingInterval: CONNECTION_CHECK_MS
  }
}

function serveProxy<S extends Server> (server: S, settings: ServerSettings, scheme: 'http' | 'https', table: RouteTable): S {
  server.setTimeout(settings.client_idle_timeout_secs * 1000, socket => {
    // A request waiting for a replica's head is ended by upstream_timeout_secs (504), not cut off.
    if (!awaitsAnswer(socket)) socket.destroy()
  })
  server.on('upgrade', upgrader({ table, scheme, connectTimeoutMs: settings.connect_timeout_ms }))
  return server
}

/** Node publishes every finished response of node:http here (the kernel counts each listener's). */
const RESPONSE_FINISHED = diagnostics.channel('http.server.response.finish')
/** ... and every request as it begins: a draining front turns keep-alive off on the general path's. */
const REQUEST_STARTED = diagnostics.channel('http.server.request.start')

/** A proxy listener's server: connections go to the fast lane first, to node:http's server for the rest. */
export type ProxyFront<S extends NetServer> = S & {
  /** From now on every answer says `connection: close` and ends its connection (the listener is closing). */
  drain: () => void
  closeIdleConnections: () => void
  closeAllConnections: () => void
}

type LaneSettings = Pick<LaneOptions, 'scheme' | 'general'>

/** Streams a client may have open at once on one HTTP/2 connection (nginx's default). */
const HTTP2_STREAMS = 128
/**
 * Streams a client may reset within RESET_WINDOW_MS on one connection (rapid reset, CVE-2023-44487):
 * past it the connection gets GOAWAY ENHANCE_YOUR_CALM and is closed. A browser cancels a few.
 */
const RESET_BUDGET = 200
const RESET_WINDOW_MS = 10_000
/** nghttp2's bounds on a session, stated rather than left to defaults that may change. */
const HTTP2_LIMITS = { maxSessionInvalidFrames: 100, maxSessionRejectedStreams: 100, maxOutstandingPings: 10, maxSettings: 32, maxSessionMemory: 10, maxHeaderListPairs: 128 }

/** Close the session with ENHANCE_YOUR_CALM once its client resets more streams than the budget allows. */
function limitResets (session: Http2Session, socket: Socket): void {
  let windowStart = Date.now()
  let resets = 0
  let calmed = false
  session.on('stream', (stream: ServerHttp2Stream) => {
    stream.once('aborted', () => {
      const now = Date.now()
      if (now - windowStart > RESET_WINDOW_MS) {
        windowStart = now
        resets = 0
      }
      if (++resets <= RESET_BUDGET || calmed) return
      calmed = true
      // GOAWAY ENHANCE_YOUR_CALM, then the connection closed once it is written (a session made from a
      // handed-over socket leaves its socket open).
      session.goaway(http2Constants.NGHTTP2_ENHANCE_YOUR_CALM)
      setTimeout(() => { session.destroy(); socket.destroy() }, 100).unref()
    })
  })
}

/**
 * The HTTP/2 server of the HTTPS listener (never listening itself): with the fast lane (`parser`), its
 * streams go to the lane's HTTP/2 side, which hands the rest to the general path; without it, every
 * request takes the general path, through node:http2's compatibility layer (of a second server, which
 * gets no connections, when the lane runs). Its answers count as the front's; its sessions are kept
 * to be closed with the listener's.
 */
function http2Server (settings: ServerSettings, deps: ServerDeps, answered: (status: number) => void, parser: ParserFactory | undefined): { accept: (socket: Socket) => void, sessions: Set<Http2Session> } {
  const handle = forwarder({ ...deps, scheme: 'https', maxUrlBytes: settings.max_url_bytes })
  const options = { ...HTTP2_LIMITS, settings: { maxConcurrentStreams: HTTP2_STREAMS, maxHeaderListSize: settings.max_header_bytes } }
  const general = createHttp2Server(options, (req, res) => {
    res.once('finish', () => { answered(res.statusCode) })
    handle(req, res)
  })
  const lane = parser === undefined
    ? undefined
    : new Http2Lane({ ...deps, parser, answered, maxUrlBytes: settings.max_url_bytes, fallback: (stream, headers, flags, rawHeaders) => { general.emit('stream', stream, headers, flags, rawHeaders) } })
  const server = lane === undefined ? general : createHttp2Server(options).on('stream', lane.stream)
  const sessions = new Set<Http2Session>()
  // The socket a session is being made from (node:http2 makes it while the connection is handed over).
  let arriving: Socket | undefined
  server.on('session', session => {
    sessions.add(session)
    if (arriving !== undefined) {
      limitResets(session, arriving)
      lane?.session(session, arriving)
    }
    session.once('close', () => { sessions.delete(session) })
  })
  // A session silent this long is closed (as an HTTP/1.1 connection is).
  server.setTimeout(settings.client_idle_timeout_secs * 1000)
  const accept = (socket: Socket): void => {
    arriving = socket
    server.emit('connection', socket)
    arriving = undefined
  }
  return { accept, sessions }
}

/**
 * Connections of `front` (as its `event` reports them) go to the fast lane, which hands what it does
 * not serve to `general`, a node:http server that never listens itself; on HTTPS, those that chose
 * HTTP/2 (ALPN) go to its HTTP/2 server. Answers of all count as the front's, for the kernel's
 * listener counts and its closing of idle connections.
 */
function withLane<S extends NetServer> (front: S, event: 'connection' | 'secureConnection', general: Server, settings: ServerSettings, deps: ServerDeps, lane: LaneSettings): ProxyFront<S> {
  const handOff = (socket: Socket): void => {
    general.emit('connection', socket)
    socket.resume()
  }
  const answered = (status: number): void => {
    if (RESPONSE_FINISHED.hasSubscribers) RESPONSE_FINISHED.publish({ server: front, response: { statusCode: status } })
  }
  const parser = settings.fast_lane ? createParser : undefined
  const fast = parser === undefined
    ? undefined
    : new FastLane({
      ...lane,
      parser,
      table: deps.table,
      pools: deps.pools,
      metrics: deps.metrics,
      maxHeaderBytes: settings.max_header_bytes,
      maxUrlBytes: settings.max_url_bytes,
      headersTimeoutMs: settings.client_headers_timeout_secs * 1000,
      idleTimeoutMs: settings.client_idle_timeout_secs * 1000,
      failed: deps.failed,
      handOff,
      answered
    })
  const h2 = lane.scheme === 'https' && settings.http2 ? http2Server(settings, deps, answered, parser) : undefined
  front.on(event, (socket: Socket & { alpnProtocol?: string | false }) => {
    if (h2 !== undefined && socket.alpnProtocol === 'h2') h2.accept(socket)
    else if (fast === undefined) handOff(socket)
    else fast.accept(socket)
  })
  const relay = (message: unknown): void => {
    const { server, response } = message as { server: unknown, response: unknown }
    if (server === general) RESPONSE_FINISHED.publish({ server: front, response })
  }
  RESPONSE_FINISHED.subscribe(relay)
  // node:http checks its connections' header timeouts once told it listens.
  general.emit('listening')
  const noKeepAlive = (message: unknown): void => {
    const { server, response } = message as { server: unknown, response: { shouldKeepAlive: boolean } }
    if (server === general) response.shouldKeepAlive = false
  }
  front.on('close', () => {
    RESPONSE_FINISHED.unsubscribe(relay)
    REQUEST_STARTED.unsubscribe(noKeepAlive)
    general.close()
  })
  return Object.assign(front, {
    drain: () => {
      if (fast !== undefined) fast.closing = true
      REQUEST_STARTED.subscribe(noKeepAlive)
      // HTTP/2 clients are told (GOAWAY) to open no more streams; those in flight finish.
      for (const session of h2?.sessions ?? []) session.close()
    },
    closeIdleConnections: () => { fast?.closeIdle(); general.closeIdleConnections() },
    closeAllConnections: () => {
      fast?.closeAll()
      general.closeAllConnections()
      for (const session of h2?.sessions ?? []) session.destroy()
    }
  })
}

/** The HTTP server of the proxy: requests forwarded (or redirected to HTTPS, or ACME challenges answered), upgrades tunnelled. */
export function proxyServer (settings: ServerSettings, deps: ServerDeps): ProxyFront<NetServer> {
  const general = serveProxy(createServer(serverOptions(settings), forwarder({ ...deps, scheme: 'http', maxUrlBytes: settings.max_url_bytes })), settings, 'http', deps.table)
  return withLane(createNetServer({ noDelay: true, highWaterMark: HELD_FOR_CLIENT }), 'connection', general, settings, deps, {
    scheme: 'http',
    // ACME challenges and redirects to HTTPS are answered by the general path.
    general: (url, route) => route.redirect !== undefined || (deps.challenge !== undefined && url.startsWith(CHALLENGE_PREFIX)) || deps.secure?.(route.domain) === true
  })
}

/** The HTTPS server: the certificate of each routed domain by SNI (self-signed until one is issued); HTTP/2 or HTTP/1.1 as the client chooses (ALPN). */
export function proxyTlsServer (settings: ServerSettings, deps: Omit<ServerDeps, 'challenge' | 'secure' | 'httpsPort'>, context: (servername: string) => Promise<SecureContext>): ProxyFront<TlsServer> {
  const general = serveProxy(createServer(serverOptions(settings), forwarder({ ...deps, scheme: 'https', maxUrlBytes: settings.max_url_bytes })), settings, 'https', deps.table)
  const front = createTlsServer({
    minVersion: 'TLSv1.2',
    ALPNProtocols: settings.http2 ? ['h2', 'http/1.1'] : ['http/1.1'],
    SNICallback: (servername, done) => {
      context(servername).then(secure => { done(null, secure) }, (err: Error) => { done(err) })
    }
  })
  return withLane(front, 'secureConnection', general, settings, deps, { scheme: 'https', general: (_url, route) => route.redirect !== undefined })
}
