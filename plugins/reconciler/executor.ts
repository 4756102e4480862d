// Carrying out a plan: orphans first, then layer after layer in boot order; within a layer services
// run side by side with container operations under one parallelism bound. A failing service becomes
// an error entry and holds back only the services that depend on it. Dependencies with a health path
// are waited for before their dependants start.
import type { Limiter } from './limit.js'
import type { Action, Plan, ServicePlan } from './plan.js'
import { probe } from './probe.js'
import type { Runtime } from './runtime.js'
import type { ServiceSpec } from './spec.js'
import type { TrafficHooks } from './traffic.js'

export interface ExecutorDeps {
  /** The runtime of that name (a spec's `runtime`, a container's `runtime`). */
  runtime(name: string): Runtime
  limit: Limiter
  /** The spec's environment with secrets resolved (throws naming the service and the secret). */
  resolveEnv(spec: ServiceSpec): Record<string, string>
  /** How long a dependency may take to answer its health path. */
  healthTimeoutMs: number
  /** Time between health probes while waiting. */
  healthIntervalMs: number
  /** Drain a container before it goes; wait for a new one to serve before going on. */
  traffic: TrafficHooks
}

export interface Outcome {
  /** Declared services whose containers were created, recreated, started or removed. */
  changed: Set<string>
  /** Error message per failed service. */
  failures: Map<string, string>
}

function ofKind<K extends Action['kind']> (actions: readonly Action[], kind: K): Array<Extract<Action, { kind: K }>> {
  return actions.filter((a): a is Extract<Action, { kind: K }> => a.kind === kind)
}

async function waitHealthy (runtime: Runtime, spec: ServiceSpec, ids: readonly string[], deps: ExecutorDeps): Promise<void> {
  const { health, port } = spec
  if (health === undefined || port === undefined) return
  const deadline = Date.now() + deps.healthTimeoutMs
  for (const id of ids) {
    for (;;) {
      const address = await runtime.address(id, port)
      if (address !== undefined && await probe(address, health, Math.min(2000, deps.healthTimeoutMs))) break
      if (Date.now() > deadline) throw new Error(`health check ${health} did not pass within ${deps.healthTimeoutMs / 1000} s`)
      await new Promise(resolve => setTimeout(resolve, deps.healthIntervalMs))
    }
  }
}

/** The removals among `actions`, side by side, each container drained first. */
async function removeContainers (actions: readonly Action[], deps: ExecutorDeps): Promise<void> {
  await Promise.all(ofKind(actions, 'remove').map(async a => {
    await deps.traffic.drain(a.container)
    await deps.limit(async () => { await deps.runtime(a.container.runtime).remove(a.container.id) })
  }))
}

/**
 * One group's actions (the numbered replicas of `spec`, or its canary): removals and new containers
 * side by side, replacements one at a time (rolling): each old container is drained and removed, its
 * successor created, and the next one waits until the successor serves. Returns the containers touched.
 */
async function runGroup (actions: readonly Action[], spec: ServiceSpec, hash: string, canary: boolean, deps: ExecutorDeps): Promise<string[]> {
  await removeContainers(actions, deps)
  const runtime = deps.runtime(spec.runtime)
  const env = actions.some(a => a.kind === 'create' || a.kind === 'recreate') ? deps.resolveEnv(spec) : {}
  const serving = async (id: string): Promise<string> => {
    await deps.traffic.ready(spec, id)
    return id
  }
  const create = async (replica: number): Promise<string> => await serving(await deps.limit(async () => await runtime.create({ spec, replica, hash, env, canary })))
  const touched: string[] = []
  for (const a of ofKind(actions, 'recreate')) {
    await deps.traffic.drain(a.container)
    await deps.limit(async () => { await runtime.remove(a.container.id) })
    touched.push(await create(a.replica))
  }
  touched.push(...await Promise.all(ofKind(actions, 'create').map(async a => await create(a.replica))))
  touched.push(...await Promise.all(ofKind(actions, 'start').map(async a => {
    await deps.limit(async () => { await runtime.start(a.container.id) })
    return await serving(a.container.id)
  })))
  return touched
}

/**
 * One service: its numbered replicas first (so a service of two or more replicas always has one
 * serving), then its canary (a promotion ends the canary only once the replicas run its spec).
 */
async function runService (plan: ServicePlan, deps: ExecutorDeps, waitForHealth: boolean): Promise<void> {
  const { desired } = plan
  if (desired === undefined) {
    await removeContainers(plan.actions, deps)
    return
  }
  const touched = await runGroup(plan.actions, desired.spec, desired.hash, false, deps)
  const canary = desired.canary
  if (plan.canaryActions.length > 0) await runGroup(plan.canaryActions, canary?.spec ?? desired.spec, canary?.hash ?? '', true, deps)
  if (waitForHealth) await waitHealthy(deps.runtime(desired.spec.runtime), desired.spec, touched, deps)
}

/** Run `plan`; services already in `failures` (failed pulls) are skipped, and new failures are added. */
export async function executePlan (plan: Plan, deps: ExecutorDeps, failures: Map<string, string>): Promise<Outcome> {
  const changed = new Set<string>()
  const run = async (service: ServicePlan, waitForHealth: boolean): Promise<void> => {
    if ((service.actions.length === 0 && service.canaryActions.length === 0) || failures.has(service.name)) return
    const blocker = service.desired?.spec.depends_on.find(d => failures.has(d))
    if (blocker !== undefined) {
      failures.set(service.name, `not started: it depends on "${blocker}", which failed`)
      return
    }
    if (service.desired !== undefined) changed.add(service.name)
    try {
      await runService(service, deps, waitForHealth)
    } catch (err) {
      failures.set(service.name, err instanceof Error ? err.message : String(err))
    }
  }
  await Promise.all(plan.orphans.map(async s => { await run(s, false) }))
  const dependedOn = new Set(plan.layers.flat().flatMap(s => s.desired?.spec.depends_on ?? []))
  for (const layer of plan.layers) {
    await Promise.all(layer.map(async s => { await run(s, dependedOn.has(s.name)) }))
  }
  return { changed, failures }
}
