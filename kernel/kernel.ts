// The kernel: load plugins in dependency order, then setup → listen → start, each phase of each plugin
// under a deadline; stop in reverse, once, after any start in progress, draining requests and tracked
// work before the store closes. It serves /api/v1/health and /metrics on its own control listener.
import type { Static, TObject } from '@sinclair/typebox'
import type { FastifyPluginAsync } from 'fastify'
import type { Logger } from 'pino'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { Acceptors } from './acceptors.js'
import { raiseDescriptorLimit } from './connection-limits.js'
import { loadConfig, type LoadedConfig } from './config.js'
import { Conflict, PluginLoadError, StartupError, messageOf } from './errors.js'
import { EventBus, ScopedEvents } from './events.js'
import { Listener } from './http.js'
import { KERNEL_OWNER } from './listeners.js'
import { discoverPlugins, orderPlugins } from './loader.js'
import { createLogger } from './log.js'
import { exposeAll, MetricSet, processMetrics, type Exposition, type PluginMetrics } from './metrics.js'
import { VERSION } from './paths.js'
import type { AnyPlugin, HealthCheck, HealthDetails, PluginContext, PluginState, Services } from './plugin.js'
import { Scheduler, ScopedScheduler } from './scheduler.js'
import { installStorageFaultHandler } from './storage-fault.js'
import { Store } from './store.js'
import { OutboundClient } from './outbound.js'

export interface KernelOptions {
  /** Working directory; relative paths in config resolve against it. Default: process.cwd(). */
  cwd?: string
  /** cluster.toml to read. Default: `<cwd>/cluster.toml` when it exists. */
  configFile?: string
  /** Raw config sections instead of a file (embedding, tests). */
  config?: Record<string, unknown>
  /** Environment for overrides. Default: process.env. */
  env?: NodeJS.ProcessEnv
  /** Plugin definitions. Default: every folder under plugins/. */
  plugins?: readonly AnyPlugin[]
  /** Logger. Default: pino at `[server].log_level` on standard output. */
  logger?: Logger
  /**
   * Listening sockets owned by whoever may restart this kernel (host.ts): the kernel takes its
   * connections from them and leaves them bound when it stops. Default: its own, closed at stop.
   */
  acceptors?: Acceptors
  /** How `ctx.restart()` restarts the server (host.ts); without it the kernel cannot restart itself. */
  restart?: () => Promise<void>
}

export type KernelState = 'created' | 'starting' | 'running' | 'stopping' | 'stopped' | 'failed'

export interface HealthReport {
  /**
   * `ok`: every plugin runs and every check is ok; `degraded`: something is not (a plugin failed, a
   * dependency is unreachable, the store refuses writes) while the rest serves; `down`: no plugin runs.
   */
  status: 'ok' | 'starting' | 'degraded' | 'down' | 'stopping'
  version: string
  uptime_seconds: number
  /** The kernel's own dependencies: `storage` (the state directory's store). */
  checks: Record<string, HealthCheck>
  plugins: Record<string, { version: string, state: PluginState, details?: HealthDetails, checks?: Record<string, HealthCheck> }>
}

/** How often a store that refuses writes tries again (and checks its size limit). */
const STORAGE_CHECK_MS = 5000

/** The context of a plugin whose config type has been erased. */
type AnyContext = PluginContext<Static<TObject>, Record<string, unknown>>
type Phase = 'setup' | 'start' | 'stop'

interface PluginSlot {
  readonly plugin: AnyPlugin
  state: PluginState
  ctx?: AnyContext
  service?: unknown
  events?: ScopedEvents
  schedule?: ScopedScheduler
  closers: Array<() => void | Promise<void>>
  startAttempted: boolean
  readonly metrics: MetricSet
  /** Promises handed to ctx.track (and scheduled runs) not yet settled. */
  readonly work: Set<Promise<unknown>>
  details?: HealthDetails
  readonly checks: Map<string, HealthCheck>
}

/** Read plugins and config, and return a kernel ready to start. Config errors are thrown here. */
export async function createKernel (options: KernelOptions = {}): Promise<Kernel> {
  const cwd = options.cwd ?? process.cwd()
  const env = options.env ?? process.env
  const available = options.plugins ?? await discoverPlugins()
  const defaultFile = join(cwd, 'cluster.toml')
  const file = options.config !== undefined ? undefined : options.configFile ?? (existsSync(defaultFile) ? defaultFile : undefined)
  const config = loadConfig({ file, raw: options.config, env, cwd }, available)
  const plugins = orderPlugins(available, { enabled: config.server.plugins, disabled: config.server.disable })
  const log = options.logger ?? createLogger({ level: config.server.log_level })
  return new Kernel(config, plugins, log, cwd, { acceptors: options.acceptors, restart: options.restart })
}

const seconds = (ms: number): string => `${ms / 1000} s`

export class Kernel {
  readonly config: LoadedConfig
  readonly log: Logger
  readonly cwd: string
  readonly events: EventBus
  #state: KernelState = 'created'
  #startedAt = 0
  #starting: Promise<void> | undefined
  #stopping: Promise<void> | undefined
  #shutdownDone: Promise<void> | undefined
  readonly #abort = new AbortController()
  /** Stopping for a restart in place (see stop). */
  #restarting = false
  #outbound: OutboundClient | undefined
  #healthCache: HealthReport | undefined
  readonly #slots: PluginSlot[]
  readonly #scheduler: Scheduler
  readonly #listeners = new Map<string, Listener>()
  readonly #process = processMetrics()
  readonly #listenerMetrics = new Map<string, MetricSet>()
  /** Failed scheduled runs by job (`<plugin>.<job>`). */
  readonly #jobFailures = new Map<string, number>()
  /** What the plugins told the person at the terminal (ctx.note), in order. */
  readonly #notes: string[] = []
  #store: Store | undefined
  readonly #plugins: readonly AnyPlugin[]
  readonly #host: Pick<KernelOptions, 'acceptors' | 'restart'>
  /** Where the listeners take their connections: the host's, or the kernel's own (closed at stop). */
  readonly #acceptors: Acceptors

  constructor (config: LoadedConfig, plugins: readonly AnyPlugin[], log: Logger, cwd: string, host: Pick<KernelOptions, 'acceptors' | 'restart'> = {}) {
    this.config = config
    this.log = log
    this.cwd = cwd
    this.#plugins = plugins
    this.#host = host
    this.#acceptors = host.acceptors ?? new Acceptors()
    this.events = new EventBus(log)
    this.#slots = plugins.map(plugin => ({ plugin, state: 'loaded', closers: [], startAttempted: false, metrics: new MetricSet(), work: new Set(), checks: new Map() }))
    this.#scheduler = new Scheduler(log, job => { this.#jobFailures.set(job, (this.#jobFailures.get(job) ?? 0) + 1) })
  }

  get state (): KernelState {
    return this.#state
  }

  /** A kernel not yet started with this one's configuration, plugins, logger and host (a restart that falls back). */
  renewed (): Kernel {
    return new Kernel(this.config, this.#plugins, this.log, this.cwd, this.#host)
  }

  /** Names of the listeners open now. */
  get listenerNames (): string[] {
    return [...this.#listeners.values()].filter(listener => listener.url !== undefined).map(listener => listener.name)
  }

  /** The plugins' notes for the person at the terminal (ctx.note), in the order they were made. */
  get notes (): readonly string[] {
    return this.#notes
  }

  /** Names of the plugins this kernel runs, dependencies first. */
  get pluginNames (): string[] {
    return this.#slots.map(slot => slot.plugin.name)
  }

  get #timeoutMs (): number {
    return this.config.server.plugin_timeout_ms
  }

  /** Set up every plugin, open the listeners, start every plugin, then the scheduler. */
  async start (): Promise<void> {
    if (this.#state !== 'created') throw new StartupError(`kernel cannot start from state "${this.#state}"`)
    this.#setKernelState('starting')
    this.#startedAt = Date.now()
    this.#starting = this.#startAll()
    try {
      await this.#starting
    } finally {
      this.#starting = undefined
    }
  }

  async #startAll (): Promise<void> {
    try {
      this.#store = Store.open(this.config.stateDir, { limitBytes: this.config.server.store_limit_mb * 1048576 })
      installStorageFaultHandler()
      this.#store.monitor.onChange = reason => {
        this.#healthCache = undefined
        if (reason !== undefined) this.log.error({ reason }, 'the store refuses writes (507) until it can take them again; reads go on')
        else this.log.info('the store takes writes again')
      }
      this.#store.monitor.start(STORAGE_CHECK_MS, err => { this.log.error({ err }, 'the storage check failed') })
      await this.#store.monitor.check()
      this.#createListeners()
      for (const slot of this.#slots) {
        this.#refuseIfStopping()
        await this.#setup(slot)
      }
      for (const listener of this.#listeners.values()) {
        if (listener.app !== undefined) await this.#withinDeadline(listener.app.ready(), `the ${listener.name} listener's routes did not finish registering`)
      }
      const { limits, problem } = raiseDescriptorLimit()
      if (problem !== undefined) this.log.warn(problem)
      this.#acceptors.limits.configure({ perAddress: this.config.server.connections_per_address, total: this.config.server.connections_total }, limits)
      this.log.debug({ descriptors: limits, connections: this.#acceptors.limits.settings }, 'connection limits')
      const urls: Record<string, string> = {}
      for (const listener of this.#listeners.values()) {
        if (listener.used) urls[listener.name] = (await listener.listen(this.#acceptors)).href
      }
      for (const slot of this.#slots) {
        this.#refuseIfStopping()
        slot.startAttempted = true
        this.#setState(slot, 'starting')
        await this.#phase(slot, 'start', async () => { await slot.plugin.start?.(slot.ctx as AnyContext, slot.service) })
        this.#setState(slot, 'running')
      }
      this.#refuseIfStopping()
      this.#scheduler.start()
      this.#setKernelState('running')
      this.events.emit('kernel.started', { listeners: urls })
    } catch (err) {
      this.#setKernelState('failed')
      await this.#shutdown()
      throw err instanceof StartupError || err instanceof PluginLoadError ? err : new StartupError(messageOf(err), { cause: err })
    }
  }

  #refuseIfStopping (): void {
    if (this.#abort.signal.aborted) throw new StartupError('the kernel was stopped while starting')
  }

  /**
   * Stop everything in reverse order, after any start in progress. Safe to call any number of times,
   * from any state. `restarting`: a new kernel follows in this process (plugins see `ctx.restarting`).
   */
  async stop (options: { restarting?: boolean } = {}): Promise<void> {
    if (options.restarting === true) this.#restarting = true
    if (this.#state === 'created') {
      this.#setKernelState('stopped')
      return
    }
    this.#stopping ??= (async () => {
      if (this.#state === 'running') this.events.emit('kernel.stopping', {})
      this.#abort.abort()
      await this.#starting?.catch(() => {})
      this.#setKernelState('stopping')
      await this.#shutdown()
      this.#setKernelState('stopped')
    })()
    await this.#stopping
  }

  /** The URL a listener is bound to (only while running). */
  url (listener: string): URL {
    const url = this.#listeners.get(listener)?.url
    if (url === undefined) throw new Error(`the ${listener} listener is not open`)
    return url
  }

  /** The routes a fastify listener serves (method and URL pattern), to enumerate its API. */
  routes (listener: string): ReadonlyArray<{ method: string, url: string }> {
    const target = this.#listeners.get(listener)
    if (target === undefined) throw new Error(`no ${listener} listener`)
    return target.routes
  }

  /** A plugin's service, as `ctx.use()` would return it. */
  service<K extends keyof Services> (name: K): Services[K] {
    const slot = this.#slots.find(s => s.plugin.name === name)
    if (slot === undefined) throw new Error(`plugin "${String(name)}" is not loaded`)
    return slot.service as Services[K]
  }

  /** Check the store now: its size limit, and while it refuses writes, whether it takes them again (also every few seconds). */
  async checkStorage (): Promise<void> {
    await this.#store?.monitor.check()
  }

  /** The health report; rebuilt only when a state or the uptime second changed (it is polled often). */
  health (): HealthReport {
    const uptime = Math.round((Date.now() - this.#startedAt) / 1000)
    const storage = this.#store?.monitor.state() ?? { status: 'ok' as const }
    if (this.#healthCache?.uptime_seconds === uptime && this.#healthCache.checks.storage.status === storage.status) return this.#healthCache
    const plugins: HealthReport['plugins'] = {}
    let allWell = storage.status === 'ok'
    for (const slot of this.#slots) {
      const checks = slot.checks.size > 0 ? Object.fromEntries(slot.checks) : undefined
      plugins[slot.plugin.name] = { version: slot.plugin.version, state: slot.state, ...(slot.details !== undefined ? { details: slot.details } : {}), ...(checks !== undefined ? { checks } : {}) }
      allWell &&= slot.state === 'running' && [...slot.checks.values()].every(check => check.status === 'ok')
    }
    const running = this.#slots.filter(slot => slot.state === 'running').length
    const status = this.#state === 'running'
      ? (running === 0 && this.#slots.length > 0 ? 'down' : allWell ? 'ok' : 'degraded')
      : this.#state === 'starting' || this.#state === 'created' ? 'starting' : 'stopping'
    this.#healthCache = { status, version: VERSION, uptime_seconds: uptime, checks: { storage }, plugins }
    return this.#healthCache
  }

  /** The metrics a listener exposes: process metrics, its kernel metrics, and those of the plugins it serves. */
  async exposition (listener: string): Promise<Exposition> {
    const own = this.#listenerMetrics.get(listener)
    if (own === undefined) throw new Error(`no listener named "${listener}"`)
    const served = this.#slots.filter(slot => this.#homeOf(slot.plugin.name) === listener || this.#listeners.get(listener)?.users.has(slot.plugin.name) === true)
    return await exposeAll([this.#process.registry, own.registry, ...served.map(slot => slot.metrics.registry)])
  }

  /** The listener whose exposition shows a plugin's metrics (see #listenerOf), else control. */
  #homeOf (plugin: string): string {
    return this.#listenerOf(plugin) ?? 'control'
  }

  /**
   * The listener a plugin declares, else the first it uses, else, for a plugin that serves nothing
   * (it builds on another's product), that of the first plugin it depends on that has one.
   */
  #listenerOf (plugin: string): string | undefined {
    const listeners = [...this.#listeners.values()]
    const own = listeners.find(l => l.declaration.owner === plugin) ?? listeners.find(l => l.users.has(plugin))
    if (own !== undefined) return own.name
    for (const dependency of this.#slots.find(slot => slot.plugin.name === plugin)?.plugin.dependsOn ?? []) {
      const found = this.#listenerOf(dependency)
      if (found !== undefined) return found
    }
    return undefined
  }

  #setKernelState (state: KernelState): void {
    this.#state = state
    this.#healthCache = undefined
  }

  /** Listeners of the kernel and of the plugins that run, each with its kernel metrics. */
  #createListeners (): void {
    const running = new Set(this.pluginNames)
    for (const declaration of this.config.listeners.values()) {
      if (declaration.owner !== KERNEL_OWNER && !running.has(declaration.owner)) continue
      const listener = new Listener(declaration, this.config.server.listeners[declaration.name], this.log, { accessLog: this.config.server.access_log, idleGraceMs: this.config.server.stop_idle_grace_ms })
      this.#listeners.set(declaration.name, listener)
      this.#listenerMetrics.set(declaration.name, this.#kernelMetricsOf(listener))
    }
    const control = this.#listeners.get('control') as Listener
    control.mount(KERNEL_OWNER, this.#kernelRoutes)
  }

  #kernelMetricsOf (listener: Listener): MetricSet {
    const set = new MetricSet()
    const slots = this.#slots
    const shown = (plugin: string): boolean => this.#homeOf(plugin) === listener.name || listener.users.has(plugin)
    const failures = this.#jobFailures
    set.counter({
      name: 'berth_http_requests_total',
      help: 'HTTP responses sent, by listener and status code.',
      labelNames: ['listener', 'status'],
      collect () {
        this.reset()
        for (const [status, count] of listener.responses) this.labels(listener.name, String(status)).inc(count)
      }
    })
    set.gauge({
      name: 'berth_plugin_up',
      help: '1 when the plugin is running.',
      labelNames: ['plugin'],
      collect () {
        this.reset()
        for (const slot of slots) if (shown(slot.plugin.name)) this.labels(slot.plugin.name).set(slot.state === 'running' ? 1 : 0)
      }
    })
    if (listener.name === 'control') {
      const limits = this.#acceptors.limits
      set.counter({
        name: 'berth_connections_refused_total',
        help: 'Connections closed at once: their client address held connections_per_address, or the server connections_total.',
        labelNames: ['cap'],
        collect () {
          this.reset()
          for (const [cap, count] of Object.entries(limits.refused)) this.labels(cap).inc(count)
        }
      })
      set.gauge({ name: 'berth_connections_open', help: 'Connections open on all listeners.', collect () { this.set(limits.total) } })
    }
    set.counter({
      name: 'berth_schedule_failures_total',
      help: 'Scheduled job runs that failed.',
      labelNames: ['job'],
      collect () {
        this.reset()
        for (const [job, count] of failures) if (shown(job.split('.')[0])) this.labels(job).inc(count)
      }
    })
    return set
  }

  readonly #kernelRoutes: FastifyPluginAsync = async (app) => {
    // Handlers return their payload rather than awaiting reply.send(): a reply is thenable, and awaiting
    // it waits for the response to finish, which costs listeners on every request.
    app.get('/api/v1/health', async (_request, reply) => {
      const report = this.health()
      reply.code(report.status === 'ok' || report.status === 'degraded' ? 200 : 503)
      return report
    })
    // For supervisors: the process answers. Whatever else is wrong, restarting it would not help.
    app.get('/api/v1/health/live', async () => ({ status: 'alive' }))
    app.get('/metrics', async (_request, reply) => {
      const { contentType, body } = await this.exposition('control')
      reply.type(contentType)
      return body
    })
  }

  async #setup (slot: PluginSlot): Promise<void> {
    const { plugin } = slot
    slot.events = new ScopedEvents(this.events)
    slot.schedule = new ScopedScheduler(this.#scheduler, plugin.name, async run => { await this.#track(slot, run) })
    slot.ctx = this.#context(slot)
    this.#setState(slot, 'setting-up')
    slot.service = await this.#phase(slot, 'setup', async () => await plugin.setup?.(slot.ctx as AnyContext))
    this.#setState(slot, 'ready')
  }

  /** Run a phase of a plugin under the deadline; a failure or a timeout names the plugin and the phase. */
  async #phase<T> (slot: PluginSlot, phase: Phase, run: () => Promise<T>): Promise<T> {
    try {
      return await this.#withinDeadline(run(), `plugin "${slot.plugin.name}" did not finish ${phase}`)
    } catch (err) {
      this.#setState(slot, 'failed')
      if (err instanceof DeadlineExceeded) throw new StartupError(err.message)
      throw new StartupError(`plugin "${slot.plugin.name}" failed during ${phase}: ${messageOf(err)}`, { cause: err })
    }
  }

  async #withinDeadline<T> (work: PromiseLike<T>, what: string): Promise<T> {
    let timer: NodeJS.Timeout | undefined
    const deadline = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => { reject(new DeadlineExceeded(`${what} within ${seconds(this.#timeoutMs)} (set [server].plugin_timeout_ms)`)) }, this.#timeoutMs)
    })
    try {
      return await Promise.race([work, deadline])
    } finally {
      clearTimeout(timer)
    }
  }

  async #track<T> (slot: PluginSlot, work: Promise<T>): Promise<T> {
    slot.work.add(work)
    try {
      return await work
    } finally {
      slot.work.delete(work)
    }
  }

  #context (slot: PluginSlot): AnyContext {
    const { plugin } = slot
    const metrics: PluginMetrics = {
      counter: c => slot.metrics.counter(c),
      gauge: c => slot.metrics.gauge(c),
      histogram: c => slot.metrics.histogram(c),
      expose: async () => await this.exposition(this.#homeOf(plugin.name))
    }
    const duringSetup = (what: string): void => {
      if (slot.state !== 'setting-up') throw new Error(`plugin "${plugin.name}": ${what} only during setup`)
    }
    const restarting = (): boolean => this.#restarting
    const granted = (): void => {
      if (plugin.copiesAllState !== true) throw new Error(`plugin "${plugin.name}" reads every plugin's state without declaring copiesAllState`)
    }
    return {
      name: plugin.name,
      config: this.config.sections.get(plugin.name) as Static<TObject>,
      sections: Object.fromEntries(Object.keys(plugin.sections ?? {}).map(section => [section, this.config.sections.get(section)])),
      log: this.log.child({ plugin: plugin.name }),
      store: (this.#store as Store).forPlugin(plugin.name),
      events: slot.events as ScopedEvents,
      schedule: slot.schedule as ScopedScheduler,
      metrics,
      stateDir: this.config.stateDir,
      cwd: this.cwd,
      production: this.config.server.environment === 'production',
      stopping: this.#abort.signal,
      get restarting () { return restarting() },
      outbound: this.#outboundClient(),
      http: (listener, routes, options) => {
        duringSetup('routes can be mounted')
        this.#listenerFor(plugin, listener).mount(plugin.name, routes, options)
      },
      serve: (listener, server, options) => {
        duringSetup('a server can be handed to a listener')
        const target = this.#listenerFor(plugin, listener)
        if (target.declaration.owner !== plugin.name) throw new Error(`plugin "${plugin.name}": only the owner of the ${listener} listener may serve it`)
        target.serve(plugin.name, server, options)
      },
      address: listener => this.url(listener),
      bound: listener => {
        const bound = this.#listeners.get(listener)?.bound
        if (bound === undefined) throw new Error(`the ${listener} listener is not open`)
        return bound
      },
      listenerPorts: () => this.listenerNames.map(name => Number(this.url(name).port)),
      restart: async () => {
        if (this.#host.restart === undefined) throw new Conflict('this server cannot restart itself: it runs without the host of `berth server`')
        await this.#host.restart()
      },
      use: name => {
        if (!(plugin.dependsOn ?? []).includes(name)) {
          throw new PluginLoadError(`plugin "${plugin.name}" uses "${name}" without naming it in dependsOn`)
        }
        return this.service(name)
      },
      useOptional: name => {
        if (!(plugin.optionalDependsOn ?? []).includes(name)) {
          throw new PluginLoadError(`plugin "${plugin.name}" uses "${name}" without naming it in optionalDependsOn`)
        }
        return this.#slots.find(s => s.plugin.name === name)?.service as never
      },
      track: async work => await this.#track(slot, work),
      report: details => {
        slot.details = { ...details }
        this.#healthCache = undefined
      },
      check: (name, check) => {
        const before = slot.checks.get(name)
        const changed = before?.status !== check.status || before.reason !== check.reason
        slot.checks.set(name, { ...check, since: changed ? new Date().toISOString() : before.since })
        if (changed) this.#healthCache = undefined
      },
      note: text => { this.#notes.push(text) },
      onClose: fn => { slot.closers.push(fn) },
      allState: {
        plugins: () => { granted(); return (this.#store as Store).pluginsWithData() },
        backup: async (name, path) => { granted(); return await (this.#store as Store).backupPlugin(name, path) }
      }
    }
  }

  /** A listener the plugin may use: the kernel's, its own, or one of a plugin it depends on. */
  #listenerFor (plugin: AnyPlugin, name: string): Listener {
    const target = this.#listeners.get(name)
    const declared = this.config.listeners.get(name)
    if (target === undefined || declared === undefined) throw new Error(`plugin "${plugin.name}": unknown listener "${name}"`)
    const owner = declared.owner
    if (owner !== KERNEL_OWNER && owner !== plugin.name && !(plugin.dependsOn ?? []).includes(owner)) {
      throw new Error(`plugin "${plugin.name}": the ${name} listener belongs to plugin "${owner}", which "${plugin.name}" does not depend on`)
    }
    return target
  }

  #setState (slot: PluginSlot, state: PluginState): void {
    slot.state = state
    this.#healthCache = undefined
    this.events.emit('plugin.state', { plugin: slot.plugin.name, state })
  }

  /** Once: stop jobs, drain and close listeners, stop plugins in reverse, close the store; log what fails and go on. */
  async #shutdown (): Promise<void> {
    this.#shutdownDone ??= (async () => {
      this.#abort.abort()
      this.#scheduler.stop()
      // Its own sockets stop accepting now; a host's stay bound for the kernel that follows.
      if (this.#host.acceptors === undefined) this.#acceptors.closeAll()
      await Promise.all([...this.#listeners.values()].map(async listener => {
        await listener.close(this.#timeoutMs).catch((err: unknown) => { this.log.error({ err, listener: listener.name }, 'closing listener failed') })
      }))
      this.#listeners.clear()
      for (const slot of [...this.#slots].reverse()) await this.#teardown(slot)
      // A store whose disk failed may never finish its last writes: the stop does not wait on it past the deadline.
      await this.#withinDeadline(this.#store?.close() ?? Promise.resolve(), 'the store did not close')
        .catch((err: unknown) => { this.log.error({ err: messageOf(err) }, 'closing the store failed; stopping without it') })
      this.#store = undefined
      await this.#outbound?.close()
    })()
    await this.#shutdownDone
  }

  #outboundClient (): OutboundClient {
    this.#outbound ??= new OutboundClient({ allow: this.config.server.outbound_allow })
    return this.#outbound
  }

  async #teardown (slot: PluginSlot): Promise<void> {
    const ctx = slot.ctx
    if (ctx === undefined) return
    const log = ctx.log
    const name = slot.plugin.name
    /** Wait for `work` up to the deadline; a failure or a timeout is logged and the teardown goes on. */
    const bounded = async (work: () => unknown, late: string, failed: string): Promise<void> => {
      try {
        await this.#withinDeadline(Promise.resolve().then(work), `plugin "${name}" did not finish ${late}`)
      } catch (err) {
        if (err instanceof DeadlineExceeded) log.error(err.message)
        else log.error({ err }, failed)
      }
    }
    if (slot.work.size > 0) await bounded(async () => await Promise.allSettled([...slot.work]), 'its work in flight', 'work in flight failed')
    if (slot.startAttempted) {
      if (slot.state !== 'failed') this.#setState(slot, 'stopping')
      await bounded(async () => { await slot.plugin.stop?.(ctx, slot.service) }, 'stop', 'plugin stop failed')
    }
    slot.schedule?.close()
    slot.events?.close()
    for (const close of slot.closers.splice(0).reverse()) await bounded(close, 'cleanup', 'plugin cleanup failed')
    if (slot.state !== 'failed') this.#setState(slot, 'stopped')
    slot.ctx = undefined
    slot.startAttempted = false
  }
}

/** A phase that ran past `[server].plugin_timeout_ms`. */
class DeadlineExceeded extends Error {}
