// The proxy plugin at work: the routing table fed by the reconciler, the HTTP listener's server with
// its limits and timeouts, health checks, the traffic hooks of zero-downtime deploys, and the routes
// on the control API. Imported by setup only.
import { createServer, type Server } from 'node:http'
import type { PluginContext } from '../../kernel/index.js'
import { proxyRoutes } from './control-routes.js'
import { forwarder, type ForwardOptions } from './forward.js'
import type { ProxyConfig, ProxyService } from './index.js'
import { RouteMetrics } from './metrics.js'
import { Pools } from './pools.js'
import { RouteTable } from './route-table.js'
import { Router } from './router.js'
import { upgrader } from './upgrade.js'

/** How often the table is rebuilt even without a change (containers restarted outside a deploy). */
const REFRESH_MS = 10_000
/** The server checks its connections' header and request timeouts this often. */
const CONNECTION_CHECK_MS = 1_000

export function setupProxy (ctx: PluginContext<ProxyConfig>): ProxyService {
  const config = ctx.config
  const orchestration = ctx.use('reconciler')
  const table = new RouteTable()
  const pools = new Pools({
    connectTimeoutMs: config.connect_timeout_ms,
    headersTimeoutMs: config.upstream_timeout_secs * 1000,
    bodyTimeoutMs: config.upstream_idle_timeout_secs * 1000
  })
  ctx.onClose(async () => { await pools.closeAll() })
  const router = new Router({
    table,
    pools,
    specs: () => orchestration.reconciler.specs(),
    containers: async () => await orchestration.reconciler.containers(),
    defaultDomain: orchestration.cluster.domain,
    drainTimeoutMs: config.drain_timeout_secs * 1000,
    readyTimeoutMs: config.ready_timeout_secs * 1000,
    probeTimeoutMs: Math.min(config.connect_timeout_ms * 2, 5000),
    log: ctx.log,
    changed: () => {}
  })
  ctx.onClose(orchestration.traffic.add(router))
  const metrics = new RouteMetrics(ctx.metrics)
  ctx.serve('proxy-http', proxyServer(config, { table, pools, metrics, connectionFailed: upstream => { router.connectionFailed(upstream) } }))

  const refresh = async (): Promise<void> => {
    try {
      await router.refresh()
    } catch (err) {
      ctx.log.warn({ err: (err as Error).message }, 'routing table not refreshed: the engine did not answer')
    }
  }
  ctx.events.on('reconciler.changed', ({ services }) => {
    router.settled(services)
    void ctx.track(refresh())
  })
  ctx.schedule.every('refresh', REFRESH_MS, refresh)
  ctx.schedule.every('health', config.health_interval_secs * 1000, async () => { await router.checkHealth() })
  ctx.http('control', proxyRoutes(table, ctx.use('tokens')), { prefix: '/api/v1/proxy' })
  return { table, router, refresh }
}

export type ServerSettings = Pick<ProxyConfig, 'max_header_bytes' | 'max_url_bytes' | 'client_headers_timeout_secs' | 'client_idle_timeout_secs' | 'connect_timeout_ms'>

/**
 * The HTTP server of the proxy: header size, header and idle timeouts (a client that sends its headers
 * too slowly gets 408, a silent connection is closed), requests forwarded, upgrades tunnelled.
 */
export function proxyServer (settings: ServerSettings, deps: Omit<ForwardOptions, 'scheme' | 'maxUrlBytes'>): Server {
  const server = createServer({
    maxHeaderSize: settings.max_header_bytes,
    headersTimeout: settings.client_headers_timeout_secs * 1000,
    requestTimeout: 0,
    keepAliveTimeout: settings.client_idle_timeout_secs * 1000,
    connectionsCheckingInterval: CONNECTION_CHECK_MS
  }, forwarder({ ...deps, scheme: 'http', maxUrlBytes: settings.max_url_bytes }))
  server.setTimeout(settings.client_idle_timeout_secs * 1000, socket => { socket.destroy() })
  server.on('upgrade', upgrader({ table: deps.table, scheme: 'http', connectTimeoutMs: settings.connect_timeout_ms }))
  return server
}
