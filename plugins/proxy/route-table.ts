// The routing table: host name → the running replicas of the service with that domain (each of a
// service's names is a route to the same replicas; each of its aliases a route that redirects to its
// primary name). Built as a
// whole snapshot from the reconciler's specs and one container list, then swapped in at once (as
// Traefik's providers push whole configurations); upstream objects outlive snapshots, so counts of
// requests in flight, health and draining carry over. A service with a canary has its requests split
// by the canary's weight between the canary replica and the others. A snapshot is also plain data
// (RouteRecord), which the proxy keeps in its store and serves from while the engine does not answer.
// Static routes (`[proxy.routes]`, fixed addresses that are not containers) are part of every
// snapshot, whatever the engine says; a service whose domain one of them has is not routed.
import type { ContainerState, MiddlewareSpec, ServiceSpec } from '../reconciler/api.js'
import { RouteMiddleware } from './middleware/index.js'

/** A replica as plain data: what a snapshot knows of it. */
export interface UpstreamRecord {
  /** Container id. */
  readonly id: string
  readonly container: string
  readonly replica: number
  /** The service's canary replica (its share of requests is the route's canaryWeight). */
  readonly canary: boolean
  host: string
  port: number
}

export interface Upstream extends UpstreamRecord {
  /** `host:port`, the key of its connection pool. */
  origin: string
  /** Requests and tunnels in flight. */
  inflight: number
  /** False after a failed health probe, or requests that failed (`failures`), until a probe passes. */
  healthy: boolean
  /** Requests in a row that could not connect or got no response head in time; a response head resets it. */
  failures: number
  /** Health probes in a row that failed; a passing probe resets it. */
  missedProbes: number
  /** Being taken out of rotation before its container stops. */
  draining: boolean
  /** Resolved (and cleared) when `inflight` reaches zero. */
  idle?: () => void
}

/** A route as plain data, its replicas as records. */
export interface RouteRecord<U extends UpstreamRecord = UpstreamRecord> {
  readonly domain: string
  readonly service: string
  readonly project: string
  readonly port: number
  /** Health path probed on each replica, if the service has one. */
  readonly health?: string
  readonly upstreams: readonly U[]
  /** Percent of requests for the canary replica, when the service has a canary. */
  readonly canaryWeight?: number
  /** A static route: `service` is its name under `[proxy.routes]`, its upstreams are fixed addresses. */
  readonly static?: true
  /** The service's primary name (the first it is served at): its status shows this route. */
  readonly primary?: true
  /** An alias: requests are redirected (308) to this name, the service's primary one; no upstreams. */
  readonly redirect?: string
  /** The path prefix the service takes on this name (`/api`); none: the whole name, less longer prefixes of others. */
  readonly prefix?: string
  /** The prefix is taken off the path before the request reaches a replica. */
  readonly strip?: true
  readonly middleware?: MiddlewareSpec
}

export interface Route extends RouteRecord<Upstream> {
  /** The route's middleware, as applied (every route has one: HTTPS answers get HSTS by default). */
  readonly guard: RouteMiddleware
}

/** Whether a request target (path and query) is under `prefix`: equal to it, or followed by `/` or `?`. */
export function underPrefix (url: string, prefix: string): boolean {
  if (!url.startsWith(prefix)) return false
  const next = url.charCodeAt(prefix.length)
  return Number.isNaN(next) || next === 47 || next === 63
}

/** The request target a replica gets: without the route's prefix when it strips it (`/api/x` → `/x`, `/api` → `/`). */
export function upstreamPath (route: Pick<RouteRecord, 'prefix' | 'strip'>, url: string): string {
  if (route.strip !== true || route.prefix === undefined) return url
  const rest = url.slice(route.prefix.length)
  return rest.startsWith('/') ? rest : `/${rest}`
}

/** The names a service is served at, its primary one first: its own (`domain`, `domains`), else `<name>.<default domain>`; none when it is not routed. */
export function routedNames (spec: ServiceSpec, defaultDomain: string): string[] {
  if (spec.internal || spec.port === undefined) return []
  const own = [...new Set([...(spec.domain === undefined ? [] : [spec.domain]), ...(spec.domains ?? [])])]
  return own.length > 0 ? own : defaultDomain === '' ? [] : [`${spec.name}.${defaultDomain}`]
}

/** The primary name a service is served at; none when it is not routed. */
export function routedDomain (spec: ServiceSpec, defaultDomain: string): string | undefined {
  return routedNames(spec, defaultDomain)[0]
}

export class RouteTable {
  /** The static routes (`[proxy.routes]`), part of every snapshot. */
  readonly statics: readonly RouteRecord[]
  /** By name: its routes, longest prefix first (the one without a prefix last). */
  #routes = new Map<string, Route[]>()
  /** Middleware by service and settings, kept from one snapshot to the next. */
  #guards = new Map<string, RouteMiddleware>()
  readonly #upstreams = new Map<string, Upstream>()
  #cursor = 0
  /** Per route with a canary: the credit of weighted turns (see #canaryTurn). */
  readonly #credits = new Map<string, number>()
  /** Replicas found by the first snapshot are assumed to serve; later ones must pass a probe first. */
  #built = false
  /** Counts the snapshots swapped in: a route looked up earlier holds while this is unchanged. */
  version = 0
  /** Services of the last snapshot not routed because a static route has their domain. */
  shadowed: string[] = []

  constructor (statics: readonly RouteRecord[] = []) {
    this.statics = statics
  }

  /**
   * The route of a Host header value (port and letter case ignored) for a request target: the one
   * with the longest prefix the target is under. Without a target: the name's first route, which has
   * a prefix whenever any of the name's routes has one (the fast lane hands those to the general path).
   */
  route (host: string | undefined, url?: string): Route | undefined {
    const name = hostname(host)
    const routes = this.#routes.get(name.endsWith('.') ? name.slice(0, -1) : name)
    if (routes === undefined || url === undefined || routes[0].prefix === undefined) return routes?.[0]
    return routes.find(route => route.prefix === undefined || underPrefix(url, route.prefix))
  }

  get routes (): Route[] {
    return [...this.#routes.values()].flat().sort((a, b) => a.domain.localeCompare(b.domain) || (a.prefix ?? '').localeCompare(b.prefix ?? ''))
  }

  upstream (id: string): Upstream | undefined {
    return this.#upstreams.get(id)
  }

  /**
   * Build the next snapshot and swap it in; `canaries` gives each canary's weight by service;
   * `trusted`: replicas new to the table serve at once (else, after the first snapshot, they must pass
   * a probe first). Returns the upstreams that no longer exist.
   */
  replace (specs: readonly ServiceSpec[], containers: readonly ContainerState[], defaultDomain: string, canaries: ReadonlyMap<string, number> = new Map(), trusted = false): Upstream[] {
    const records: RouteRecord[] = []
    for (const spec of specs) {
      const names = routedNames(spec, defaultDomain)
      if (names.length === 0) continue
      const upstreams = containers
        .filter(c => c.service === spec.name && c.running && c.address !== undefined)
        .sort((a, b) => a.replica - b.replica)
        .map(c => ({ id: c.id, container: c.name, replica: c.replica, canary: c.canary === true, ...(c.address as { host: string, port: number }) }))
      const canaryWeight = canaries.get(spec.name)
      const route = {
        service: spec.name, project: spec.project, port: spec.port as number,
        ...(spec.path_prefix !== undefined && { prefix: spec.path_prefix }), ...(spec.strip_prefix === true && { strip: true as const }),
        ...(spec.middleware !== undefined && { middleware: spec.middleware })
      }
      names.forEach((domain, i) => {
        records.push({
          domain, ...route, ...(spec.health !== undefined && { health: spec.health }), upstreams,
          ...(canaryWeight !== undefined && { canaryWeight }), ...(i === 0 && { primary: true as const })
        })
      })
      for (const alias of spec.aliases ?? []) records.push({ domain: alias, ...route, upstreams: [], redirect: names[0] })
    }
    return this.restore(records, trusted)
  }

  /** Swap in a snapshot given as records (one kept from an earlier run) and the static routes; returns the upstreams that no longer exist. */
  restore (records: readonly RouteRecord[], trusted = false): Upstream[] {
    const routes = new Map<string, Route[]>()
    const guards = new Map<string, RouteMiddleware>()
    const seen = new Set<string>()
    const staticDomains = new Set(this.statics.map(r => r.domain))
    const services = records.filter(r => r.static !== true)
    this.shadowed = services.filter(r => staticDomains.has(r.domain)).map(r => r.service)
    for (const record of [...services.filter(r => !staticDomains.has(r.domain)), ...this.statics]) {
      const upstreams = record.upstreams.map(u => this.#upstreamOf(u, trusted))
      for (const upstream of upstreams) seen.add(upstream.id)
      const key = `${record.service}\n${JSON.stringify(record.middleware ?? null)}`
      const guard = guards.get(key) ?? this.#guards.get(key) ?? new RouteMiddleware(record.middleware, record.service)
      guards.set(key, guard)
      const named = routes.get(record.domain) ?? []
      named.push({ ...record, upstreams, guard })
      routes.set(record.domain, named)
    }
    for (const named of routes.values()) named.sort((a, b) => (b.prefix?.length ?? 0) - (a.prefix?.length ?? 0))
    const canaries = new Set([...routes.values()].flat().filter(r => r.canaryWeight !== undefined).map(creditKey))
    for (const key of this.#credits.keys()) if (!canaries.has(key)) this.#credits.delete(key)
    this.#guards = guards
    const gone = [...this.#upstreams.values()].filter(u => !seen.has(u.id))
    for (const upstream of gone) this.#upstreams.delete(upstream.id)
    this.#routes = routes
    this.version++
    this.#built = true
    return gone
  }

  /** The routes of services as plain data (the replicas' records, without their state); static routes come from the configuration. */
  records (): RouteRecord[] {
    return this.routes.filter(route => route.static !== true).map(({ guard: _guard, ...route }) => ({ ...route, upstreams: route.upstreams.map(({ id, container, replica, canary, host, port }) => ({ id, container, replica, canary, host, port })) }))
  }

  #upstreamOf (record: UpstreamRecord, trusted: boolean): Upstream {
    const { host, port } = record
    const known = this.#upstreams.get(record.id)
    if (known !== undefined) {
      if (known.port !== port || known.host !== host) Object.assign(known, { host, port, origin: originOf(host, port), healthy: trusted, missedProbes: 0 })
      return known
    }
    const upstream: Upstream = { id: record.id, container: record.container, replica: record.replica, canary: record.canary, host, port, origin: originOf(host, port), inflight: 0, healthy: !this.#built || trusted, failures: 0, missedProbes: 0, draining: false }
    this.#upstreams.set(record.id, upstream)
    return upstream
  }

  /**
   * The replica for the next request: the healthy, not draining one with the fewest requests in
   * flight; ties go round robin. `except` is skipped (the one a retry failed on). With a canary, the
   * weighted turn first chooses between the canary and the other replicas; when the chosen side has
   * none that can serve, the other side serves.
   */
  pick (route: Route, except?: Upstream): Upstream | undefined {
    if (route.canaryWeight === undefined) return this.#least(route.upstreams, except)
    const canary = this.#canaryTurn(creditKey(route), route.canaryWeight)
    return this.#least(route.upstreams.filter(u => u.canary === canary), except) ?? this.#least(route.upstreams.filter(u => u.canary !== canary), except)
  }

  #least (candidates: readonly Upstream[], except: Upstream | undefined): Upstream | undefined {
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

  /** Smooth weighted turns: of every 100 requests of a route, exactly `weight` are the canary's, spread evenly. */
  #canaryTurn (key: string, weight: number): boolean {
    const credit = (this.#credits.get(key) ?? 0) + weight
    const turn = credit >= 100
    this.#credits.set(key, turn ? credit - 100 : credit)
    return turn
  }
}

/** A route's key among the canary credits: its name and prefix. */
function creditKey (route: RouteRecord): string {
  return `${route.domain}${route.prefix ?? ''}`
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
    endOn(upstream)
  }
}

/** A request or tunnel on `upstream` has ended; a drain waiting for it is told at the last one. */
export function endOn (upstream: Upstream): void {
  if (--upstream.inflight === 0 && upstream.idle !== undefined) {
    const idle = upstream.idle
    upstream.idle = undefined
    idle()
  }
}
