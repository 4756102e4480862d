// The seam between the reconciler and a scheduler that runs replicas on other nodes as well (the
// cluster plugin, on a leader). Without a scheduler every replica of every service runs on this node,
// as on a single node; with one, each deploy asks it which replicas run here, and it has the other
// nodes apply theirs: those that gain or change replicas before this node converges, those that only
// lose replicas after, so moved replicas start before their predecessors stop.
import type { ContainerState } from './container-engine.js'
import type { ServiceSpec } from './spec.js'
import type { DeployError } from './state.js'

/** How images are pulled: by the rules (latest always, other tags when absent), always, or only when absent. */
export type SchedulePull = 'rules' | 'always' | 'missing'

export interface ScheduleRequest {
  /** deploy, reload, redeploy, scale, remove, reschedule, drain, ... */
  trigger: string
  /** The services this change deploys (added, replaced, scaled, redeployed; every one for a reschedule). */
  declared: readonly ServiceSpec[]
  /** Every service's desired spec once the change is done. */
  desired: readonly ServiceSpec[]
  /** Declared services whose containers this change recreates (their spec changed, or a redeploy). */
  changing: ReadonlySet<string>
  /** Services this change forgets. */
  removed: readonly string[]
  pull: SchedulePull
  /** Recreate the declared services' replicas even when unchanged. */
  force: boolean
}

/** What the other nodes reported of their part of a change. */
export interface RemoteOutcome {
  errors: DeployError[]
  /** Services whose containers changed on other nodes. */
  changed: string[]
}

export interface Schedule {
  /** For each declared service, the replica indices this node runs (an empty list: none here). */
  local: ReadonlyMap<string, readonly number[]>
  /** Declared services with replicas no node can take, and why: reported as errors, the placed replicas still run. */
  unplaced: ReadonlyMap<string, string>
  /** Before this node converges: the other nodes that gain or change replicas apply their new state. */
  grow(): Promise<RemoteOutcome>
  /** After this node converged and the specs are saved: the other nodes that only lose replicas apply theirs. */
  shrink(): Promise<RemoteOutcome>
}

/** A container another node runs, as that node last reported it. */
export type RemoteContainer = ContainerState & { node: string }

export interface Scheduler {
  /**
   * Place the replicas of a change. Throws `Unavailable` (503) when the change would recreate replicas
   * that must run on a node that is offline or unhealthy (a service pinned there), before anything changes.
   */
  schedule(request: ScheduleRequest): Promise<Schedule>
  /** Why a change to this service would have to wait (it is placed on a node that is offline or unhealthy), or undefined. */
  unavailable(spec: ServiceSpec): string | undefined
  /** The containers of the other nodes, as they last reported them. */
  remoteContainers(): RemoteContainer[]
  /** Stop every container of the other nodes (specs stay); how many were stopped. */
  stopRemote(): Promise<number>
  /** Restart a service's replicas on the other nodes; the containers restarted. */
  restartRemote(service: string): Promise<string[]>
  /** The last `tail` lines of a service's replicas on the other nodes, one entry per container. */
  logsRemote(service: string, tail: number): Promise<Array<{ label: string, text: string }>>
}
