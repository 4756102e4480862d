// The reconciler's operations: deploy (from the service files or a request), canary, promote, rollback,
// redeploy, scale, remove, stop, restart, repair, status and logs. Changes run one at a time; each
// deploy lists containers once, pulls by the pull rules, plans in memory, executes, and records the
// desired specs, the canaries and the history; a repair brings this node's containers back to the
// desired state without deploying anything.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { Readable, type PassThrough } from 'node:stream'
import type { Logger } from 'pino'
import type { Counter, Histogram } from 'prom-client'
import { BadRequest, Conflict, Forbidden, NotFound, Unavailable, type OperatorAlert } from '../../kernel/index.js'
import type { SecretService } from '../secrets/index.js'
import { isInside, realPath, type Admission } from './admission.js'
import { canaryView, checkCanary, previousVersion, type CanaryRequest, type CanaryView } from './canary.js'
import { discoverServices, parseRequestServices, SpecError } from './discovery.js'
import { executePlan, type ExecutorDeps } from './executor.js'
import { specHash, type ContainerSettings } from './hash.js'
import { imageTag, localImageName, registryHost } from './image-ref.js'
import { limiter, type Limiter } from './limit.js'
import { mergeLogs } from './log-lines.js'
import { planDeploy, type Action, type Desired, type DesiredCanary } from './plan.js'
import { EngineUnavailable, type ContainerState, type ContainerEngine, type ExecSession } from './container-engine.js'
import { LEADER_SOURCE, originOf, setProblems, type Declared } from './service-set.js'
import type { CanaryState, DeployError, HistoryEntry, PendingDeploy, ReconcilerState, Saved } from './state.js'
import type { Traffic } from './traffic.js'
import type { RemoteOutcome, Schedule, Scheduler } from './placement.js'
import { buildRepository, claimedNames, type ServiceSpec } from './spec.js'
import { buildHash, contextFiles } from './build-context.js'
import type { GitSources } from './git-source.js'
import { serviceStatus, type RouteReporter, type ServiceStatus } from './status.js'
import { measureContainers } from './container-stats.js'
import { RECONCILER_CODES } from './errors.js'
import { TOKENS_CODES } from '../tokens/index.js'

export interface ReconcilerSettings extends ContainerSettings {
  cwd: string
  services_dir: string
  parallelism: number
  health_timeout_secs: number
  node_name: string
  /** Images kept per built service. */
  builds_kept: number
  /** Registry built images are pushed to (empty: none). */
  build_registry: string
}

export interface DeployResult {
  /** Services now running as declared (unchanged ones included). */
  deployed: string[]
  /** One entry per service that could not be deployed. */
  errors: DeployError[]
  /** Services whose containers were created, recreated, started or removed. */
  changed: string[]
  /** Services no longer declared whose containers were removed. */
  removed: string[]
  /** A deploy of the service files: deployed services no file declares that it left as they are (they came from deploy requests; pruning removes them). Absent when none. */
  kept?: string[]
}

/** Which deployed services a deploy removes when it does not declare them: none, those that came from service files, or all. */
export type Prune = 'none' | 'files' | 'all'

/** How images are pulled: by the rules (latest always, other tags when absent), always, or only when absent. */
export type PullPolicy = 'rules' | 'always' | 'missing'

interface DeployOptions {
  trigger: string
  by?: string
  /** Why, when no operator asked (an auto-promotion's judgement): kept in the history entry. */
  reason?: string
  /** Which services not declared here are removed (with their containers; containers of no deployed service go with any but 'none'). */
  prune: Prune
  pull: PullPolicy
  /** Recreate every replica even when nothing changed. */
  force: boolean
  /** Canaries this deploy starts (a state) or ends (null); services not named keep theirs. */
  canaries?: ReadonlyMap<string, CanaryState | null>
  /** An agent's deploy, as its leader sent it: the replica indices of each service, and services recreated even if unchanged. */
  assigned?: { replicas: ReadonlyMap<string, readonly number[]>, force: ReadonlySet<string> }
  /** Each service's environment with secrets resolved (the leader resolved them); else this node's secret store resolves it. */
  env?: ReadonlyMap<string, Record<string, string>>
  /** The commit to build, by service (of those built from git); else the newest commit of each one's `ref`. */
  commits?: ReadonlyMap<string, string>
}

/** A service as an agent runs it: its spec, the replica indices placed on that agent, the environment the leader resolved. */
export interface AssignedService {
  spec: ServiceSpec
  replicas: readonly number[]
  env: Record<string, string>
}

/** What a repair pass did. */
export interface RepairOutcome {
  /** Services whose containers it created, started or removed (containers of no deployed service count by their service label). */
  repaired: string[]
  /** Why repairing a service failed, by service. */
  failures: Map<string, string>
}

/** How a rollback went: from the canary or version that ran, to the spec that runs now. */
export interface RollbackResult extends DeployResult {
  rollback: { from: { image: string, hash: string, canary: boolean }, to: { image: string, hash: string } }
}

export interface ReconcilerDeps {
  runtimes: ReadonlyMap<string, ContainerEngine>
  state: ReconcilerState
  secrets: SecretService
  settings: ReconcilerSettings
  log: Logger
  deploySeconds: Histogram<'trigger'>
  /** Rollouts rolled back after a replacement failed its checks, by service. */
  rollbacks: Counter<'service'>
  /** Tell operators something they should hear about (a failed deploy, a rollback). */
  alert: (alert: OperatorAlert) => void
  /** Called with the services whose containers changed (liveness, events). */
  changed: (services: string[]) => void
  /** Routers that drain containers before they go and say when new ones serve. */
  traffic: Traffic
  /** Where builds from git repositories fetch their sources. */
  git: GitSources
  /** What a spec may take of the host (mounts, ports, build sources), checked before its containers are created. */
  admission: Admission
}

/** Deploys that no operator asked for just now (an offline node's replicas placed again, an agent's orders): a refused spec fails its service instead of the request. */
const UNATTENDED_TRIGGERS = new Set(['reschedule', 'leader'])

/** What converging a deploy did on this node. */
interface Converged {
  /** Whether the engine could be listed (else every service failed and nothing changed). */
  listed: boolean
  changed: string[]
  orphans: Array<{ name: string, project: string }>
  /** Failed services whose replaced replicas were rolled back to their previous spec. */
  rolledBack: string[]
  /** Failed services whose rollout stopped at a replacement left as it is, with that container. */
  unready: ReadonlyMap<string, string>
}

/** Whether a token limited to `projects` (undefined: every project) reaches `project`. */
export function reaches (projects: readonly string[] | undefined, project: string): boolean {
  return projects === undefined || projects.includes(project)
}

function mergeRemote (into: RemoteOutcome, from: RemoteOutcome): void {
  into.errors.push(...from.errors)
  for (const name of from.changed) if (!into.changed.includes(name)) into.changed.push(name)
}

export class Reconciler {
  readonly #deps: ReconcilerDeps
  readonly #limit: Limiter
  #queue: Promise<unknown> = Promise.resolve()
  /** Services a deploy is changing now (their pending record is that deploy's). */
  readonly #deploying = new Set<string>()
  /** In a cluster: the replica indices of each service last placed on this node (and on an agent the environment its leader resolved), for repairs. */
  readonly #placed = new Map<string, { replicas: readonly number[], env?: Record<string, string> }>()

  constructor (deps: ReconcilerDeps) {
    this.#deps = deps
    this.#limit = limiter(deps.settings.parallelism)
  }

  /** Run changes one after the other. */
  async #exclusive<T> (fn: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(fn, fn)
    this.#queue = run.catch(() => undefined)
    return await run
  }

  #runtime (name: string): ContainerEngine {
    const runtime = this.#deps.runtimes.get(name)
    if (runtime === undefined) throw new Error(`unknown runtime "${name}"`)
    return runtime
  }

  /**
   * Places replicas on other nodes as well: the cluster plugin sets it on a leader. Without one every
   * replica runs on this node.
   */
  scheduler: Scheduler | undefined

  /** Set on an agent: the leader's address. Changes through this node's own API are refused; they come from the leader. */
  leader: string | undefined

  /** Answers GET /cluster/info in place of this node's own record (the cluster plugin, on a leader or an agent). */
  clusterInfo: (() => Promise<unknown>) | undefined

  /** Every container: this node's (one list call per runtime; throws EngineUnavailable), and those the other nodes of a cluster reported. */
  async containers (): Promise<ContainerState[]> {
    const local = await this.localContainers()
    return this.scheduler === undefined ? local : [...local, ...this.scheduler.remoteContainers()]
  }

  /** This node's containers, one list call per runtime; throws EngineUnavailable. */
  async localContainers (): Promise<ContainerState[]> {
    return (await Promise.all([...this.#deps.runtimes.values()].map(async r => await r.list()))).flat()
  }


  #known (name: string): NonNullable<ReturnType<ReconcilerState['service']>> {
    const stored = this.#deps.state.service(name)
    if (stored === undefined) throw new NotFound(`no service named "${name}" is deployed`, { code: RECONCILER_CODES.NO_SUCH_SERVICE })
    return stored
  }

  /**
   * Deploy what the service files declare: everything, or the one service named. A deploy of
   * everything removes the services that came from files and are declared no more (with `prune`,
   * also those that came from deploy requests).
   */
  async deployFiles (options: { service?: string, by?: string, reload?: boolean, prune?: boolean, projects?: readonly string[] }): Promise<DeployResult> {
    return await this.#exclusive(async () => {
      const { cwd, services_dir: servicesDir } = this.#deps.settings
      const declared = discoverServices({ cwd, servicesDir, runtimes: [...this.#deps.runtimes.keys()] })
      const reload = options.reload === true
      if (options.service === undefined) {
        if (options.projects !== undefined) throw new Forbidden('a token limited to projects deploys one service at a time: name it with ?service=', { code: TOKENS_CODES.PROJECT_SCOPE })
        return await this.#deploy(declared, { trigger: reload ? 'reload' : 'deploy', by: options.by, prune: options.prune === true ? 'all' : 'files', pull: reload ? 'always' : 'rules', force: reload })
      }
      const one = declared.find(d => d.spec.name === options.service && reaches(options.projects, d.spec.project))
      if (one === undefined) throw new NotFound(`no service named "${options.service}" in ${servicesDir}/*/service.toml`, { code: RECONCILER_CODES.NO_SUCH_SERVICE })
      this.#withinScope([one], options.projects)
      return await this.#deploy([one], { trigger: 'deploy', by: options.by, prune: 'none', pull: 'rules', force: false })
    })
  }

  /** Deploy the services of a request body (added or replaced; other services stay as they are). */
  async deployRequest (body: unknown, by?: string, projects?: readonly string[]): Promise<DeployResult> {
    return await this.#exclusive(async () => {
      const declared = parseRequestServices(body, { cwd: this.#deps.settings.cwd, runtimes: [...this.#deps.runtimes.keys()] })
      this.#withinScope(declared, projects)
      const names = new Set(declared.map(d => d.spec.name))
      const others: Declared[] = this.#deps.state.services()
        .filter(s => !names.has(s.spec.name))
        .map(s => ({ spec: s.spec, source: `deployed service (${s.source})` }))
      // Problems among the services already deployed are not this request's, except a cycle it closes.
      const problems = setProblems([...others, ...declared]).filter(p => p.startsWith('request body') || p.includes('depends_on cycle'))
      if (problems.length > 0) throw new SpecError(problems)
      return await this.#deploy(declared, { trigger: 'deploy', by, prune: 'none', pull: 'rules', force: false })
    })
  }

  /**
   * Force-pull the image and recreate every replica of a deployed service, even when unchanged. A
   * service built from a git repository is built anew first, from `commit` (a webhook's push) or the
   * newest commit of its `ref`.
   */
  async redeploy (name: string, by?: string, commit?: string): Promise<DeployResult> {
    return await this.#exclusive(async () => {
      const stored = this.#known(name)
      const { spec } = stored
      // The build's repository without the tag of the build that runs: built anew.
      const fresh = spec.build?.git === undefined ? spec : { ...spec, image: spec.image.replace(/:[^:/]*$/, '') }
      const commits = commit === undefined ? undefined : new Map([[name, commit]])
      return await this.#deploy([{ spec: fresh, source: stored.source }], { trigger: 'redeploy', by, prune: 'none', pull: 'always', force: true, ...(commits !== undefined && { commits }) })
    })
  }

  async scale (name: string, replicas: unknown, by?: string): Promise<DeployResult & { replicas: number }> {
    if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0) {
      throw new BadRequest(`replicas must be an integer ≥ 0, got ${JSON.stringify(replicas)}`)
    }
    return await this.#exclusive(async () => {
      const stored = this.#known(name)
      const result = await this.#deploy([{ spec: { ...stored.spec, replicas }, source: stored.source }], { trigger: 'scale', by, prune: 'none', pull: 'missing', force: false })
      return { ...result, replicas }
    })
  }

  /**
   * Start a canary: one replica of a new spec of a deployed service beside its replicas, which keep
   * running; the proxy sends it `weight` percent of the requests. The spec comes from the service's
   * file or from the one entry of a request body. The spec of the running canary again changes its weight.
   */
  async deployCanary (source: { service: string } | { body: unknown }, request: CanaryRequest, by?: string, projects?: readonly string[]): Promise<DeployResult & { canary: CanaryView }> {
    const { weight } = request
    const judgeAt = request.autoPromoteSecs === undefined ? undefined : new Date(Date.now() + request.autoPromoteSecs * 1000).toISOString()
    return await this.#exclusive(async () => {
      const failures = new Map<string, string>()
      const declared = this.#canaryCandidate(source, projects)
      this.#withinScope([declared], projects)
      // A service built from sources: the canary runs the build of the sources as they are now.
      const [candidate] = await this.#built([declared], failures)
      const { name } = candidate.spec
      const stable = this.#known(name)
      const hash = specHash(candidate.spec, this.#deps.settings)
      const failed = failures.get(name)
      if (failed !== undefined) {
        return { deployed: [], errors: [{ service: name, project: candidate.spec.project, error: failed }], changed: [], removed: [], canary: canaryView({ spec: candidate.spec, source: candidate.source, hash, weight, started_at: new Date().toISOString() }) }
      }
      const running = this.#deps.state.canary(name)
      if (running?.hash === hash) return await this.#reweighCanary({ ...running, weight, ...(judgeAt !== undefined && { judge_at: judgeAt }) })
      checkCanary(stable, running, { spec: candidate.spec, hash, stableHash: specHash(stable.spec, this.#deps.settings) })
      const canary: CanaryState = { spec: candidate.spec, source: candidate.source, hash, weight, started_at: new Date().toISOString(), ...(by !== undefined && { by }), ...(judgeAt !== undefined && { judge_at: judgeAt }) }
      const result = await this.#deploy([{ spec: stable.spec, source: stable.source }], { trigger: 'canary', by, prune: 'none', pull: 'rules', force: false, canaries: new Map([[name, canary]]) })
      // A canary that did not start leaves nothing behind (the next deploy removes what an unreachable engine kept).
      if (result.errors.length > 0) {
        await this.#removeCanaryContainers(name).catch((err: unknown) => { this.#deps.log.warn({ err, service: name }, 'the failed canary\'s container was not removed') })
      }
      return { ...result, canary: canaryView(canary) }
    })
  }

  /** The same canary again with another weight: only the proxy's share changes, no container. */
  async #reweighCanary (canary: CanaryState): Promise<DeployResult & { canary: CanaryView }> {
    await this.#deps.state.save([], [], new Map([[canary.spec.name, canary]]))
    this.#deps.changed([canary.spec.name])
    return { deployed: [canary.spec.name], errors: [], changed: [], removed: [], canary: canaryView(canary) }
  }

  #canaryCandidate (source: { service: string } | { body: unknown }, projects?: readonly string[]): Declared {
    const { cwd, services_dir: servicesDir } = this.#deps.settings
    const runtimes = [...this.#deps.runtimes.keys()]
    if ('service' in source) {
      const found = discoverServices({ cwd, servicesDir, runtimes }).find(d => d.spec.name === source.service && reaches(projects, d.spec.project))
      if (found === undefined) throw new NotFound(`no service named "${source.service}" in ${servicesDir}/*/service.toml`, { code: RECONCILER_CODES.NO_SUCH_SERVICE })
      return found
    }
    const declared = parseRequestServices(source.body, { cwd, runtimes })
    if (declared.length !== 1) throw new BadRequest(`a canary deploys one service; the request has ${declared.length}`)
    return declared[0]
  }

  async #removeCanaryContainers (name: string): Promise<void> {
    for (const c of (await this.localContainers()).filter(c => c.service === name && c.canary === true)) {
      await this.#deps.traffic.drain(c)
      await this.#runtime(c.runtime).remove(c.id)
    }
  }

  /** Roll the canary's spec out to every replica, one at a time, then remove the canary; `reason`: why, when no operator asked. */
  async promote (name: string, by?: string, reason?: string): Promise<DeployResult> {
    return await this.#exclusive(async () => {
      this.#known(name)
      const canary = this.#deps.state.canary(name)
      if (canary === undefined) throw new Conflict(`no canary of "${name}" is running`, { code: RECONCILER_CODES.NO_CANARY })
      return await this.#deploy([{ spec: canary.spec, source: canary.source }], { trigger: 'promote', by, reason, prune: 'none', pull: 'rules', force: false, canaries: new Map([[name, null]]) })
    })
  }

  /**
   * Back to the previous spec: with a canary running, the canary is removed and the replicas stay as
   * they are; otherwise the spec deployed before the current one (deploy history) is rolled out.
   * `reason`: why, when no operator asked.
   */
  async rollback (name: string, by?: string, reason?: string): Promise<RollbackResult> {
    return await this.#exclusive(async () => {
      const stored = this.#known(name)
      const hash = specHash(stored.spec, this.#deps.settings)
      const canary = this.#deps.state.canary(name)
      if (canary !== undefined) {
        const result = await this.#deploy([{ spec: stored.spec, source: stored.source }], { trigger: 'rollback', by, reason, prune: 'none', pull: 'missing', force: false, canaries: new Map([[name, null]]) })
        return { ...result, rollback: { from: { image: canary.spec.image, hash: canary.hash, canary: true }, to: { image: stored.spec.image, hash } } }
      }
      const previous = previousVersion(this.#deps.state.history(), name, hash)
      if (previous === undefined) throw new Conflict(`no earlier version of "${name}" in the deploy history to roll back to`, { code: RECONCILER_CODES.NO_EARLIER_VERSION })
      const result = await this.#deploy([{ spec: previous.spec, source: stored.source }], { trigger: 'rollback', by, prune: 'none', pull: 'rules', force: false })
      return { ...result, rollback: { from: { image: stored.spec.image, hash, canary: false }, to: { image: previous.spec.image, hash: previous.hash } } }
    })
  }

  /** The share of requests (percent) of each service's canary, by service: what the proxy weighs by. */
  canaryWeights (): Map<string, number> {
    return new Map(this.#deps.state.canaries().map(c => [c.spec.name, c.weight]))
  }

  /**
   * A deploy by a token limited to `projects` (undefined: every project) declares services of those
   * projects only, and takes no name a service of another project holds.
   */
  #withinScope (declared: readonly Declared[], projects: readonly string[] | undefined): void {
    if (projects === undefined) return
    for (const { spec } of declared) {
      if (!projects.includes(spec.project)) throw new Forbidden(`service "${spec.name}" is in project "${spec.project}", outside this token's projects (${projects.join(', ')})`, { code: TOKENS_CODES.PROJECT_SCOPE })
      const holder = this.#deps.state.service(spec.name)?.spec.project
      if (holder !== undefined && !projects.includes(holder)) throw new Conflict(`the service name "${spec.name}" is taken by a service outside this token's projects`, { code: RECONCILER_CODES.NAME_TAKEN })
    }
  }

  /** Each refused field of each spec, "<source>: service "<name>": <field> <rule>". */
  #refusals (declared: readonly Declared[]): Map<string, string[]> {
    const refused = new Map<string, string[]>()
    for (const { spec, source } of declared) {
      const problems = this.#deps.admission.problems(spec, source)
      if (problems.length > 0) refused.set(spec.name, problems.map(p => `${source}: service "${spec.name}": ${p}`))
    }
    return refused
  }

  async #deploy (requested: readonly Declared[], options: DeployOptions): Promise<DeployResult> {
    const names = requested.map(d => d.spec.name)
    for (const name of names) this.#deploying.add(name)
    try {
      return await this.#deployNow(requested, options)
    } finally {
      for (const name of names) this.#deploying.delete(name)
    }
  }

  async #deployNow (requested: readonly Declared[], options: DeployOptions): Promise<DeployResult> {
    const started = [...(options.canaries?.values() ?? [])].flatMap(c => c === null ? [] : [{ spec: c.spec, source: c.source }])
    const refused = this.#refusals([...requested, ...started])
    if (refused.size > 0 && !UNATTENDED_TRIGGERS.has(options.trigger)) {
      throw new Forbidden(`refused by admission: ${[...refused.values()].flat().join('; ')}`, { code: RECONCILER_CODES.SPEC_REFUSED })
    }
    const claimed = requested.flatMap(({ spec, source }) => claimedNames(spec).flatMap(name => {
      const problem = this.claimedDomain?.(spec.name, name)
      return problem === undefined ? [] : [`${source}: ${problem}`]
    }))
    if (claimed.length > 0) throw new SpecError(claimed)
    const timer = this.#deps.deploySeconds.startTimer({ trigger: options.trigger })
    const { settings, state } = this.#deps
    const failures = new Map([...refused].map(([name, problems]) => [name, problems.join('; ')]))
    const canaries = options.canaries ?? new Map<string, CanaryState | null>()
    const declared = (await this.#built(requested, failures, options.commits)).map(d => this.#heldByCanary(d, canaries, failures, options.trigger))
    const hashes = new Map(declared.map(({ spec }) => [spec.name, specHash(spec, settings)]))
    // What is about to change is written down first: a store that cannot take it refuses the deploy (507) before any container changes.
    await state.begin(options.trigger, declared.map(({ spec }) => ({ name: spec.name, image: canaries.get(spec.name)?.spec.image ?? spec.image, hash: canaries.get(spec.name)?.hash ?? hashes.get(spec.name) as string })))
    // In a cluster the scheduler places replicas (and answers 503 before anything changes when a change must wait for a node).
    const schedule = await this.#schedule(declared, options)
    if (schedule === undefined) {
      for (const { spec } of declared) {
        if (spec.placement !== undefined && spec.placement.node !== settings.node_name) {
          failures.set(spec.name, `placed on node "${spec.placement.node}", but this node is "${settings.node_name}"`)
        }
      }
    }
    const remote: RemoteOutcome = { errors: [], changed: [] }
    if (schedule !== undefined) mergeRemote(remote, await schedule.grow())
    const projects = new Map(declared.map(d => [d.spec.name, d.spec.project]))
    const local = schedule?.local ?? options.assigned?.replicas
    const declaredNames = new Set(declared.map(d => d.spec.name))
    const pruned = this.#pruned(declaredNames, options.prune)
    const kept = options.prune === 'none' ? [] : state.services().map(s => s.spec.name).filter(name => !declaredNames.has(name) && !pruned.includes(name))
    const run = await this.#converge(declared, hashes, options, failures, canaries, new Set(kept), local)
    for (const orphan of run.orphans) projects.set(orphan.name, orphan.project)

    const forgotten = run.listed ? pruned.filter(name => !failures.has(name)) : []
    const specsChanged = declared.some(({ spec }) => JSON.stringify(state.service(spec.name)?.spec) !== JSON.stringify(spec))
    const saved = this.#afterDeploy(declared, hashes, failures, run, options.trigger)
    await state.save(saved, forgotten, new Map([...canaries].filter(([name]) => !failures.has(name))))
    if (schedule !== undefined) {
      mergeRemote(remote, await schedule.shrink())
      for (const [service, reason] of schedule.unplaced) failures.set(service, failures.has(service) ? `${failures.get(service) ?? ''}; ${reason}` : reason)
      for (const { service, project, error } of remote.errors) {
        projects.set(service, projects.get(service) ?? project)
        failures.set(service, failures.has(service) ? `${failures.get(service) ?? ''}; ${error}` : error)
      }
    }
    const result: DeployResult = {
      deployed: declared.map(d => d.spec.name).filter(name => !failures.has(name)),
      errors: [...failures].map(([service, error]) => ({ service, project: projects.get(service) ?? '', error })),
      changed: [...new Set([...run.changed, ...remote.changed.filter(name => declaredNames.has(name))])],
      removed: [...new Set([...run.orphans.map(o => o.name).filter(name => !failures.has(name)), ...forgotten])],
      ...(kept.length > 0 && { kept })
    }
    if (specsChanged || result.changed.length > 0 || result.removed.length > 0 || result.errors.length > 0) {
      await state.record({
        at: new Date().toISOString(),
        trigger: options.trigger,
        ...(options.by !== undefined && { by: options.by }),
        ...(options.reason !== undefined && { reason: options.reason }),
        services: declared.map(({ spec }) => {
          const started = canaries.get(spec.name)
          const recorded = started?.spec ?? spec
          return { name: spec.name, project: spec.project, image: recorded.image, hash: started?.hash ?? hashes.get(spec.name) as string, spec: recorded }
        }),
        deployed: result.deployed,
        errors: result.errors
      })
    }
    timer()
    if (result.errors.length > 0) this.#deps.log.warn({ trigger: options.trigger, errors: result.errors }, 'deploy finished with errors')
    // An agent's leader tells its operators of what failed on the agent.
    if (options.trigger !== 'leader') {
      const images = new Map(declared.map(({ spec }) => [spec.name, canaries.get(spec.name)?.spec.image ?? spec.image]))
      this.#tell(result.errors, images, saved.filter(s => run.rolledBack.includes(s.spec.name)), options.trigger)
    }
    if (result.changed.length > 0 || result.removed.length > 0) this.#deps.changed([...result.changed, ...result.removed])
    return result
  }

  /** The deployed services a deploy declaring `declared` removes: with 'files' only those that came from service files. */
  #pruned (declared: ReadonlySet<string>, prune: Prune): string[] {
    if (prune === 'none') return []
    return this.#deps.state.services()
      .filter(s => !declared.has(s.spec.name) && (prune === 'all' || originOf(s.source) === 'file'))
      .map(s => s.spec.name)
  }

  /**
   * What to store of each declared service after a deploy: one that failed keeps its previous spec
   * when the replicas its rollout replaced were rolled back or none of its containers changed, else
   * the new spec stays; the failure is stored either way. A canary's failure is not its service's
   * (the canary is removed again), which keeps the failure it had.
   */
  /** A deploy of `name` that began and whose outcome was never stored, unless one is under way now. */
  #unfinished (name: string): PendingDeploy | undefined {
    return this.#deploying.has(name) ? undefined : this.#deps.state.pending(name)
  }

  #afterDeploy (declared: readonly Declared[], hashes: ReadonlyMap<string, string>, failures: ReadonlyMap<string, string>, run: Converged, trigger: string): Saved[] {
    const at = new Date().toISOString()
    return declared.map(d => {
      const { name } = d.spec
      const previous = this.#deps.state.service(name)
      const error = failures.get(name)
      if (trigger === 'canary') return { ...d, failure: previous?.failure }
      if (error === undefined) return d
      const failed = { at, trigger, image: d.spec.image, hash: hashes.get(name) as string, error }
      const rolledBack = run.rolledBack.includes(name)
      if (previous !== undefined && (rolledBack || !run.changed.includes(name))) {
        return { spec: previous.spec, source: previous.source, failure: { ...failed, recovery: rolledBack ? 'rolled-back' : 'unchanged' } }
      }
      const unready = run.unready.get(name)
      return { ...d, failure: { ...failed, recovery: 'none', ...(unready !== undefined && { unready }) } }
    })
  }

  /**
   * Alerts for operators: each service a deploy failed (`images`: the image it tried, by service;
   * none for a container of no deployed service), and each of `rolledBack` (also counted).
   */
  #tell (errors: readonly DeployError[], images: ReadonlyMap<string, string>, rolledBack: readonly Saved[], trigger: string): void {
    const at = Date.now()
    for (const { service, project, error } of errors) {
      const image = images.get(service)
      this.#deps.alert({
        kind: 'deploy.failed', subject: service, at,
        message: `${trigger} of ${service}${image === undefined ? '' : ` (${image})`} failed: ${error}`,
        details: { project, trigger, error, rolled_back: rolledBack.some(s => s.spec.name === service), ...(image !== undefined && { image }) }
      })
    }
    for (const { spec, failure } of rolledBack) {
      if (failure === undefined) continue
      this.#deps.rollbacks.labels(spec.name).inc()
      this.#deps.alert({
        kind: 'deploy.rolled-back', subject: spec.name, at,
        message: `${spec.name} was rolled back to ${spec.image}: its ${failure.trigger} of ${failure.image} failed`,
        details: { project: spec.project, trigger: failure.trigger, from_image: failure.image, to_image: spec.image, error: failure.error }
      })
    }
  }

  /** With a scheduler (a cluster's leader): place the replicas of this deploy; undefined on a single node or an agent. */
  async #schedule (declared: readonly Declared[], options: DeployOptions): Promise<Schedule | undefined> {
    const scheduler = this.scheduler
    if (scheduler === undefined) return undefined
    const { state } = this.#deps
    const names = new Set(declared.map(d => d.spec.name))
    const removed = this.#pruned(names, options.prune)
    const kept = state.services().filter(s => !names.has(s.spec.name) && !removed.includes(s.spec.name)).map(s => s.spec)
    const changing = new Set(declared.filter(({ spec }) => options.force || JSON.stringify(state.service(spec.name)?.spec) !== JSON.stringify(spec)).map(d => d.spec.name))
    return await scheduler.schedule({
      trigger: options.trigger, declared: declared.map(d => d.spec), desired: [...kept, ...declared.map(d => d.spec)], changing, removed, pull: options.pull, force: options.force
    })
  }

  /**
   * While a canary runs, a deploy may not change the service's containers (it would be neither the
   * canary's spec nor the replicas'): the service keeps its spec and fails with a reason, unless this
   * deploy itself starts or ends the canary.
   */
  #heldByCanary (declared: Declared, canaries: ReadonlyMap<string, CanaryState | null>, failures: Map<string, string>, trigger: string): Declared {
    const { name } = declared.spec
    const running = this.#deps.state.canary(name)
    const stored = this.#deps.state.service(name)
    if (running === undefined || stored === undefined || canaries.has(name)) return declared
    const hash = specHash(declared.spec, this.#deps.settings)
    if (specHash(stored.spec, this.#deps.settings) === hash) return declared
    // A reload redeploys what runs: the file declaring the canary's spec keeps the replicas at theirs and the canary beside them.
    if (trigger === 'reload' && running.hash === hash) return { spec: stored.spec, source: stored.source }
    failures.set(name, `a canary of "${name}" is running (${running.spec.image}); promote it or roll it back first`)
    return { spec: stored.spec, source: stored.source }
  }

  /** The canary a service should run after this deploy: the one it starts, none when it ends it, else the stored one. */
  #canaryAfter (name: string, canaries: ReadonlyMap<string, CanaryState | null>): CanaryState | undefined {
    return canaries.has(name) ? canaries.get(name) ?? undefined : this.#deps.state.canary(name)
  }

  /**
   * List, pull, plan and execute; the containers of `kept` services are left alone. Failures are added
   * to `failures`; when the engine cannot be listed (or asked for images) every service fails with
   * that reason and `listed` is false.
   */
  async #converge (declared: readonly Declared[], hashes: ReadonlyMap<string, string>, options: DeployOptions, failures: Map<string, string>, canaries: ReadonlyMap<string, CanaryState | null>, kept: ReadonlySet<string>, local?: ReadonlyMap<string, readonly number[]>): Promise<Converged> {
    const replicasHere = (spec: ServiceSpec): readonly number[] | undefined => local === undefined ? undefined : local.get(spec.name) ?? []
    const forced = (spec: ServiceSpec): boolean => options.force || options.assigned?.force.has(spec.name) === true
    if (local !== undefined) {
      for (const { spec } of declared) this.#placed.set(spec.name, { replicas: local.get(spec.name) ?? [], env: options.env?.get(spec.name) })
    }
    try {
      const actual = (await this.localContainers()).filter(c => !kept.has(c.service))
      const canaryStates = new Map(declared.flatMap(({ spec }) => {
        const canary = this.#canaryAfter(spec.name, canaries)
        return canary === undefined ? [] : [[spec.name, canary] as const]
      }))
      const images = await this.#prepareImages([...declared.map(d => ({ ...d.spec, replicas: replicasHere(d.spec)?.length ?? d.spec.replicas })), ...[...canaryStates.values()].map(c => ({ ...c.spec, replicas: 1 }))], options.pull, failures)
      const imageOf = (spec: ServiceSpec): string | undefined => images.get(spec.runtime)?.get(localImageName(spec.image))
      const desired: Desired[] = declared.map(({ spec }) => {
        const canary = canaryStates.get(spec.name)
        const desiredCanary: DesiredCanary | undefined = canary === undefined ? undefined : { spec: canary.spec, hash: canary.hash, imageId: imageOf(canary.spec) }
        const indices = replicasHere(spec)
        const rollback = this.#rollbackOf(spec, hashes.get(spec.name) as string)
        return {
          spec, hash: hashes.get(spec.name) as string, imageId: imageOf(spec), force: forced(spec),
          ...(desiredCanary !== undefined && { canary: desiredCanary }), ...(indices !== undefined && { replicas: indices }), ...(rollback !== undefined && { rollback })
        }
      })
      const plan = planDeploy(desired, actual, { removeOrphans: options.prune !== 'none' })
      const outcome = await executePlan(plan, this.#executor(name => options.env?.get(name)), failures)
      return { listed: true, changed: [...outcome.changed], orphans: plan.orphans, rolledBack: [...outcome.rolledBack], unready: outcome.unready }
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err)
      for (const { spec } of declared) if (!failures.has(spec.name)) failures.set(spec.name, reason)
      return { listed: false, changed: [], orphans: [], rolledBack: [], unready: new Map() }
    }
  }

  /** The executor's engine, limits, checks and routers; `env` gives a service's resolved environment when it is not resolved here (an agent's, from its leader). */
  #executor (env: (service: string) => Record<string, string> | undefined): ExecutorDeps {
    return {
      runtime: name => this.#runtime(name),
      limit: this.#limit,
      resolveEnv: spec => env(spec.name) ?? this.#deps.secrets.resolve(spec.env, spec.name, spec.project),
      healthTimeoutMs: this.#deps.settings.health_timeout_secs * 1000,
      healthIntervalMs: 250,
      traffic: this.#deps.traffic
    }
  }

  /**
   * Bring this node's containers back to the desired state without deploying anything: missing
   * replicas are created (their images pulled only when absent), stopped ones started (not those the
   * engine is restarting itself), extra ones and containers of no deployed service removed. A
   * container of another spec stays (changing specs is a deploy's work), and so do the services
   * a stop request stopped, those in `skip`, and those with a container the engine is removing (until
   * it is gone). In a cluster the replicas are those last placed on this node; before a placement is
   * known, only the containers there are started. Runs between changes, never beside one; throws
   * EngineUnavailable when the engine cannot be reached.
   */
  async repair (skip: ReadonlySet<string>): Promise<RepairOutcome> {
    return await this.#exclusive(async () => {
      const { state, settings } = this.#deps
      const stored = state.services()
      const listed = await this.localContainers()
      // A container the engine is removing cannot be started and keeps its name a while: its service
      // waits for the pass that follows the engine's destroy event.
      const removing = new Set(listed.filter(c => c.state === 'removing').map(c => c.service))
      // A stored spec the admission rules refuse now (an operator narrowed them since) is not created again.
      const refused = this.#refusals(stored.filter(s => s.stopped_at === undefined))
      const wanted = stored.filter(s => s.stopped_at === undefined && !skip.has(s.spec.name) && !removing.has(s.spec.name) && !refused.has(s.spec.name))
      const names = new Set(wanted.map(s => s.spec.name))
      const deployed = new Set(stored.map(s => s.spec.name))
      const actual = listed.filter(c => names.has(c.service) || (!deployed.has(c.service) && !removing.has(c.service)))
      const clustered = this.scheduler !== undefined || this.leader !== undefined
      const desired: Desired[] = wanted.map(({ spec }) => {
        const canary = state.canary(spec.name)
        const replicas = this.#placed.get(spec.name)?.replicas ?? (clustered ? actual.filter(c => c.service === spec.name && c.canary !== true).map(c => c.replica) : undefined)
        return { spec, hash: specHash(spec, settings), ...(canary !== undefined && { canary: { spec: canary.spec, hash: canary.hash } }), ...(replicas !== undefined && { replicas }) }
      })
      const plan = planDeploy(desired, actual, { removeOrphans: true, repair: true })
      const planned = [...plan.orphans, ...plan.layers.flat()].filter(s => s.actions.length > 0 || s.canaryActions.length > 0)
      // Those missing replicas are failures of the pass, named with the rule that refuses them.
      const short = (name: string): boolean => listed.filter(c => c.service === name && c.canary !== true).length < (this.#placed.get(name)?.replicas.length ?? state.service(name)?.spec.replicas ?? 0)
      const failures = new Map([...refused].filter(([name]) => short(name)).map(([name, problems]) => [name, problems.join('; ')]))
      if (planned.length === 0) return { repaired: [], failures }
      const creates = (actions: readonly Action[]): boolean => actions.some(a => a.kind === 'create')
      await this.#prepareImages(plan.layers.flat().flatMap(s => [
        ...(s.desired !== undefined && creates(s.actions) ? [s.desired.spec] : []),
        ...(s.desired?.canary !== undefined && creates(s.canaryActions) ? [{ ...s.desired.canary.spec, replicas: 1 }] : [])
      ]), 'missing', failures)
      await executePlan(plan, this.#executor(name => this.#placed.get(name)?.env), failures)
      const repaired = planned.map(s => s.name).filter(name => !failures.has(name))
      if (repaired.length > 0) this.#deps.changed(repaired)
      return { repaired, failures }
    })
  }

  /** Where the replicas a rollout of `spec` replaces go back to when one fails: the deployed spec, unless it is the same or the service turns rollbacks off. */
  #rollbackOf (spec: ServiceSpec, hash: string): { spec: ServiceSpec, hash: string } | undefined {
    const previous = this.#deps.state.service(spec.name)?.spec
    if (previous === undefined || spec.rollback_on_failure === false) return undefined
    const previousHash = specHash(previous, this.#deps.settings)
    return previousHash === hash ? undefined : { spec: previous, hash: previousHash }
  }

  /**
   * Services with a build get their image tagged by the content hash of their sources, built when the
   * engine lacks it (older builds beyond `builds_kept` removed after); a failed build fails its service.
   */
  async #built (requested: readonly Declared[], failures: Map<string, string>, commits: ReadonlyMap<string, string> = new Map()): Promise<Declared[]> {
    return await Promise.all(requested.map(async declared => {
      const { spec } = declared
      const build = spec.build
      if (build === undefined || failures.has(spec.name)) return declared
      const runtime = this.#runtime(spec.runtime)
      try {
        // A stored spec (a rollback, redeploy, scale, restart, an agent's order) names the build it ran: that one, never the sources of now.
        if (spec.image !== buildRepository(spec.image, spec.project, spec.name)) {
          if ((await runtime.localImages()).has(spec.image)) return declared
          // Pushed to a registry when it was built: pulled from there.
          if (registryHost(spec.image) !== undefined) return declared
          throw new Error(`its build ${spec.image} is no longer kept (builds_kept); deploy the service's file to build its sources anew`)
        }
        const repository = this.#buildRepository(spec)
        const source = build.git === undefined ? undefined : await this.#deps.git.checkout(build.git, commits.get(spec.name) ?? build.ref ?? 'HEAD')
        const context = source === undefined ? build.context : join(source.dir, build.context)
        if (!existsSync(context)) throw new Error(`the build context ${source === undefined ? context : `${build.context} of commit ${source.commit}`} does not exist`)
        if (source !== undefined && !isInside(realPath(context), realPath(source.dir))) throw new Error(`the build context ${build.context} of commit ${source.commit} leaves the repository through a symlink`)
        const files = contextFiles(context)
        const tag = `${repository}:${buildHash(build, files, context).slice(0, 16)}`
        if (!(await runtime.localImages()).has(tag)) {
          await this.#limit(async () => { await runtime.build({ context, files, dockerfile: build.dockerfile, args: build.args, tag }) })
          await runtime.pruneBuilds(repository, this.#deps.settings.builds_kept).catch(() => 0)
        }
        // In a registry, agents and later rollbacks find it (a push of what the registry has is quick).
        if (registryHost(tag) !== undefined) await this.#limit(async () => { await runtime.push(tag) })
        return { ...declared, spec: { ...spec, image: tag, ...(source !== undefined && { build: { ...build, commit: source.commit } }) } }
      } catch (err) {
        if (err instanceof EngineUnavailable) throw err
        failures.set(spec.name, err instanceof Error ? err.message : String(err))
        return declared
      }
    }))
  }

  /** Where a service's builds are tagged: its `image` repository, else the build registry's `<project>-<name>` (when set), else berth-build's. */
  #buildRepository (spec: ServiceSpec): string {
    const registry = this.#deps.settings.build_registry.replace(/\/+$/, '')
    const local = buildRepository(undefined, spec.project, spec.name)
    return spec.image === local && registry !== '' ? `${registry}/${spec.project}-${spec.name}` : spec.image
  }

  /**
   * Pull what each service's `pull` policy, else `policy`, asks for (each reference once, under the
   * parallelism bound); a failed pull, or an image absent under "never", fails the services using
   * that image (a canary's spec fails its service). Returns, per runtime,
   * the local images afterwards.
   */
  async #prepareImages (toRun: readonly ServiceSpec[], policy: PullPolicy, failures: Map<string, string>): Promise<Map<string, Map<string, string>>> {
    const result = new Map<string, Map<string, string>>()
    for (const [name, runtime] of this.#deps.runtimes) {
      const specs = toRun.filter(s => s.runtime === name && s.replicas > 0 && !failures.has(s.name))
      if (specs.length === 0) continue
      let local = await runtime.localImages()
      const pulls = new Map<string, string[]>()
      for (const spec of specs) {
        const present = local.has(localImageName(spec.image))
        // The service's own policy comes first; a built image is pulled only from the registry it was pushed to.
        const own = spec.pull ?? policy
        if (own === 'never' && !present && spec.build === undefined) failures.set(spec.name, `its image ${spec.image} is not on this node and its pull policy is "never": build or load it here first`)
        const wanted = (spec.build === undefined || registryHost(spec.image) !== undefined) && own !== 'never' && (own === 'always' || (own === 'rules' && imageTag(spec.image) === 'latest') || !present)
        if (wanted) pulls.set(spec.image, [...(pulls.get(spec.image) ?? []), spec.name])
      }
      await Promise.all([...pulls].map(async ([ref, services]) => {
        try {
          await this.#limit(async () => { await runtime.pull(ref) })
        } catch (err) {
          if (err instanceof EngineUnavailable) throw err
          for (const service of services) failures.set(service, err instanceof Error ? err.message : String(err))
        }
      }))
      if (pulls.size > 0) local = await runtime.localImages()
      result.set(name, local)
    }
    return result
  }

  /** Remove a deployed service: its containers go, its spec is forgotten (its volumes stay). */
  async removeService (name: string): Promise<{ removed: string[], containers: number }> {
    return await this.#exclusive(async () => {
      this.#known(name)
      return await this.#remove([name])
    })
  }

  /** Remove every deployed service of a project. */
  async removeProject (project: string): Promise<{ removed: string[], containers: number }> {
    return await this.#exclusive(async () => {
      const names = this.#deps.state.services().filter(s => s.spec.project === project).map(s => s.spec.name).sort()
      if (names.length === 0) throw new NotFound(`no project named "${project}" is deployed`, { code: RECONCILER_CODES.NO_SUCH_SERVICE })
      return await this.#remove(names)
    })
  }

  async #remove (names: readonly string[]): Promise<{ removed: string[], containers: number }> {
    const doomed = (await this.localContainers()).filter(c => names.includes(c.service))
    const elsewhere = this.scheduler?.remoteContainers().filter(c => names.includes(c.service)).length ?? 0
    const schedule = await this.scheduler?.schedule({
      trigger: 'remove', declared: [], desired: this.specs().filter(s => !names.includes(s.name)), changing: new Set(), removed: names, pull: 'missing', force: false
    })
    await Promise.all(doomed.map(async c => {
      await this.#deps.traffic.drain(c)
      await this.#limit(async () => { await this.#runtime(c.runtime).remove(c.id) })
    }))
    await this.#deps.state.save([], names)
    if (schedule !== undefined) {
      const outcome = await schedule.grow()
      mergeRemote(outcome, await schedule.shrink())
      if (outcome.errors.length > 0) this.#deps.log.warn({ errors: outcome.errors }, 'other nodes did not remove every container')
    }
    this.#deps.changed([...names])
    return { removed: [...names], containers: doomed.length + elsewhere }
  }

  /**
   * An agent's deploy: run exactly these services with these replica indices and environments (as the
   * leader sent them); any other service this node runs is removed.
   */
  async applyAssigned (services: readonly AssignedService[], options: { force: readonly string[], pull: PullPolicy }): Promise<DeployResult> {
    return await this.#exclusive(async () => await this.#deploy(services.map(s => ({ spec: s.spec, source: LEADER_SOURCE })), {
      trigger: 'leader',
      prune: 'all',
      pull: options.pull,
      force: false,
      assigned: { replicas: new Map(services.map(s => [s.spec.name, s.replicas])), force: new Set(options.force) },
      env: new Map(services.map(s => [s.spec.name, s.env]))
    }))
  }

  /** Place every deployed service again and converge (a cluster's node drained, gone or forgotten); what did not move stays as it is. */
  async reschedule (trigger: string): Promise<DeployResult> {
    return await this.#exclusive(async () => await this.#deploy(this.#deps.state.services().map(s => ({ spec: s.spec, source: s.source })), {
      trigger, prune: 'none', pull: 'missing', force: false
    }))
  }

  /** 503 when a change to this service must wait for the node it is placed on (offline or unhealthy). */
  assertReachable (name: string): void {
    const stored = this.#known(name)
    const reason = this.scheduler?.unavailable(stored.spec)
    if (reason !== undefined) throw new Unavailable(reason, { code: RECONCILER_CODES.NODE_UNAVAILABLE })
  }

  /** Stop every running container; specs stay, and the next deploy starts them again. */
  async stopAll (): Promise<{ stopped: string[], containers: number }> {
    return await this.#exclusive(async () => {
      const running = (await this.localContainers()).filter(c => c.running)
      // Repairs leave them stopped until their next deploy.
      await this.#deps.state.markStopped(this.#deps.state.services().map(s => s.spec.name))
      await Promise.all(running.map(async c => {
        await this.#deps.traffic.drain(c)
        await this.#limit(async () => { await this.#runtime(c.runtime).stop(c.id) })
      }))
      const elsewhere = this.scheduler?.remoteContainers().filter(c => c.running) ?? []
      const stoppedElsewhere = this.scheduler === undefined ? 0 : await this.scheduler.stopRemote()
      const stopped = [...new Set([...running, ...elsewhere].map(c => c.service))].sort()
      this.#deps.changed(stopped)
      return { stopped, containers: running.length + stoppedElsewhere }
    })
  }

  /** Restart a service's containers one after the other (same containers, same environment). */
  async restart (name: string): Promise<{ restarted: string[] }> {
    return await this.#exclusive(async () => {
      const { spec } = this.#known(name)
      const containers = (await this.localContainers()).filter(c => c.service === name).sort((a, b) => a.replica - b.replica)
      const elsewhere = this.scheduler?.remoteContainers().filter(c => c.service === name) ?? []
      if (containers.length === 0 && elsewhere.length === 0) throw new Conflict(`service "${name}" has no containers; deploy it first`, { code: RECONCILER_CODES.NO_CONTAINERS })
      for (const c of containers) {
        await this.#deps.traffic.drain(c)
        await this.#runtime(c.runtime).restart(c.id)
        await this.#deps.traffic.ready(spec, c.id)
      }
      const restartedElsewhere = elsewhere.length === 0 || this.scheduler === undefined ? [] : await this.scheduler.restartRemote(name)
      // Running again: repairs keep it so from now on.
      if (this.#deps.state.service(name)?.stopped_at !== undefined) await this.#deps.state.markStopped([name], false)
      this.#deps.changed([name])
      return { restarted: [...containers.map(c => c.name), ...restartedElsewhere] }
    })
  }

  /** Run a shell command in the first running replica of a service (a backup's pre_hook). */
  async exec (name: string, command: string): Promise<{ exitCode: number, output: string }> {
    const { spec } = this.#known(name)
    const running = (await this.localContainers()).filter(c => c.service === name && c.running && c.canary !== true).sort((a, b) => a.replica - b.replica)[0]
    if (running === undefined) throw new Conflict(`service "${name}" has no running container to run its hook in`, { code: RECONCILER_CODES.NO_CONTAINERS })
    return await this.#runtime(spec.runtime).exec(running.id, command)
  }

  /**
   * Start a caller's command in replica `replica` of a service (the first running one when not given),
   * on this node: `berth exec`. 404 an unknown service, 409 no such replica running here.
   */
  async attach (name: string, replica: number | undefined, options: { command: string[], tty: boolean, columns?: number, rows?: number }): Promise<{ container: ContainerState, session: ExecSession }> {
    const { spec } = this.#known(name)
    const running = (await this.localContainers()).filter(c => c.service === name && c.running && c.canary !== true).sort((a, b) => a.replica - b.replica)
    const container = replica === undefined ? running[0] : running.find(c => c.replica === replica)
    if (container === undefined) {
      const elsewhere = this.scheduler?.remoteContainers().find(c => c.service === name && c.running && (replica === undefined || c.replica === replica))
      const which = replica === undefined ? 'no running replica' : `no running replica ${replica}`
      throw new Conflict(`service "${name}" has ${which} on this node${elsewhere?.node !== undefined ? `; it runs on node "${elsewhere.node}": exec through that node's API` : ''}`, { code: RECONCILER_CODES.NO_CONTAINERS })
    }
    return { container, session: await this.#runtime(spec.runtime).attach(container.id, options) }
  }

  /** The engine volume of a service's volume `source` (`<project>_<source>`), its host directory (created if missing). */
  async volumeDir (spec: ServiceSpec, volume: string): Promise<string> {
    return await this.#runtime(spec.runtime).volumeDir(volume, spec.project)
  }

  async hasVolume (spec: ServiceSpec, volume: string): Promise<boolean> {
    return await this.#runtime(spec.runtime).hasVolume(volume)
  }

  /**
   * Run `fn` with a service's containers stopped (a restore into its volumes), starting them again
   * afterwards whatever `fn` did. Holds the deploy lock meanwhile.
   */
  async whileStopped<T> (name: string, fn: () => Promise<T>): Promise<T> {
    return await this.#exclusive(async () => {
      const { spec } = this.#known(name)
      const containers = (await this.localContainers()).filter(c => c.service === name)
      for (const c of containers) {
        await this.#deps.traffic.drain(c)
        await this.#runtime(c.runtime).stop(c.id)
      }
      try {
        return await fn()
      } finally {
        for (const c of containers) {
          await this.#runtime(c.runtime).start(c.id)
          await this.#deps.traffic.ready(spec, c.id)
        }
        this.#deps.changed([name])
      }
    })
  }

  /** The desired spec of every deployed service. */
  specs (): ServiceSpec[] {
    return this.#deps.state.services().map(s => s.spec)
  }

  /** Past deploys, oldest first (at most [reconciler].history_limit). */
  history (): HistoryEntry[] {
    return this.#deps.state.history()
  }

  /** The services' status; `stats`: with the engine's figures of each container running on this node (about a second more). */
  async status (project?: string, options: { stats?: boolean } = {}): Promise<ServiceStatus[]> {
    const stored = this.#deps.state.services().filter(s => project === undefined || s.spec.project === project)
    const here = await this.localContainers()
    // In a cluster every container says where it runs.
    const containers = this.scheduler === undefined ? here : [...here.map(c => ({ ...c, node: this.#deps.settings.node_name })), ...this.scheduler.remoteContainers()]
    const names = new Set(stored.map(s => s.spec.name))
    const measured = options.stats === true ? await measureContainers(this.#deps.runtimes, here.filter(c => names.has(c.service)), true) : []
    const statsOf = new Map(measured.map(({ container, stats }) => [container.name, stats]))
    return stored.map(s => {
      const entry = serviceStatus(s, containers.filter(c => c.service === s.spec.name), this.#deps.state.restarts(s.spec.name), this.#deps.state.canary(s.spec.name), this.repairFailure?.(s.spec.name), this.#unfinished(s.spec.name))
      if (statsOf.size > 0) {
        for (const c of entry.containers) {
          const stats = c.node === undefined || c.node === this.#deps.settings.node_name ? statsOf.get(c.name) : undefined
          if (stats !== undefined) c.stats = stats
        }
      }
      const route = this.routes?.(s.spec.name)
      return route === undefined ? entry : { ...entry, route }
    })
  }

  /** The router that runs (the proxy) reports each service's route here, for the status. */
  routes: RouteReporter | undefined

  /** Set by the router (the proxy) when some domains are not services' to claim: the problem of a service claiming one. */
  claimedDomain: ((service: string, domain: string | undefined) => string | undefined) | undefined

  /** Why repairing a service keeps failing, when it does (set by the repair loop), for the status. */
  repairFailure: ((service: string) => string | undefined) | undefined

  async logs (name: string, options: { tail: number, follow: boolean }): Promise<PassThrough> {
    this.#known(name)
    const containers = (await this.localContainers()).filter(c => c.service === name).sort((a, b) => a.replica - b.replica)
    const elsewhere = this.scheduler?.remoteContainers().filter(c => c.service === name) ?? []
    if (containers.length === 0 && elsewhere.length === 0) throw new Conflict(`service "${name}" has no containers`, { code: RECONCILER_CODES.NO_CONTAINERS })
    const sources = await Promise.all(containers.map(async c => ({ label: c.name, stream: await this.#runtime(c.runtime).logs(c.id, options) })))
    // Other nodes' replicas: their last lines (followed logs follow this node's replicas only).
    const remote = elsewhere.length === 0 || this.scheduler === undefined ? [] : await this.scheduler.logsRemote(name, options.tail)
    return mergeLogs([...sources, ...remote.map(({ label, text }) => ({ label, stream: Readable.from([text]) }))], { interleave: options.follow })
  }

  /** The last `tail` lines of each of this node's containers of a service (an agent answering its leader). */
  async localLogs (name: string, tail: number): Promise<Array<{ label: string, text: string }>> {
    const containers = (await this.localContainers()).filter(c => c.service === name).sort((a, b) => a.replica - b.replica)
    return await Promise.all(containers.map(async c => {
      const stream = await this.#runtime(c.runtime).logs(c.id, { tail, follow: false })
      let text = ''
      for await (const chunk of stream) text += (chunk as Buffer | string).toString()
      return { label: c.name, text }
    }))
  }
}
