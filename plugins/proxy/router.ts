// The proxy's view of what runs: it rebuilds the routing table from the reconciler (after every
// change, and on a schedule to see restarts), keeps replicas' health (probes, and requests that fail
// in a row), and is the reconciler's traffic hook: a replica is drained before its container goes
// (or restarts), and a new or restarted one is routed once it serves.
import type { Logger } from 'pino'
import { coalesced } from '../../kernel/runtime-api.js'
import type { ContainerState, ServiceSpec, TrafficHooks } from '../reconciler/api.js'
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
  /** Requests in a row that fail (no connection, no response head in time) before a replica leaves the rotation. */
  maxFails: number
  probeTimeoutMs: number
  log: Logger
  /** Called after every new snapshot (certificates follow the domains). */
  changed(): void
  /**
   * Whether replicas new to the table serve at once, without a probe first: a master that follows
   * routes to what the leader published, which its own proxy saw serve (masters on etcd).
   */
  trusted?: () => boolean
}

const READY_POLL_MS = 200

export class Router implements TrafficHooks {
  readonly #deps: RouterDeps
  /** Specs of services being rolled out: the reconciler records a spec only once its deploy ends. */
  readonly #rolling = new Map<string, ServiceSpec>()
  /** Services with a `ready` under way, by count: their rollout spec stays, whatever changes meanwhile. */
  readonly #readying = new Map<string, number>()

  constructor (deps: RouterDeps) {
    this.#deps = deps
  }

  /** Rebuild the table from the reconciler; concurrent calls share one rebuild (and one more after it). */
  readonly refresh = coalesced(async () => { await this.#rebuild() })

  async #rebuild (): Promise<void> {
    const { table, pools } = this.#deps
    const specs = new Map(this.#deps.specs().map(spec => [spec.name, spec]))
    for (const [name, spec] of this.#rolling) specs.set(name, spec)
    const shadowed = table.shadowed.join()
    const gone = table.replace([...specs.values()], await this.#deps.containers(), this.#deps.defaultDomain, this.#deps.canaries(), this.#deps.trusted?.() === true)
    if (table.shadowed.length > 0 && table.shadowed.join() !== shadowed) this.#deps.log.warn({ services: table.shadowed }, 'services not routed: a static route of [proxy.routes] has their domain')
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

  /**
   * Resolve once the new (or restarted) replica `id` of a routed service is in the table and serves.
   * A restarted replica, drained before, is no longer draining: from here it enters the rotation as
   * soon as a probe passes (this one, or a later health check should this one give up).
   */
  async ready (spec: ServiceSpec, id: string): Promise<void> {
    if (routedDomain(spec, this.#deps.defaultDomain) === undefined) return
    this.#rolling.set(spec.name, spec)
    this.#readying.set(spec.name, (this.#readying.get(spec.name) ?? 0) + 1)
    try {
      await this.#untilServes(spec, id)
    } finally {
      const left = (this.#readying.get(spec.name) ?? 1) - 1
      if (left > 0) this.#readying.set(spec.name, left)
      else this.#readying.delete(spec.name)
    }
  }

  async #untilServes (spec: ServiceSpec, id: string): Promise<void> {
    const deadline = Date.now() + this.#deps.readyTimeoutMs
    for (;;) {
      await this.refresh()
      const upstream = this.#deps.table.upstream(id)
      const route = this.#deps.table.routes.find(r => r.service === spec.name && r.static !== true)
      if (upstream?.draining === true) Object.assign(upstream, { draining: false, healthy: false })
      if (upstream !== undefined && route !== undefined && await serves(upstream, route, this.#deps.probeTimeoutMs)) {
        Object.assign(upstream, { healthy: true, failures: 0, missedProbes: 0 })
        return
      }
      if (Date.now() > deadline) throw new Error(`the new replica did not serve ${route?.health ?? 'connections'} within ${this.#deps.readyTimeoutMs / 1000} s, so the rollout stopped`)
      await new Promise(resolve => setTimeout(resolve, READY_POLL_MS))
    }
  }

  /**
   * The reconciler has recorded these services' specs: its view replaces the one of their rollout.
   * Not while a replica of theirs is awaited: the change event also comes for other reasons (a
   * node's state, a repair), and a new service's route would vanish in the middle of its rollout.
   */
  settled (services: readonly string[]): void {
    for (const name of services) if (!this.#readying.has(name)) this.#rolling.delete(name)
  }

  /** Probe every replica; log the ones whose health changed. */
  async checkHealth (): Promise<void> {
    for (const upstream of await checkAll(this.#deps.table.routes, this.#deps.probeTimeoutMs)) {
      this.#deps.log.info({ container: upstream.container, healthy: upstream.healthy }, upstream.healthy ? 'replica serves again' : 'replica failed its health check: out of rotation')
    }
  }

  /**
   * A request could not connect to the replica, or got no response head within its timeout (`why`):
   * after `maxFails` such requests in a row, out of rotation until a health probe passes.
   */
  failed (upstream: Upstream, why: string): void {
    upstream.failures++
    if (upstream.failures < this.#deps.maxFails || !upstream.healthy) return
    upstream.healthy = false
    this.#deps.log.warn({ container: upstream.container, failures: upstream.failures, why }, 'requests to the replica failed: out of rotation until a health probe passes')
  }
}
