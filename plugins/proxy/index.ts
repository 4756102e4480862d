// proxy: the built-in reverse proxy. Routes requests by Host to the running replicas of the service
// with that domain (as the reconciler reports them), balances across healthy replicas, drains a
// replica before the reconciler stops it, and serves WebSocket upgrades and streamed bodies. Static
// routes ([proxy.routes]) send a domain to fixed addresses that are not containers.
import type { Static } from '@sinclair/typebox'
import { definePlugin, type SectionSchema } from '../../kernel/index.js'
import { proxyCommands } from './commands.js'
import type { CertificateManager } from './certificate-manager.js'
import type { RouteTable } from './route-table.js'
import type { Router } from './router.js'
import type { WorkerPool } from './workers/pool.js'
import { defaultWorkers } from './workers/support.js'

export interface ProxyService {
  readonly table: RouteTable
  readonly router: Router
  readonly certificates: CertificateManager
  /** Rebuild the routing table now (it also follows every reconciler change). */
  refresh(): Promise<void>
  /** Start the worker threads ([proxy].workers > 1) on the ports the listeners are bound to. */
  start(): Promise<void>
  /** The worker threads, while they run. */
  workers(): WorkerPool | undefined
}

declare module '../../kernel/index.js' {
  interface Services { proxy: ProxyService }
}

/** The most event loops (the main thread and worker threads) the proxy's listeners run on. */
export const MAX_WORKERS = 64

const proxySection = ((Type) => Type.Object({
  http_port: Type.Integer({ minimum: 0, maximum: 65535, default: 80, description: 'Port of the HTTP listener (PROXY_HTTP_PORT).' }),
  https_port: Type.Integer({ minimum: 0, maximum: 65535, default: 443, description: 'Port of the HTTPS listener (PROXY_HTTPS_PORT).' }),
  connect_timeout_ms: Type.Integer({ minimum: 1, default: 3000, description: 'Longest wait for a connection to a replica; past it the answer is 504.' }),
  upstream_timeout_secs: Type.Integer({ minimum: 1, default: 30, description: 'Longest wait for a replica\'s response headers; past it the answer is 504 (and the request counts against the replica, see max_fails).' }),
  upstream_idle_timeout_secs: Type.Integer({ minimum: 0, default: 0, description: 'Longest silence inside a replica\'s response body; 0: none (server-sent events may idle).' }),
  client_headers_timeout_secs: Type.Integer({ minimum: 1, default: 10, description: 'Time a client has to send its request headers (slow clients are cut off with 408).' }),
  client_idle_timeout_secs: Type.Integer({ minimum: 1, default: 60, description: 'A client connection silent this long is closed.' }),
  fast_lane: Type.Boolean({ default: true, description: 'Serve the common request (HTTP/1.1, no body) on the fast lane, on Node\'s own HTTP parser; false: every request through node:http\'s server (the general path).' }),
  workers: Type.Integer({ minimum: 1, maximum: MAX_WORKERS, default: defaultWorkers(MAX_WORKERS), description: `Event loops serving the proxy's listeners (PROXY_WORKERS), 1 to ${MAX_WORKERS}: the main thread and workers-1 worker threads bound to the same ports (SO_REUSEPORT, Linux, Node 22.12 or later); default: the number of cores there, else 1.` }),
  http2: Type.Boolean({ default: true, description: 'Offer HTTP/2 to HTTPS clients (ALPN); false: HTTP/1.1 only.' }),
  max_header_bytes: Type.Integer({ minimum: 1024, default: 16384, description: 'Largest request header block (431 beyond).' }),
  max_url_bytes: Type.Integer({ minimum: 64, default: 8192, description: 'Longest request URL (414 beyond).' }),
  health_interval_secs: Type.Integer({ minimum: 1, default: 5, description: 'How often each replica is probed (its service\'s health path, else a connection).' }),
  max_fails: Type.Integer({ minimum: 1, default: 1, description: 'Requests in a row that fail to connect to a replica or get no response headers in time before it leaves the rotation (until a health probe passes).' }),
  drain_timeout_secs: Type.Integer({ minimum: 0, default: 30, description: 'Longest wait for a replica\'s requests in flight before its container is stopped.' }),
  ready_timeout_secs: Type.Integer({ minimum: 1, default: 60, description: 'Longest wait for a new replica to serve during a rollout before the rollout stops.' }),
  routes: Type.Record(Type.String(), Type.Object({
    domain: Type.String({ description: 'The domain served by this route; no service may have it.' }),
    upstreams: Type.Array(Type.String(), { description: 'Addresses ("host:port", "[IPv6]:port") served in turn, over plain HTTP, like a service\'s replicas.' }),
    health_path: Type.Optional(Type.String({ description: 'Path probed on each upstream (2xx or 3xx passes); without it a probe opens a connection.' }))
  }, { additionalProperties: false }), { default: {}, description: 'Static routes, [proxy.routes.<name>]: a domain served by fixed addresses that are not containers.' })
}, { additionalProperties: false })) satisfies SectionSchema

export type ProxyConfig = Static<ReturnType<typeof proxySection>>

const acmeSection = ((Type) => Type.Object({
  email: Type.String({ default: '', description: 'ACME account contact; empty: [cluster].acme_email, or none.' }),
  directory: Type.String({ default: 'https://acme-v02.api.letsencrypt.org/directory', description: 'ACME directory URL; empty: no ACME, every domain is served with a self-signed certificate.' }),
  ca_file: Type.String({ default: '', description: 'PEM file of CAs to trust for the ACME directory (a private ACME server), relative to the working directory.' }),
  renew_before_days: Type.Integer({ minimum: 0, default: 0, description: 'Renew this many days before expiry; 0: when a third of the lifetime is left.' }),
  retry_base_secs: Type.Integer({ minimum: 1, default: 60, description: 'First retry of a failed order; doubled after each failure, at most six hours.' }),
  check_interval_secs: Type.Integer({ minimum: 1, default: 60, description: 'How often certificates are checked for renewal and failed orders for retry.' })
}, { additionalProperties: false })) satisfies SectionSchema

export type ProxySections = { readonly acme: Static<ReturnType<typeof acmeSection>> }

export default definePlugin({
  name: 'proxy',
  version: '0.1.0',
  product: 'orchestration',
  description: 'Reverse proxy: routes by domain to the replicas of services, zero-downtime deploys.',
  // Without the reconciler it serves the static routes only (a proxy on its own); without tokens it
  // has no control routes. [cluster] (the default domain, the ACME contact) belongs to the cluster plugin.
  optionalDependsOn: ['reconciler', 'tokens', 'cluster'],
  config: proxySection,
  sections: { acme: acmeSection },
  env: { PROXY_HTTP_PORT: 'http_port', PROXY_HTTPS_PORT: 'https_port', PROXY_WORKERS: 'workers' },
  listeners: [
    { name: 'proxy-http', port: 80, kind: 'raw', portKey: 'http_port', description: 'the reverse proxy, plain HTTP' },
    { name: 'proxy-https', port: 443, kind: 'raw', portKey: 'https_port', description: 'the reverse proxy, HTTPS' }
  ],

  async setup (ctx) {
    const { setupProxy } = await import('./runtime.js')
    const service = setupProxy(ctx)
    // The first table before the listeners open: after a restart in place (reload), the requests
    // that waited for the new kernel find their routes at once.
    await service.refresh()
    return service
  },

  async start (_ctx, service) {
    await service.refresh().catch(() => {})
    await service.router.checkHealth()
    await service.start()
  },

  commands: proxyCommands
})
