// The status entry of a service: its desired spec next to the containers the engine reports (counting
// the replicas that serve), why it is not running as declared (a deploy that never finished included),
// and its canary when one runs.
import { canaryView, type CanaryView } from './canary.js'
import type { ContainerState, ContainerStats } from './container-engine.js'
import { originOf, type Origin } from './service-set.js'
import type { CanaryState, DeployFailure, PendingDeploy, StoredService } from './state.js'

/**
 * running: every desired replica serves and the last deploy succeeded; failed: the last deploy failed
 * and left the new spec's containers as they were (no rollback); stopped: no replica container runs;
 * degraded: otherwise (fewer replicas serve than desired, or the last deploy failed and the service
 * runs its previous spec); idle: zero replicas desired.
 */
export type ServiceStatusValue = 'running' | 'degraded' | 'failed' | 'stopped' | 'idle'

export interface ServiceStatus {
  name: string
  project: string
  /** Where its spec came from: a service file, a deploy request, or (on an agent) the leader. */
  origin: Origin
  status: ServiceStatusValue
  /** Desired replicas (the canary is not one of them). */
  replicas: number
  /** Replicas that serve: running, healthy when the service has an engine healthcheck, and not a replacement left by a failed rollout. */
  running_replicas: number
  /** Why it is not running as declared: a stop request (`POST /api/v1/stop`) stopped it, its last deploy failed, or repairing it fails. */
  reason?: string
  image: string
  domain?: string
  /** Liveness restarts since the service was first deployed. */
  restarts: number
  /** `node`: where it runs, in a cluster (the node's name); `stats`: the engine's figures, when asked for (containers on this node). */
  containers: Array<{ name: string, replica: number, state: string, address?: string, health?: string, canary?: true, node?: string, stats?: ContainerStats }>
  /** The canary running beside the replicas, with whether its container runs. */
  canary?: CanaryView & { running: boolean }
  /** How the proxy routes it, when a proxy runs and the service is routed. */
  route?: RouteStatus
}

/** What a router (the proxy) says of a routed service in its status. */
export interface RouteStatus {
  /** Its primary name. */
  domain: string
  /** The path prefix it takes on its names, if any. */
  path_prefix?: string
  /** Its other names and its aliases (`redirect`: the name an alias redirects to), each with its certificate. */
  names?: Array<{ domain: string, redirect?: string, certificate: RouteStatus['certificate'] }>
  /** Replicas in rotation now. */
  serving: number
  certificate: { status: string, issuer?: string, not_after?: string, error?: string }
}

/** Gives the route of a service, if it is routed; set by the router that runs. */
export type RouteReporter = (service: string) => RouteStatus | undefined

/** Whether a replica container serves: it runs, the engine calls it healthy (when it checks), and a failed rollout did not leave it unready. */
function serves (c: ContainerState, failure: DeployFailure | undefined): boolean {
  return c.running && c.canary !== true && (c.health === undefined || c.health === 'healthy') && c.id !== failure?.unready
}

/** One line on why a service is not running as declared: stopped on purpose, its last deploy failed (and what runs since), or its repair fails. */
function reasonOf (stored: StoredService, repair: string | undefined): string | undefined {
  const { failure, spec } = stored
  if (stored.stopped_at !== undefined) return `stopped by a stop request at ${stored.stopped_at}; its next deploy or restart starts it`
  if (failure === undefined) return repair
  return `${failure.trigger} of ${failure.image} failed: ${failure.error}${failure.recovery === 'unchanged' ? `; ${spec.image} runs as before` : ''}`
}

function statusValue (replicas: number, serving: number, running: number, failure: DeployFailure | undefined): ServiceStatusValue {
  if (failure?.recovery === 'none') return 'failed'
  if (replicas === 0 && running === 0) return 'idle'
  if (serving >= replicas && failure === undefined) return 'running'
  return running === 0 ? 'stopped' : 'degraded'
}

/** Why the containers may not run the stored spec: a deploy that began and whose outcome was never stored. */
function unfinishedReason ({ trigger, image, hash, at }: PendingDeploy): string {
  return `a ${trigger} of ${image} (spec ${hash.slice(0, 12)}) began at ${at} and its outcome could not be stored: containers may run that spec or the one shown; deploy again`
}

/** `repair`: why repairing the service fails, when it does; `unfinished`: a deploy of it that began and whose outcome was never stored. */
export function serviceStatus (stored: StoredService, containers: readonly ContainerState[], restarts: number, canary?: CanaryState, repair?: string, unfinished?: PendingDeploy): ServiceStatus {
  const { spec, failure } = stored
  const replicas = containers.filter(c => c.canary !== true)
  const serving = replicas.filter(c => serves(c, failure)).length
  const reason = unfinished === undefined ? reasonOf(stored, repair) : unfinishedReason(unfinished)
  const value = statusValue(spec.replicas, serving, replicas.filter(c => c.running).length, failure)
  const entry: ServiceStatus = {
    name: spec.name,
    project: spec.project,
    origin: originOf(stored.source),
    status: unfinished !== undefined && value === 'running' ? 'degraded' : value,
    ...(reason !== undefined && { reason }),
    replicas: spec.replicas,
    running_replicas: serving,
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

