// The status entry of a service: its desired spec next to the containers the engine reports, and its
// canary when one runs.
import { canaryView, type CanaryView } from './canary.js'
import type { ContainerState } from './runtime.js'
import { originOf, type Origin } from './service-set.js'
import type { CanaryState, StoredService } from './state.js'

/** running: all desired replicas run; degraded: some do; stopped: none does; idle: zero replicas desired. */
export type ServiceStatusValue = 'running' | 'degraded' | 'stopped' | 'idle'

export interface ServiceStatus {
  name: string
  project: string
  /** Where its spec came from: a service file, a deploy request, or (on an agent) the leader. */
  origin: Origin
  status: ServiceStatusValue
  /** Desired replicas (the canary is not one of them). */
  replicas: number
  running_replicas: number
  image: string
  domain?: string
  /** Liveness restarts since the service was first deployed. */
  restarts: number
  /** `node`: where it runs, in a cluster (the node's name). */
  containers: Array<{ name: string, replica: number, state: string, address?: string, health?: string, canary?: true, node?: string }>
  /** The canary running beside the replicas, with whether its container runs. */
  canary?: CanaryView & { running: boolean }
  /** How the proxy routes it, when a proxy runs and the service is routed. */
  route?: RouteStatus
}

/** What a router (the proxy) says of a routed service in its status. */
export interface RouteStatus {
  domain: string
  /** Replicas in rotation now. */
  serving: number
  certificate: { status: string, issuer?: string, not_after?: string, error?: string }
}

/** Gives the route of a service, if it is routed; set by the router that runs. */
export type RouteReporter = (service: string) => RouteStatus | undefined

export function serviceStatus (stored: StoredService, containers: readonly ContainerState[], restarts: number, canary?: CanaryState): ServiceStatus {
  const { spec } = stored
  const running = containers.filter(c => c.running && c.canary !== true).length
  const status: ServiceStatusValue = spec.replicas === 0 && running === 0
    ? 'idle'
    : running >= spec.replicas ? 'running' : running === 0 ? 'stopped' : 'degraded'
  const entry: ServiceStatus = {
    name: spec.name,
    project: spec.project,
    origin: originOf(stored.source),
    status,
    replicas: spec.replicas,
    running_replicas: running,
    image: spec.image,
    restarts,
    containers: [...containers].sort((a, b) => a.replica - b.replica).map(c => ({
      name: c.name, replica: c.replica, state: c.state, ...(c.address !== undefined && { address: `${c.address.host}:${c.address.port}` }),
      ...(c.health !== undefined && { health: c.health }), ...(c.canary === true && { canary: true as const }), ...(c.node !== undefined && { node: c.node })
    }))
  }
  if (spec.domain !== undefined) entry.domain = spec.domain
  if (canary !== undefined) entry.canary = { ...canaryView(canary), running: containers.some(c => c.canary === true && c.running) }
  return entry
}

/** One line for a certificate state: `valid (issuer, until date)`, `pending`, `failed (2 attempts, next …): reason`. */
export function describeCertificate (c: RouteStatus['certificate'] & { attempts?: number, next_attempt_at?: string }): string {
  const until = c.not_after === undefined ? '' : ` (${c.issuer ?? '?'}, until ${c.not_after.slice(0, 10)})`
  if (c.status === 'failed') return `failed (${c.attempts ?? 0} attempts, next ${c.next_attempt_at ?? '?'}): ${c.error ?? ''}`
  return `${c.status}${until}`
}
