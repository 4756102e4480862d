// The planner: desired services + the containers that exist → the actions that make them agree,
// grouped into boot layers (depends_on). A pure function: no engine, no clock, no randomness.
import type { ContainerState } from './runtime.js'
import { bootLayers } from './service-set.js'
import type { ServiceSpec } from './spec.js'

export interface Desired {
  spec: ServiceSpec
  hash: string
  /** Id of the local image the spec's reference names now; undefined when it is not present. */
  imageId?: string
  /** Recreate every replica even when nothing changed (redeploy). */
  force?: boolean
}

export type Action =
  | { kind: 'create', replica: number }
  | { kind: 'recreate', replica: number, container: ContainerState, reason: 'changed' | 'new image' | 'redeploy' }
  | { kind: 'start', container: ContainerState }
  | { kind: 'remove', container: ContainerState, reason: 'extra replica' | 'duplicate' | 'orphan' }

export interface ServicePlan {
  name: string
  project: string
  /** Undefined for an orphan (a service no longer declared). */
  desired?: Desired
  /** Removals first, then replicas in order; empty when the service is as desired. */
  actions: Action[]
}

export interface Plan {
  /** Services whose containers exist but which are not declared any more (full deploys only). */
  orphans: ServicePlan[]
  /** Declared services in boot order: a layer after everything its services depend on. */
  layers: ServicePlan[][]
}

function serviceActions (desired: Desired, containers: readonly ContainerState[]): Action[] {
  const removals: Action[] = []
  const replicas: Action[] = []
  const byReplica = new Map<number, ContainerState[]>()
  for (const c of containers) {
    if (!Number.isInteger(c.replica) || c.replica < 1 || c.replica > desired.spec.replicas) {
      removals.push({ kind: 'remove', container: c, reason: 'extra replica' })
    } else {
      byReplica.set(c.replica, [...(byReplica.get(c.replica) ?? []), c])
    }
  }
  const current = (c: ContainerState): boolean => c.hash === desired.hash && (desired.imageId === undefined || c.imageId === desired.imageId)
  for (let replica = 1; replica <= desired.spec.replicas; replica++) {
    const candidates = [...(byReplica.get(replica) ?? [])]
      .sort((a, b) => Number(current(b)) - Number(current(a)) || Number(b.running) - Number(a.running))
    const [keep, ...duplicates] = candidates
    for (const container of duplicates) removals.push({ kind: 'remove', container, reason: 'duplicate' })
    if (keep === undefined) replicas.push({ kind: 'create', replica })
    else if (desired.force === true) replicas.push({ kind: 'recreate', replica, container: keep, reason: 'redeploy' })
    else if (keep.hash !== desired.hash) replicas.push({ kind: 'recreate', replica, container: keep, reason: 'changed' })
    else if (!current(keep)) replicas.push({ kind: 'recreate', replica, container: keep, reason: 'new image' })
    else if (!keep.running) replicas.push({ kind: 'start', container: keep })
  }
  return [...removals, ...replicas]
}

/**
 * Plan a deploy of `desired` over `actual` (every container of this server). Containers of services
 * outside `desired` are orphans and removed only when `removeOrphans` (a deploy of everything declared).
 */
export function planDeploy (desired: readonly Desired[], actual: readonly ContainerState[], options: { removeOrphans: boolean }): Plan {
  const byService = new Map<string, ContainerState[]>()
  for (const c of actual) byService.set(c.service, [...(byService.get(c.service) ?? []), c])
  const declared = new Set(desired.map(d => d.spec.name))
  const orphans: ServicePlan[] = []
  if (options.removeOrphans) {
    for (const [service, containers] of byService) {
      if (declared.has(service)) continue
      orphans.push({ name: service, project: containers[0].project, actions: containers.map(container => ({ kind: 'remove', container, reason: 'orphan' })) })
    }
  }
  const layers = bootLayers(desired.map(d => ({ name: d.spec.name, depends_on: d.spec.depends_on, desired: d })))
    .map(layer => layer.map(({ desired: d }) => ({
      name: d.spec.name, project: d.spec.project, desired: d, actions: serviceActions(d, byService.get(d.spec.name) ?? [])
    })))
  return { orphans, layers }
}
