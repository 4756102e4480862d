// The proxy on the control API: GET /api/v1/proxy/routes, the routing table with each replica's state.
import type { FastifyPluginAsync } from 'fastify'
import type { TokenService } from '../tokens/index.js'
import type { CertificateManager, CertificateState } from './certificate-manager.js'
import type { RouteTable } from './route-table.js'

export interface RouteView {
  domain: string
  service: string
  project: string
  port: number
  health?: string
  /** Percent of requests for the canary replica, when the service has a canary. */
  canary_weight?: number
  /** A static route of [proxy.routes]: `service` is its name, each upstream's `container` its address. */
  static?: true
  /** An alias: requests are redirected (308) to this name, the service's primary one. */
  redirect?: string
  /** The path prefix the service takes on this name, and whether it is stripped. */
  path_prefix?: string
  strip_prefix?: true
  /** The kinds of middleware the route applies (never their settings: hashes and lists stay in the spec). */
  middleware?: string[]
  upstreams: Array<{ container: string, replica: number, address: string, healthy: boolean, draining: boolean, inflight: number, canary?: true }>
  certificate: CertificateState
}

export function routeViews (table: RouteTable, certificates: CertificateManager): RouteView[] {
  return table.routes.map(route => ({
    domain: route.domain,
    service: route.service,
    project: route.project,
    port: route.port,
    ...(route.health !== undefined && { health: route.health }),
    ...(route.canaryWeight !== undefined && { canary_weight: route.canaryWeight }),
    ...(route.static === true && { static: true as const }),
    ...(route.redirect !== undefined && { redirect: route.redirect }),
    ...(route.prefix !== undefined && { path_prefix: route.prefix }),
    ...(route.strip === true && { strip_prefix: true as const }),
    ...(route.middleware !== undefined && { middleware: Object.keys(route.middleware) }),
    upstreams: route.upstreams.map(u => ({
      container: u.container, replica: u.replica, address: `${u.host}:${u.port}`, healthy: u.healthy, draining: u.draining, inflight: u.inflight, ...(u.canary && { canary: true as const })
    })),
    certificate: certificates.state(route.domain)
  }))
}

export function proxyRoutes (table: RouteTable, certificates: CertificateManager, tokens: TokenService): FastifyPluginAsync {
  return async app => {
    // A token limited to projects sees the routes of their services only.
    app.get('/routes', { onRequest: tokens.requireRole('viewer') }, async request => ({ routes: routeViews(table, certificates).filter(r => tokens.reaches(request, r.project)) }))
  }
}
