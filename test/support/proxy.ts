// The proxy's request path on its own for tests: a routing table of replicas on loopback, the
// proxy's HTTP server (and, when asked, its HTTPS server) built as its setup builds it, its metrics,
// and a request helper.
import type { Test } from 'tap'
import { request, type IncomingMessage } from 'node:http'
import type { AddressInfo, Server as NetServer } from 'node:net'
import { createSecureContext } from 'node:tls'
import { MetricSet, exposeAll } from '../../kernel/metrics.js'
import type { PluginMetrics } from '../../kernel/index.js'
import { RouteMetrics } from '../../plugins/proxy/metrics.js'
import { Pools } from '../../plugins/proxy/pools.js'
import { RouteTable, type Upstream } from '../../plugins/proxy/route-table.js'
import { proxyServer, proxyTlsServer, type ProxyFront } from '../../plugins/proxy/runtime.js'
import { selfSigned } from '../../plugins/proxy/certificates.js'
import type { ContainerState } from '../../plugins/reconciler/container-engine.js'
import type { ServiceSpec } from '../../plugins/reconciler/spec.js'

export const PROXY_SETTINGS = { fast_lane: true, http2: true, max_header_bytes: 4096, max_url_bytes: 256, client_headers_timeout_secs: 1, client_idle_timeout_secs: 30, connect_timeout_ms: 1000 }

/** Listen on a free loopback port until the test ends. */
export async function listen (t: Test, server: NetServer & { closeAllConnections?: () => void }): Promise<number> {
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.closeAllConnections?.(); server.close() })
  return (server.address() as AddressInfo).port
}

export const spec = (domain: string, upstreams = 2): ServiceSpec => ({ name: domain.split('.')[0], project: 'test', domain, port: 8080, replicas: upstreams, internal: false } as unknown as ServiceSpec)
export const container = (service: string, replica: number, port: number): ContainerState =>
  ({ runtime: 'docker', id: `${service}-${replica}`, name: `${service}-${replica}`, service, project: 'test', replica, hash: 'h', imageId: 'i', running: true, state: 'running', address: { host: '127.0.0.1', port } })

export interface TestProxy {
  url: URL
  /** The HTTP listener's server (to drain it as a stopping listener does). */
  front: ProxyFront<NetServer>
  /** The HTTPS listener (a self-signed certificate for every name), when asked for. */
  tlsPort?: number
  table: RouteTable
  failed: Upstream[]
  exposition: () => Promise<string>
}

/** `upstreamTimeoutMs`: the wait for a replica's response head (1 s by default). */
/** A route of the test's table: a service at `domain` (named `service`, else the domain's first label) with more of its spec in `spec`. */
export interface TestRoute { domain: string, ports: number[], service?: string, spec?: Partial<ServiceSpec> }

export async function startProxy (t: Test, routes: TestRoute[], options: { tls?: boolean, settings?: Partial<typeof PROXY_SETTINGS>, upstreamTimeoutMs?: number } = {}): Promise<TestProxy> {
  const settings = { ...PROXY_SETTINGS, ...options.settings }
  const table = new RouteTable()
  const named = routes.map(r => ({ ...r, service: r.service ?? r.domain.split('.')[0] }))
  table.replace(named.map(r => ({ ...spec(r.domain, r.ports.length), name: r.service, ...r.spec })), named.flatMap(r => r.ports.map((port, i) => container(r.service, i + 1, port))), '')
  const pools = new Pools({ connectTimeoutMs: 1000, headersTimeoutMs: options.upstreamTimeoutMs ?? 1000, bodyTimeoutMs: 0 })
  t.teardown(async () => { await pools.closeAll() })
  const set = new MetricSet()
  const metrics: PluginMetrics = { counter: c => set.counter(c), gauge: c => set.gauge(c), histogram: c => set.histogram(c), expose: async () => await exposeAll([set.registry]) }
  const failed: Upstream[] = []
  const deps = { table, pools, metrics: new RouteMetrics(metrics), failed: (upstream: Upstream) => { failed.push(upstream); upstream.healthy = false } }
  const front = proxyServer(settings, deps)
  const port = await listen(t, front)
  let tlsPort: number | undefined
  if (options.tls === true) {
    const context = createSecureContext(await selfSigned('proxy.test'))
    tlsPort = await listen(t, proxyTlsServer(settings, deps, async () => context))
  }
  return { url: new URL(`http://127.0.0.1:${port}`), front, ...(tlsPort !== undefined && { tlsPort }), table, failed, exposition: async () => (await exposeAll([set.registry])).body }
}

/** A request through the proxy with the given Host header. */
export async function get (proxy: TestProxy, host: string, path = '/', headers: Record<string, string> = {}): Promise<{ status: number, headers: IncomingMessage['headers'], body: string }> {
  return await new Promise((resolve, reject) => {
    request(new URL(path, proxy.url), { headers: { host, ...headers } }, response => {
      let body = ''
      response.on('data', (chunk: Buffer) => { body += chunk.toString() })
      response.on('end', () => { resolve({ status: response.statusCode ?? 0, headers: response.headers, body }) })
    }).on('error', reject).end()
  })
}

