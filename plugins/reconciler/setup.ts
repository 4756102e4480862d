// The reconciler plugin at work: the engine runtime, the reconciler, the repair loop, liveness probing,
// the control API routes, the refresh job and the redeploy that ends a reload. Imported by setup only,
// so `berth` commands never load the engine client.
import { hostname } from 'node:os'
import { join, resolve } from 'node:path'
import type { OperatorAlert, PluginContext } from '../../kernel/index.js'
import { assertRoom } from '../../kernel/runtime-api.js'
import { judgeCanaries } from './canary-judge.js'
import { Admission, parsePortRange } from './admission.js'
import { clusterInfo } from './cluster-info.js'
import { DockerEngine } from './docker-engine.js'
import { GitSources } from './git-source.js'
import type { ReconcilerConfig, ReconcilerService } from './index.js'
import { Liveness } from './liveness.js'
import { Reconciler } from './reconciler.js'
import { dockerConfigFile } from './registry-auth.js'
import { finishReload, requestReload } from './reload.js'
import { RepairLoop } from './repair.js'
import { reconcilerRoutes, serviceVisibility } from './routes.js'
import { EngineUnavailable, type ContainerEngine } from './container-engine.js'
import { ReconcilerState } from './state.js'
import { Traffic } from './traffic.js'
import { controlState, leaderRoutes } from '../cluster/index.js'
import { measureContainers, registerContainerMetrics } from './container-stats.js'
import { execRoutes } from './exec-route.js'
import { JobScheduler, type JobRecord } from './jobs.js'

/** How often liveness targets are re-read from the engine (containers restarted or removed outside Berth). */
const LIVENESS_REFRESH_MS = 15_000
/** Free space a deploy needs where the state is kept before it changes any container (its specs and history entry fit many times). */
const DEPLOY_ROOM_BYTES = 1 << 20
/** How often scheduled jobs are looked at (their schedules have seconds). */
const JOB_TICK_MS = 1000
/** How often canaries due for their judgement (auto-promotion) are looked for. */
const CANARY_TICK_MS = 1000
/** How often the health report asks whether the engine answers. */
const ENGINE_CHECK_MS = 10_000

/** `engine` in place of the Docker engine the configuration names: a test's stand-in. */
export function setupReconciler (ctx: PluginContext<ReconcilerConfig>, engine?: ContainerEngine): ReconcilerService {
  const config = ctx.config
  const nodeName = config.node_name === '' ? hostname() : config.node_name
  // In a cluster of masters only the leader acts: its writes carry its leadership, and a master that
  // follows neither repairs, restarts nor redeploys (its routes go to the leader).
  const cluster = ctx.useOptional('cluster')
  const leading = (): boolean => cluster?.isLeader() ?? true
  const control = controlState(ctx, { fenced: true })
  const state = new ReconcilerState(control, ctx.store, config.history_limit, async () => { await assertRoom(ctx.stateDir, DEPLOY_ROOM_BYTES) })
  const docker = engine ?? new DockerEngine({
    socket: config.docker_socket, instance: config.instance, publish_address: config.publish_address,
    network: config.network, stop_timeout_secs: config.stop_timeout_secs,
    credentials_file: config.registry_credentials === '' ? dockerConfigFile() : resolve(ctx.cwd, config.registry_credentials)
  })
  const runtimes = new Map<string, ContainerEngine>([[docker.name, docker]])
  const hostPorts = parsePortRange(config.host_ports)
  if (typeof hostPorts === 'string') throw new Error(`[reconciler] ${hostPorts}`)
  const admission = new Admission({
    allowedHostPaths: config.allowed_host_paths, hostPorts, listenerPorts: () => ctx.listenerPorts(), cwd: ctx.cwd,
    protectedPaths: [ctx.stateDir, config.docker_socket], secretVisibility: (name, project) => ctx.use('secrets').visibility(name, project)
  })
  const restarts = ctx.metrics.counter({ name: 'berth_reconciler_liveness_restarts_total', help: 'Containers restarted after failing liveness probes.', labelNames: ['service'] })
  const deploySeconds = ctx.metrics.histogram({ name: 'berth_reconciler_deploy_seconds', help: 'Duration of deploys, by trigger.', labelNames: ['trigger'], buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60] })
  const rollbacks = ctx.metrics.counter({ name: 'berth_reconciler_rollbacks_total', help: 'Rollouts rolled back to the previous spec after a replacement failed its checks.', labelNames: ['service'] })

  const liveness = new Liveness({
    runtime: name => runtimes.get(name) as ContainerEngine,
    containers: async () => leading() ? await reconciler.localContainers() : [],
    spec: container => container.canary === true ? state.canary(container.service)?.spec : state.service(container.service)?.spec,
    restarted: async service => {
      await state.countRestart(service)
      restarts.labels(service).inc()
      ctx.events.emit('reconciler.changed', { services: [service] })
    },
    log: ctx.log
  })
  const refreshLiveness = async (): Promise<void> => {
    try {
      await liveness.refresh()
    } catch (err) {
      if (!(err instanceof EngineUnavailable)) throw err
      ctx.log.debug({ err: err.message }, 'liveness not refreshed')
    }
  }
  const traffic = new Traffic()
  const changed = (services: string[]): void => {
    ctx.events.emit('reconciler.changed', { services })
    void ctx.track(refreshLiveness()).catch((err: unknown) => { ctx.log.error({ err }, 'liveness refresh failed') })
  }
  const alert = (event: OperatorAlert): void => { ctx.events.emit('operator.alert', event) }
  const secrets = ctx.use('secrets')
  const jobRuns = ctx.metrics.counter({ name: 'berth_reconciler_job_runs_total', help: 'Runs of scheduled jobs, by outcome (succeeded, failed, skipped).', labelNames: ['service', 'job', 'outcome'] })
  const jobs = new JobScheduler({
    specs: () => state.services().filter(s => s.stopped_at === undefined).map(s => s.spec),
    run: async (spec, job) => {
      const refused = admission.problems(spec, state.service(spec.name)?.source ?? '')
      if (refused.length > 0) throw new Error(`refused by admission: ${refused.join('; ')}`)
      return await (runtimes.get(spec.runtime) as ContainerEngine).runJob({ spec, job: job.name, command: job.command, env: secrets.resolve(spec.env, spec.name, spec.project) })
    },
    records: control.db<JobRecord>('job-runs'),
    leading,
    counted: (service, job, outcome) => { jobRuns.labels(service, job, outcome).inc() },
    alert,
    log: ctx.log,
    stopping: ctx.stopping
  })
  // Job containers of runs the stop interrupts: removed now if the engine answers in time, else at the next start.
  ctx.stopping.addEventListener('abort', () => { docker.removeJobLeftovers({ running: true }).catch(() => undefined) }, { once: true })
  const reconciler = new Reconciler({
    runtimes,
    traffic,
    state,
    secrets,
    settings: { ...config, cwd: ctx.cwd, node_name: nodeName },
    log: ctx.log,
    deploySeconds,
    rollbacks,
    alert,
    changed,
    git: new GitSources(join(ctx.stateDir, 'builds')),
    admission
  })
  registerContainerMetrics(ctx.metrics, async () => await measureContainers(runtimes, await reconciler.localContainers(), false))
  const repairs = config.repair_interval_secs === 0 ? undefined : new RepairLoop({
    repair: async skip => leading() ? await reconciler.repair(skip) : { repaired: [], failures: new Map() },
    events: async options => await docker.events(options),
    deployedAt: service => state.service(service)?.deployed_at,
    started: changed,
    alert,
    track: async work => { await ctx.track(work) },
    intervalMs: config.repair_interval_secs * 1000,
    log: ctx.log,
    metrics: {
      passes: ctx.metrics.counter({ name: 'berth_reconciler_repair_passes_total', help: 'Repair passes that reached the engine.' }),
      repairs: ctx.metrics.counter({ name: 'berth_reconciler_repairs_total', help: 'Repair passes that created, started or removed containers, by service.', labelNames: ['service'] }),
      failures: ctx.metrics.counter({ name: 'berth_reconciler_repair_failures_total', help: 'Repairs that failed, by service.', labelNames: ['service'] })
    }
  })
  if (repairs !== undefined) {
    reconciler.repairFailure = service => repairs.failure(service)
    ctx.schedule.every('repair', config.repair_interval_secs * 1000, async () => { await repairs.pass() })
  }

  ctx.http('control', leaderRoutes(ctx.useOptional('cluster'), reconcilerRoutes({
    reconciler,
    jobs,
    tokens: ctx.use('tokens'),
    defaultTail: config.logs_tail,
    stopping: ctx.stopping,
    reload: { request: async by => await requestReload(state, ctx.restart, by), last: () => state.lastReload() },
    clusterInfo: async () => await clusterInfo(state, { name: nodeName, address: ctx.address('control'), instance: config.instance, cluster: '', runtime: docker })
  })), { prefix: '/api/v1' })
  // A command runs on the node whose API is asked (its containers): not forwarded to a leader.
  const tokens = ctx.use('tokens')
  ctx.http('control', execRoutes({
    reconciler, deployer: tokens.requireRole('deployer'), by: request => tokens.caller(request)?.name, visible: serviceVisibility(reconciler, tokens), stillValid: request => tokens.stillValid(request), log: ctx.log
  }), { prefix: '/api/v1', websocket: {} })
  ctx.schedule.every('liveness-refresh', LIVENESS_REFRESH_MS, refreshLiveness)
  ctx.schedule.every('jobs', JOB_TICK_MS, async () => { jobs.tick() })
  ctx.schedule.every('canaries', CANARY_TICK_MS, async () => { if (leading()) await judgeCanaries(state, reconciler, ctx.log) })
  const checkEngine = async (): Promise<void> => {
    try {
      const info = await docker.info()
      ctx.check('engine', { status: 'ok', reason: `${info.kind} ${info.version}` })
    } catch (err) {
      ctx.check('engine', err instanceof EngineUnavailable
        ? { status: 'down', reason: `the container engine does not answer (${err.message}); services cannot be deployed or repaired until it does` }
        : { status: 'degraded', reason: `the container engine answered with an error: ${(err as Error).message}` })
    }
  }
  ctx.schedule.every('engine-check', ENGINE_CHECK_MS, checkEngine)
  void ctx.track(checkEngine())
  // Job containers a server stopped mid-run left behind (their runs were recorded as nothing: they never finished here).
  void ctx.track(docker.removeJobLeftovers().then(n => { if (n > 0) ctx.log.info({ containers: n }, 'removed job containers left by an earlier run') }, () => undefined))
  // A reload restarted the server: every plugin runs again, now every service is redeployed.
  ctx.events.on('kernel.started', () => { if (leading()) void ctx.track(finishReload(state, reconciler)) })
  // Elected: what this master's engine runs is made to match the desired state at once; probing follows.
  cluster?.onLeadership(() => {
    void ctx.track(refreshLiveness()).catch((err: unknown) => { ctx.log.error({ err }, 'liveness refresh failed') })
    if (repairs !== undefined && leading()) void ctx.track(repairs.pass()).catch((err: unknown) => { ctx.log.error({ err }, 'repair after the election failed') })
  })
  return {
    reconciler, liveness, repairs, refreshLiveness, traffic, node: { name: nodeName, id: async () => await state.nodeId() }, engine: docker,
    servicesDir: resolve(ctx.cwd, config.services_dir),
    changedElsewhere: services => { ctx.events.emit('reconciler.changed', { services }) }
  }
}
