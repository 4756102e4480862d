// The proxy's view of what runs: it rebuilds the routing table from the reconciler (after every
// change, and on a schedule to see restarts), keeps replicas' health, and is the reconciler's traffic
// hook: a replica is drained before its container goes, and a new one is routed once it serves.
import type { Logger } from 'pino'
import type { ContainerState } from '../reconciler/runtime.js'
import type { ServiceSpec } from '../reconciler/spec.js'
import type { TrafficHooks } from '../reconciler/traffic.js'
import { checkAll, serves } from './health.js'
import type { Pools } from './pools.js'
import { routedDomain, type RouteTable, type Upstream } from './route-table.js'

export interface RouterDeps {
  table: RouteTable
  pools: Pools
  specs(): ServiceSpec[]
  /** Each running canary's share of requests (percent), by service. */
  canaries(): ReadonlyMap<string, number>
  containers(): Promise<ContainerState[]>
  defaultDomain: string
  drainTimeoutMs: number
  readyTimeoutMs: number
  probeTimeoutMs: number
  log: Logger
  /** Called after every new snapshot (certificates follow the domains). */
  changed(): void
}

const READY_POLL_MS = 200

export class Router implements TrafficHooks {
  readonly #deps: RouterDeps
  #refreshing: Promise<void> | undefined
  #again = false
  /** Specs of services being rolled out: the reconciler records a spec only once its deploy ends. */
  readonly #rolling = new Map<string, ServiceSpec>()

  constructor (deps: RouterDeps) {
    this.#deps = deps
  }

  /** Rebuild the table from the reconciler; concurrent calls share one rebuild (and one more after it). */
  async refresh (): Promise<void> {
    if (this.#refreshing !== undefined) {
      this.#again = true
      await this.#refreshing
      return
    }
    this.#refreshing = (async () => {
      do {
        this.#again = false
        await this.#rebuild()
      } while (this.#again)
    })().finally(() => { this.#refreshing = undefined })
    await this.#refreshing
  }

  async #rebuild (): Promise<void> {
    const { table, pools } = this.#deps
    const specs = new Map(this.#deps.specs().map(spec => [spec.name, spec]))
    for (const [name, spec] of this.#rolling) specs.set(name, spec)
    const gone = table.replace([...specs.values()], await this.#deps.containers(), this.#deps.defaultDomain, this.#deps.canaries())
    await Promise.all(gone.map(async upstream => { await pools.close(upstream.origin) }))
    this.#deps.changed()
  }

  /** Take the replica out of rotation and wait (up to the drain timeout) for its requests in flight. */
  async drain (container: ContainerState): Promise<void> {
    const upstream = this.#deps.table.upstream(container.id)
    if (upstream === undefined) return
    upstream.draining = true
    if (upstream.inflight === 0) return
    let timer: NodeJS.Timeout | undefined
    const drained = await Promise.race([
      new Promise<boolean>(resolve => { upstream.idle = () => { resolve(true) } }),
      new Promise<boolean>(resolve => { timer = setTimeout(() => { resolve(false) }, this.#deps.drainTimeoutMs) })
    ])
    clearTimeout(timer)
    if (!drained) this.#deps.log.warn({ container: container.name, inflight: upstream.inflight }, 'requests still in flight when the drain timeout passed')
  }

  /** Resolve once the new replica `id` of a routed service is in the table and serves. */
  async ready (spec: ServiceSpec, id: string): Promise<void> {
    if (routedDomain(spec, this.#deps.defaultDomain) === undefined) return
    this.#rolling.set(spec.name, spec)
    const deadline = Date.now() + this.#deps.readyTimeoutMs
    for (;;) {
      await this.refresh()
      const upstream = this.#deps.table.upstream(id)
      const route = this.#deps.table.routes.find(r => r.service === spec.name)
      if (upstream !== undefined && route !== undefined && await serves(upstream, route, this.#deps.probeTimeoutMs)) {
        upstream.healthy = true
        return
      }
      if (Date.now() > deadline) throw new Error(`the new replica did not serve ${route?.health ?? 'connections'} within ${this.#deps.readyTimeoutMs / 1000} s, so the rollout stopped`)
      await new Promise(resolve => setTimeout(resolve, READY_POLL_MS))
    }
  }

  /** The reconciler has recorded these services' specs: its view replaces the one of their rollout. */
  settled (services: readonly string[]): void {
    for (const name of services) this.#rolling.delete(name)
  }

  /** Probe every replica; log the ones whose health changed. */
  async checkHealth (): Promise<void> {
    for (const upstream of await checkAll(this.#deps.table.routes, this.#deps.probeTimeoutMs)) {
      this.#deps.log.info({ container: upstream.container, healthy: upstream.healthy }, upstream.healthy ? 'replica serves again' : 'replica failed its health check: out of rotation')
    }
  }

  /** A request could not connect: out of rotation until the next health check passes. */
  connectionFailed (upstream: Upstream): void {
    if (upstream.healthy) this.#deps.log.warn({ container: upstream.container }, 'connection to replica failed: out of rotation')
    upstream.healthy = false
  }
}
