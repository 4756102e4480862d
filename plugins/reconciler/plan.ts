// The planner: desired services + the containers that exist → the actions that make them agree,
// grouped into boot layers (depends_on). A service's canary (one replica of another spec beside the
// others) is planned apart from its numbered replicas. A repair plans only what brings the containers
// back (missing replicas, stopped or paused ones, extra ones), never a new spec. A pure function: no engine,
// no clock, no randomness.
import type { ContainerState } from './container-engine.js'
import { bootLayers } from './service-set.js'
import type { ServiceSpec } from './spec.js'

export interface Desired {
  spec: ServiceSpec
  hash: string
  /** Id of the local image the spec's reference names now; undefined when it is not present. */
  imageId?: string
  /** Recreate every replica even when nothing changed (redeploy). */
  force?: boolean
  /** The canary that runs beside the replicas; none: any canary container is removed. */
  canary?: DesiredCanary
  /** The replica indices this node runs (a cluster places the others elsewhere); absent: 1 to spec.replicas. */
  replicas?: readonly number[]
  /** The spec the replicas a rollout replaced go back to when a replacement fails its checks; absent: they stay as they are. */
  rollback?: { spec: ServiceSpec, hash: string }
}

/** One replica of another spec of the service, beside its numbered replicas. */
export interface DesiredCanary {
  spec: ServiceSpec
  hash: string
  imageId?: string
}

export type Action =
  | { kind: 'create', replica: number }
  | { kind: 'recreate', replica: number, container: ContainerState, reason: 'changed' | 'new image' | 'redeploy' }
  | { kind: 'start', container: ContainerState }
  | { kind: 'unpause', container: ContainerState }
  | { kind: 'remove', container: ContainerState, reason: 'extra replica' | 'duplicate' | 'orphan' }

export interface ServicePlan {
  name: string
  project: string
  /** Undefined for an orphan (a service no longer declared). */
  desired?: Desired
  /** Removals first, then replicas in order; empty when the service is as desired. */
  actions: Action[]
  /** The canary container's actions (replica 1 stands for the one canary), run after `actions`. */
  canaryActions: Action[]
}

export interface Plan {
  /** Services whose containers exist but which are not declared any more (full deploys only). */
  orphans: ServicePlan[]
  /** Declared services in boot order: a layer after everything its services depend on. */
  layers: ServicePlan[][]
}

/** What a group of containers should run: a hash and image, with `count` replicas numbered from 1 (or the replicas `indices`). */
interface Target {
  hash: string
  imageId?: string
  force?: boolean
  count: number
  indices?: readonly number[]
  /** Keep every container there is (whatever its spec), and start only those the engine is not restarting itself. */
  repair?: boolean
}

/** Actions that make `containers` (numbered by `replicaOf`) run `target`: removals first, then replicas in order. */
function groupActions (target: Target, containers: readonly ContainerState[], replicaOf: (c: ContainerState) => number): Action[] {
  const removals: Action[] = []
  const replicas: Action[] = []
  const byReplica = new Map<number, ContainerState[]>()
  const indices = target.indices ?? Array.from({ length: target.count }, (_, i) => i + 1)
  const wanted = new Set(indices)
  for (const c of containers) {
    const replica = replicaOf(c)
    if (!wanted.has(replica)) {
      removals.push({ kind: 'remove', container: c, reason: 'extra replica' })
    } else {
      byReplica.set(replica, [...(byReplica.get(replica) ?? []), c])
    }
  }
  const current = (c: ContainerState): boolean => c.hash === target.hash && (target.imageId === undefined || c.imageId === target.imageId)
  for (const replica of indices) {
    const candidates = [...(byReplica.get(replica) ?? [])]
      .sort((a, b) => Number(current(b)) - Number(current(a)) || Number(b.running) - Number(a.running))
    const [keep, ...duplicates] = candidates
    for (const container of duplicates) removals.push({ kind: 'remove', container, reason: 'duplicate' })
    if (keep === undefined) replicas.push({ kind: 'create', replica })
    else if (target.repair === true) {
      if (keep.state === 'paused') replicas.push({ kind: 'unpause', container: keep })
      else if (!keep.running && keep.state !== 'restarting') replicas.push({ kind: 'start', container: keep })
    } else if (target.force === true) replicas.push({ kind: 'recreate', replica, container: keep, reason: 'redeploy' })
    else if (keep.hash !== target.hash) replicas.push({ kind: 'recreate', replica, container: keep, reason: 'changed' })
    else if (!current(keep)) replicas.push({ kind: 'recreate', replica, container: keep, reason: 'new image' })
    else if (!keep.running) replicas.push({ kind: 'start', container: keep })
  }
  return [...removals, ...replicas]
}

function servicePlan (desired: Desired, containers: readonly ContainerState[], repair: boolean): ServicePlan {
  const { spec, hash, imageId, force, canary, replicas: indices } = desired
  const replicas = containers.filter(c => c.canary !== true)
  const canaries = containers.filter(c => c.canary === true)
  return {
    name: spec.name,
    project: spec.project,
    desired,
    actions: groupActions({ hash, imageId, force, repair, count: spec.replicas, ...(indices !== undefined && { indices }) }, replicas, c => c.replica),
    canaryActions: groupActions({ hash: canary?.hash ?? '', imageId: canary?.imageId, force, repair, count: canary === undefined ? 0 : 1 }, canaries, () => 1)
  }
}

/**
 * Plan a deploy of `desired` over `actual` (every container of this server). Containers of services
 * outside `desired` are orphans and removed only when `removeOrphans` (a deploy of everything
 * declared, a repair). A `repair` creates missing replicas, starts stopped ones (not those the engine
 * is restarting), unpauses paused ones and removes extra ones and duplicates, but never recreates a
 * container of another spec (unless it cannot be started: see the executor).
 */
export function planDeploy (desired: readonly Desired[], actual: readonly ContainerState[], options: { removeOrphans: boolean, repair?: boolean }): Plan {
  const byService = new Map<string, ContainerState[]>()
  for (const c of actual) byService.set(c.service, [...(byService.get(c.service) ?? []), c])
  const declared = new Set(desired.map(d => d.spec.name))
  const orphans: ServicePlan[] = []
  if (options.removeOrphans) {
    for (const [service, containers] of byService) {
      if (declared.has(service)) continue
      orphans.push({ name: service, project: containers[0].project, actions: containers.map(container => ({ kind: 'remove', container, reason: 'orphan' })), canaryActions: [] })
    }
  }
  const layers = bootLayers(desired.map(d => ({ name: d.spec.name, depends_on: d.spec.depends_on, desired: d })))
    .map(layer => layer.map(({ desired: d }) => servicePlan(d, byService.get(d.spec.name) ?? [], options.repair === true)))
  return { orphans, layers }
}
