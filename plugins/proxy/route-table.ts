// The routing table: host name → the running replicas of the service with that domain. Built as a
// whole snapshot from the reconciler's specs and one container list, then swapped in at once (as
// Traefik's providers push whole configurations); upstream objects outlive snapshots, so counts of
// requests in flight, health and draining carry over.
import type { ContainerState } from '../reconciler/runtime.js'
import type { ServiceSpec } from '../reconciler/spec.js'

export interface Upstream {
  /** Container id. */
  readonly id: string
  readonly container: string
  readonly replica: number
  host: string
  port: number
  /** `host:port`, the key of its connection pool. */
  origin: string
  /** Requests and tunnels in flight. */
  inflight: number
  /** False after a failed health probe or connection, until a probe passes. */
  healthy: boolean
  /** Being taken out of rotation before its container stops. */
  draining: boolean
  /** Resolved (and cleared) when `inflight` reaches zero. */
  idle?: () => void
}

export interface Route {
  readonly domain: string
  readonly service: string
  readonly project: string
  readonly port: number
  /** Health path probed on each replica, if the service has one. */
  readonly health?: string
  readonly upstreams: readonly Upstream[]
}

/** The domain a service is served at: its own, else `<name>.<default domain>`; none when it is not routed. */
export function routedDomain (spec: ServiceSpec, defaultDomain: string): string | undefined {
  if (spec.internal || spec.port === undefined) return undefined
  return spec.domain ?? (defaultDomain === '' ? undefined : `${spec.name}.${defaultDomain}`)
}

export class RouteTable {
  #routes = new Map<string, Route>()
  readonly #upstreams = new Map<string, Upstream>()
  #cursor = 0
  /** Replicas found by the first snapshot are assumed to serve; later ones must pass a probe first. */
  #built = false

  /** The route of a Host header value (port and letter case ignored). */
  route (host: string | undefined): Route | undefined {
    const name = hostname(host)
    return this.#routes.get(name.endsWith('.') ? name.slice(0, -1) : name)
  }

  get routes (): Route[] {
    return [...this.#routes.values()].sort((a, b) => a.domain.localeCompare(b.domain))
  }

  upstream (id: string): Upstream | undefined {
    return this.#upstreams.get(id)
  }

  /** Build the next snapshot and swap it in; returns the upstreams that no longer exist. */
  replace (specs: readonly ServiceSpec[], containers: readonly ContainerState[], defaultDomain: string): Upstream[] {
    const routes = new Map<string, Route>()
    const seen = new Set<string>()
    for (const spec of specs) {
      const domain = routedDomain(spec, defaultDomain)
      if (domain === undefined) continue
      const upstreams = containers
        .filter(c => c.service === spec.name && c.running && c.address !== undefined)
        .sort((a, b) => a.replica - b.replica)
        .map(c => this.#upstreamOf(c))
      for (const upstream of upstreams) seen.add(upstream.id)
      routes.set(domain, { domain, service: spec.name, project: spec.project, port: spec.port as number, ...(spec.health !== undefined && { health: spec.health }), upstreams })
    }
    const gone = [...this.#upstreams.values()].filter(u => !seen.has(u.id))
    for (const upstream of gone) this.#upstreams.delete(upstream.id)
    this.#routes = routes
    this.#built = true
    return gone
  }

  #upstreamOf (container: ContainerState): Upstream {
    const { host, port } = container.address as { host: string, port: number }
    const known = this.#upstreams.get(container.id)
    if (known !== undefined) {
      if (known.port !== port || known.host !== host) Object.assign(known, { host, port, origin: originOf(host, port), healthy: false })
      return known
    }
    const upstream: Upstream = { id: container.id, container: container.name, replica: container.replica, host, port, origin: originOf(host, port), inflight: 0, healthy: !this.#built, draining: false }
    this.#upstreams.set(container.id, upstream)
    return upstream
  }

  /**
   * The replica for the next request: the healthy, not draining one with the fewest requests in
   * flight; ties go round robin. `except` is skipped (the one a retry failed on).
   */
  pick (route: Route, except?: Upstream): Upstream | undefined {
    const candidates = route.upstreams
    const count = candidates.length
    let best: Upstream | undefined
    const start = this.#cursor++ % Math.max(count, 1)
    for (let i = 0; i < count; i++) {
      const upstream = candidates[(start + i) % count]
      if (!upstream.healthy || upstream.draining || upstream === except) continue
      if (best === undefined || upstream.inflight < best.inflight) best = upstream
    }
    return best
  }
}

/** A Host header's name, lower case, without its port. */
export function hostname (host: string | undefined): string {
  if (host === undefined) return ''
  const colon = host.lastIndexOf(':')
  return (colon > host.lastIndexOf(']') ? host.slice(0, colon) : host).toLowerCase()
}

export function originOf (host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`
}

/** Count a request or tunnel as begun on `upstream`; the returned function ends it (once). */
export function begin (upstream: Upstream): () => void {
  upstream.inflight++
  let ended = false
  return () => {
    if (ended) return
    ended = true
    if (--upstream.inflight === 0 && upstream.idle !== undefined) {
      const idle = upstream.idle
      upstream.idle = undefined
      idle()
    }
  }
}
