// Carrying out a plan: orphans first, then layer after layer in boot order; within a layer services
// run side by side with container operations under one parallelism bound. A failing service becomes
// an error entry and holds back only the services that depend on it. Dependencies with a health path
// are waited for before their dependants start, whoever started them. A stopped container that will
// not start is replaced. Replacement replicas (max_parallel at a time) must pass their checks before
// the next are replaced; when one does not, the replicas the rollout replaced are rolled back to the
// previous spec (when the plan gives one).
import type { Limiter } from './limit.js'
import type { Action, Plan, ServicePlan } from './plan.js'
import { probe } from './probe.js'
import { EngineUnavailable, type ContainerState, type ContainerEngine } from './container-engine.js'
import type { ServiceSpec } from './spec.js'
import type { TrafficHooks } from './traffic.js'

export interface ExecutorDeps {
  /** The runtime of that name (a spec's `runtime`, a container's `runtime`). */
  runtime(name: string): ContainerEngine
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

/** Starts of a stopped container before it is replaced instead (a stale engine task, a lost mount: it will not start). */
const START_TRIES = 2

export interface Outcome {
  /** Declared services whose containers were created, recreated, started or removed. */
  changed: Set<string>
  /** Error message per failed service. */
  failures: Map<string, string>
  /** Failed services whose replaced replicas run their previous spec again. */
  rolledBack: Set<string>
  /** Failed services whose rollout stopped at a replacement that did not pass its checks and was left as it is: that container. */
  unready: Map<string, string>
}

/** A rollout that failed and whose replaced replicas were rolled back to the previous spec. */
class RolledBack extends Error {}

/** A replacement that was created but did not pass its checks: the rollout stops at it. */
class NotReady extends Error {
  readonly container: string

  constructor (message: string, container: string) {
    super(message)
    this.container = container
  }
}

function ofKind<K extends Action['kind']> (actions: readonly Action[], kind: K): Array<Extract<Action, { kind: K }>> {
  return actions.filter((a): a is Extract<Action, { kind: K }> => a.kind === kind)
}

/**
 * Wait until each container of `ids` passes its service's checks: its `health` path answers 2xx/3xx
 * and, with `engine`, the engine's `healthcheck` says healthy. Within one deadline for all of them.
 */
async function waitHealthy (runtime: ContainerEngine, spec: ServiceSpec, ids: readonly string[], deps: ExecutorDeps, engine: boolean): Promise<void> {
  const { health, port } = spec
  const http = health !== undefined && port !== undefined
  const checked = engine && spec.healthcheck !== undefined
  if (!http && !checked) return
  const deadline = Date.now() + deps.healthTimeoutMs
  const passes = async (id: string): Promise<boolean> => {
    if (http) {
      const address = await runtime.address(id, port)
      if (address === undefined || !await probe(address, health, Math.min(2000, deps.healthTimeoutMs))) return false
    }
    return !checked || await runtime.health(id) === 'healthy'
  }
  for (const id of ids) {
    while (!await passes(id)) {
      if (Date.now() > deadline) throw new Error(`${http ? `health check ${health}` : 'the engine\'s healthcheck'} did not pass within ${deps.healthTimeoutMs / 1000} s`)
      await new Promise(resolve => setTimeout(resolve, deps.healthIntervalMs))
    }
  }
}

/** Remove `containers` side by side, each drained first. */
async function removeAll (containers: readonly ContainerState[], deps: ExecutorDeps): Promise<void> {
  await Promise.all(containers.map(async container => {
    await deps.traffic.drain(container)
    await deps.limit(async () => { await deps.runtime(container.runtime).remove(container.id) })
  }))
}

/** The removals among `actions`. */
async function removeContainers (actions: readonly Action[], deps: ExecutorDeps): Promise<void> {
  await removeAll(ofKind(actions, 'remove').map(a => a.container), deps)
}

/** Start `container`, trying START_TRIES times; whether it started. */
async function startsWithin (runtime: ContainerEngine, container: ContainerState, deps: ExecutorDeps): Promise<boolean> {
  for (let tries = 1; tries <= START_TRIES; tries++) {
    try {
      await deps.limit(async () => { await runtime.start(container.id) })
      return true
    } catch (err) {
      if (err instanceof EngineUnavailable) throw err
    }
  }
  return false
}

/** A spec to run, and where a rollout that fails goes back to. */
interface Rollout {
  spec: ServiceSpec
  hash: string
  canary: boolean
  /** The previous spec of the numbered replicas; undefined: a failed rollout leaves them as they are. */
  previous?: { spec: ServiceSpec, hash: string }
}

/** Create a replacement `replica` of `spec` and wait until it passes its checks (health path, engine healthcheck, the router's readiness). */
async function replacement (spec: ServiceSpec, hash: string, replica: number, env: Record<string, string>, canary: boolean, deps: ExecutorDeps): Promise<string> {
  const runtime = deps.runtime(spec.runtime)
  const id = await deps.limit(async () => await runtime.create({ spec, replica, hash, env, canary }))
  try {
    await waitHealthy(runtime, spec, [id], deps, true)
    await deps.traffic.ready(spec, id)
  } catch (err) {
    throw new NotReady(err instanceof Error ? err.message : String(err), id)
  }
  return id
}

/**
 * A rollout failed at the last of `replicas`: replace every replica it had replaced (the failing one
 * included) by one of the previous spec, one at a time, each checked. Throws RolledBack with the
 * rollout's error, or an error saying the rollback failed too.
 */
async function rollBack (replicas: readonly number[], previous: NonNullable<Rollout['previous']>, failure: unknown, deps: ExecutorDeps): Promise<never> {
  const reason = failure instanceof Error ? failure.message : String(failure)
  const runtime = deps.runtime(previous.spec.runtime)
  try {
    await removeAll((await runtime.list()).filter(c => c.service === previous.spec.name && c.canary !== true && replicas.includes(c.replica)), deps)
    const env = deps.resolveEnv(previous.spec)
    for (const replica of replicas) await replacement(previous.spec, previous.hash, replica, env, false, deps)
  } catch (err) {
    throw new Error(`${reason}; rolling back to ${previous.spec.image} failed too: ${err instanceof Error ? err.message : String(err)}`)
  }
  throw new RolledBack(`${reason}; rolled back to ${previous.spec.image}`)
}

/**
 * One group's actions (the numbered replicas of a rollout, or its canary): removals and new
 * containers side by side, replacements `max_parallel` at a time, one by default (rolling: the old
 * containers drained and removed, their successors created and checked before the next ones),
 * rolled back when one fails and the rollout has a previous spec. Returns the containers touched.
 */
async function runGroup (actions: readonly Action[], rollout: Rollout, deps: ExecutorDeps): Promise<string[]> {
  const { spec, hash, canary } = rollout
  await removeContainers(actions, deps)
  const runtime = deps.runtime(spec.runtime)
  const env = actions.some(a => a.kind === 'create' || a.kind === 'recreate') ? deps.resolveEnv(spec) : {}
  const serving = async (id: string): Promise<string> => {
    await deps.traffic.ready(spec, id)
    return id
  }
  const create = async (replica: number): Promise<string> => await serving(await deps.limit(async () => await runtime.create({ spec, replica, hash, env, canary })))
  const touched: string[] = []
  const replaced: number[] = []
  const recreates = ofKind(actions, 'recreate')
  const batch = spec.max_parallel ?? 1
  try {
    for (let start = 0; start < recreates.length; start += batch) {
      const group = recreates.slice(start, start + batch)
      replaced.push(...group.map(a => a.replica))
      await removeAll(group.map(a => a.container), deps)
      // Every replacement of the batch settles before a failure among them is acted on.
      const settled = await Promise.allSettled(group.map(async a => await replacement(spec, hash, a.replica, env, canary, deps)))
      for (const outcome of settled) {
        if (outcome.status === 'rejected') throw outcome.reason
        touched.push(outcome.value)
      }
    }
  } catch (err) {
    if (rollout.previous === undefined) throw err
    await rollBack(replaced, rollout.previous, err, deps)
  }
  touched.push(...await Promise.all(ofKind(actions, 'create').map(async a => await create(a.replica))))
  touched.push(...await Promise.all(ofKind(actions, 'start').map(async a => {
    if (await startsWithin(runtime, a.container, deps)) return await serving(a.container.id)
    // It will not start: a new container of the spec in its place.
    await removeAll([a.container], deps)
    return await replacement(spec, hash, a.container.replica, deps.resolveEnv(spec), canary, deps)
  })))
  touched.push(...await Promise.all(ofKind(actions, 'unpause').map(async a => {
    await deps.limit(async () => { await runtime.unpause(a.container.id) })
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
  const touched = await runGroup(plan.actions, { spec: desired.spec, hash: desired.hash, canary: false, previous: desired.rollback }, deps)
  const canary = desired.canary
  if (plan.canaryActions.length > 0) await runGroup(plan.canaryActions, { spec: canary?.spec ?? desired.spec, hash: canary?.hash ?? '', canary: true }, deps)
  if (waitForHealth) await waitHealthy(deps.runtime(desired.spec.runtime), desired.spec, touched, deps, false)
}

/**
 * Before a service's containers start: the running containers of what it depends on (in `specs`)
 * pass their health checks, whoever started them (a deploy just now, or the engine itself after
 * it restarted).
 */
async function dependenciesReady (spec: ServiceSpec, specs: ReadonlyMap<string, ServiceSpec>, deps: ExecutorDeps): Promise<void> {
  for (const name of spec.depends_on) {
    const dependency = specs.get(name)
    if (dependency?.health === undefined) continue
    const runtime = deps.runtime(dependency.runtime)
    const running = (await runtime.list()).filter(c => c.service === name && c.running).map(c => c.id)
    await waitHealthy(runtime, dependency, running, deps, false).catch((err: unknown) => {
      throw new Error(`not started: "${name}", which it depends on, is not ready: ${err instanceof Error ? err.message : String(err)}`)
    })
  }
}

/** Run `plan`; services already in `failures` (failed pulls) are skipped, and new failures are added. */
export async function executePlan (plan: Plan, deps: ExecutorDeps, failures: Map<string, string>): Promise<Outcome> {
  const changed = new Set<string>()
  const rolledBack = new Set<string>()
  const unready = new Map<string, string>()
  const run = async (service: ServicePlan, waitForHealth: boolean): Promise<void> => {
    if ((service.actions.length === 0 && service.canaryActions.length === 0) || failures.has(service.name)) return
    const blocker = service.desired?.spec.depends_on.find(d => failures.has(d))
    if (blocker !== undefined) {
      failures.set(service.name, `not started: it depends on "${blocker}", which failed`)
      return
    }
    if (service.desired !== undefined) changed.add(service.name)
    try {
      if (service.desired !== undefined) await dependenciesReady(service.desired.spec, specs, deps)
      await runService(service, deps, waitForHealth)
    } catch (err) {
      failures.set(service.name, err instanceof Error ? err.message : String(err))
      if (err instanceof RolledBack) rolledBack.add(service.name)
      if (err instanceof NotReady) unready.set(service.name, err.container)
    }
  }
  const specs = new Map(plan.layers.flat().flatMap(s => s.desired === undefined ? [] : [[s.name, s.desired.spec] as const]))
  await Promise.all(plan.orphans.map(async s => { await run(s, false) }))
  const dependedOn = new Set(plan.layers.flat().flatMap(s => s.desired?.spec.depends_on ?? []))
  for (const layer of plan.layers) {
    await Promise.all(layer.map(async s => { await run(s, dependedOn.has(s.name)) }))
  }
  return { changed, failures, rolledBack, unready }
}
