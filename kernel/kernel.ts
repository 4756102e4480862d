// The kernel: load plugins in dependency order, then setup → listen → start; stop in reverse,
// idempotently, leaving no handle open. It also serves /api/v1/health and /metrics on the control listener.
import type { Static, TObject } from '@sinclair/typebox'
import type { FastifyPluginAsync } from 'fastify'
import type { Logger } from 'pino'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { loadConfig, type LoadedConfig } from './config.js'
import { PluginLoadError, StartupError, messageOf } from './errors.js'
import { EventBus, ScopedEvents } from './events.js'
import { Listener } from './http.js'
import { discoverPlugins, orderPlugins } from './loader.js'
import { createLogger } from './log.js'
import { KernelMetrics, type PluginMetrics } from './metrics.js'
import { VERSION } from './paths.js'
import { LISTENER_NAMES, type AnyPlugin, type ListenerName, type PluginContext, type PluginState, type Services } from './plugin.js'
import { Scheduler, ScopedScheduler } from './scheduler.js'
import { Store } from './store.js'

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
}

export type KernelState = 'created' | 'starting' | 'running' | 'stopping' | 'stopped' | 'failed'

export interface HealthReport {
  status: 'ok' | 'starting' | 'degraded' | 'stopping'
  version: string
  uptime_seconds: number
  plugins: Record<string, { version: string, state: PluginState }>
}

/** The context of a plugin whose config type has been erased. */
type AnyContext = PluginContext<Static<TObject>>

interface PluginSlot {
  readonly plugin: AnyPlugin
  state: PluginState
  ctx?: AnyContext
  service?: unknown
  events?: ScopedEvents
  schedule?: ScopedScheduler
  closers: Array<() => void | Promise<void>>
  startAttempted: boolean
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
  return new Kernel(config, plugins, log, cwd)
}

export class Kernel {
  readonly config: LoadedConfig
  readonly log: Logger
  readonly cwd: string
  readonly metrics = new KernelMetrics()
  readonly events: EventBus
  #state: KernelState = 'created'
  #startedAt = 0
  #stopping: Promise<void> | undefined
  #healthCache: HealthReport | undefined
  readonly #slots: PluginSlot[]
  readonly #scheduler: Scheduler
  readonly #listeners = new Map<ListenerName, Listener>()
  #store: Store | undefined
  readonly #pluginUp

  constructor (config: LoadedConfig, plugins: readonly AnyPlugin[], log: Logger, cwd: string) {
    this.config = config
    this.log = log
    this.cwd = cwd
    this.events = new EventBus(log)
    this.#slots = plugins.map(plugin => ({ plugin, state: 'loaded', closers: [], startAttempted: false }))
    const failures = this.metrics.counter({ name: 'berth_schedule_failures_total', help: 'Scheduled job runs that failed.', labelNames: ['job'] })
    this.#scheduler = new Scheduler(log, job => { failures.labels(job).inc() })
    this.#pluginUp = this.metrics.gauge({ name: 'berth_plugin_up', help: '1 when the plugin is running.', labelNames: ['plugin'] })
    const listeners = this.#listeners
    const reported = new Map<string, number>()
    this.metrics.counter({
      name: 'berth_http_requests_total',
      help: 'HTTP responses sent, by listener and status code.',
      labelNames: ['listener', 'status'],
      collect () {
        for (const listener of listeners.values()) {
          for (const [status, count] of listener.responses) {
            const key = `${listener.name} ${status}`
            const delta = count - (reported.get(key) ?? 0)
            if (delta > 0) this.labels(listener.name, String(status)).inc(delta)
            reported.set(key, count)
          }
        }
      }
    })
  }

  get state (): KernelState {
    return this.#state
  }

  /** Names of the plugins this kernel runs, dependencies first. */
  get pluginNames (): string[] {
    return this.#slots.map(slot => slot.plugin.name)
  }

  /** Set up every plugin, open the listeners, start every plugin, then the scheduler. */
  async start (): Promise<void> {
    if (this.#state !== 'created') throw new StartupError(`kernel cannot start from state "${this.#state}"`)
    this.#setKernelState('starting')
    this.#startedAt = Date.now()
    try {
      this.#store = Store.open(this.config.stateDir)
      this.#createListeners()
      for (const slot of this.#slots) await this.#setup(slot)
      for (const listener of this.#listeners.values()) await listener.app.ready()
      const urls: Record<string, string> = {}
      for (const listener of this.#listeners.values()) {
        if (listener.mounted) urls[listener.name] = (await listener.listen()).href
      }
      for (const slot of this.#slots) {
        slot.startAttempted = true
        this.#setState(slot, 'starting')
        await this.#phase(slot, 'start', async () => { await slot.plugin.start?.(slot.ctx as AnyContext, slot.service) })
        this.#setState(slot, 'running')
      }
      this.#scheduler.start()
      this.#setKernelState('running')
      this.events.emit('kernel.started', { listeners: urls })
    } catch (err) {
      this.#setKernelState('failed')
      await this.#shutdown()
      throw err instanceof StartupError || err instanceof PluginLoadError ? err : new StartupError(messageOf(err), { cause: err })
    }
  }

  /** Stop everything in reverse order. Safe to call any number of times, from any state. */
  async stop (): Promise<void> {
    if (this.#state === 'created') {
      this.#setKernelState('stopped')
      return
    }
    this.#stopping ??= (async () => {
      if (this.#state === 'running') this.events.emit('kernel.stopping', {})
      this.#setKernelState('stopping')
      await this.#shutdown()
      this.#setKernelState('stopped')
    })()
    await this.#stopping
  }

  /** The URL a listener is bound to (only while running). */
  url (listener: ListenerName): URL {
    const url = this.#listeners.get(listener)?.url
    if (url === undefined) throw new Error(`the ${listener} listener is not open`)
    return url
  }

  /** A plugin's service, as `ctx.use()` would return it. */
  service<K extends keyof Services> (name: K): Services[K] {
    const slot = this.#slots.find(s => s.plugin.name === name)
    if (slot === undefined) throw new Error(`plugin "${String(name)}" is not loaded`)
    return slot.service as Services[K]
  }

  /** The health report; rebuilt only when a state or the uptime second changed (it is polled often). */
  health (): HealthReport {
    const uptime = Math.round((Date.now() - this.#startedAt) / 1000)
    if (this.#healthCache?.uptime_seconds === uptime) return this.#healthCache
    const plugins: HealthReport['plugins'] = {}
    for (const slot of this.#slots) plugins[slot.plugin.name] = { version: slot.plugin.version, state: slot.state }
    const status = this.#state === 'running'
      ? (this.#slots.every(s => s.state === 'running') ? 'ok' : 'degraded')
      : this.#state === 'starting' || this.#state === 'created' ? 'starting' : 'stopping'
    this.#healthCache = { status, version: VERSION, uptime_seconds: uptime, plugins }
    return this.#healthCache
  }

  #setKernelState (state: KernelState): void {
    this.#state = state
    this.#healthCache = undefined
  }

  #createListeners (): void {
    for (const name of LISTENER_NAMES) {
      this.#listeners.set(name, new Listener(name, this.config.server.listeners[name], this.log, { accessLog: this.config.server.access_log }))
    }
    ;(this.#listeners.get('control') as Listener).mount('kernel', this.#kernelRoutes)
  }

  readonly #kernelRoutes: FastifyPluginAsync = async (app) => {
    // Handlers return their payload rather than awaiting reply.send(): a reply is thenable, and awaiting
    // it waits for the response to finish, which costs listeners on every request.
    app.get('/api/v1/health', async (_request, reply) => {
      const report = this.health()
      reply.code(report.status === 'ok' ? 200 : 503)
      return report
    })
    app.get('/metrics', async (_request, reply) => {
      const { contentType, body } = await this.metrics.expose()
      reply.type(contentType)
      return body
    })
  }

  async #setup (slot: PluginSlot): Promise<void> {
    const { plugin } = slot
    slot.events = new ScopedEvents(this.events)
    slot.schedule = new ScopedScheduler(this.#scheduler, plugin.name)
    slot.ctx = this.#context(slot)
    this.#setState(slot, 'setting-up')
    slot.service = await this.#phase(slot, 'setup', async () => await plugin.setup?.(slot.ctx as AnyContext))
    this.#setState(slot, 'ready')
  }

  async #phase<T> (slot: PluginSlot, phase: 'setup' | 'start', run: () => Promise<T>): Promise<T> {
    try {
      return await run()
    } catch (err) {
      this.#setState(slot, 'failed')
      throw new StartupError(`plugin "${slot.plugin.name}" failed during ${phase}: ${messageOf(err)}`, { cause: err })
    }
  }

  #context (slot: PluginSlot): AnyContext {
    const { plugin } = slot
    const metrics: PluginMetrics = {
      counter: c => this.metrics.counter(c),
      gauge: c => this.metrics.gauge(c),
      histogram: c => this.metrics.histogram(c),
      expose: async () => await this.metrics.expose()
    }
    return {
      name: plugin.name,
      config: this.config.sections.get(plugin.name) as Static<TObject>,
      log: this.log.child({ plugin: plugin.name }),
      store: (this.#store as Store).forPlugin(plugin.name),
      events: slot.events as ScopedEvents,
      schedule: slot.schedule as ScopedScheduler,
      metrics,
      stateDir: this.config.stateDir,
      cwd: this.cwd,
      http: (listener, routes, options) => {
        if (slot.state !== 'setting-up') throw new Error(`plugin "${plugin.name}": routes can only be mounted during setup`)
        const target = this.#listeners.get(listener)
        if (target === undefined) throw new Error(`plugin "${plugin.name}": unknown listener "${String(listener)}"`)
        target.mount(plugin.name, routes, options)
      },
      address: listener => this.url(listener),
      use: name => {
        if (!(plugin.dependsOn ?? []).includes(name)) {
          throw new PluginLoadError(`plugin "${plugin.name}" uses "${name}" without naming it in dependsOn`)
        }
        return this.service(name)
      },
      onClose: fn => { slot.closers.push(fn) }
    }
  }

  #setState (slot: PluginSlot, state: PluginState): void {
    slot.state = state
    this.#healthCache = undefined
    this.#pluginUp.labels(slot.plugin.name).set(state === 'running' ? 1 : 0)
    this.events.emit('plugin.state', { plugin: slot.plugin.name, state })
  }

  /** Close listeners, stop jobs, stop plugins in reverse, close the store; log what fails and go on. */
  async #shutdown (): Promise<void> {
    this.#scheduler.stop()
    for (const listener of this.#listeners.values()) {
      await listener.close().catch((err: unknown) => { this.log.error({ err, listener: listener.name }, 'closing listener failed') })
    }
    this.#listeners.clear()
    for (const slot of [...this.#slots].reverse()) await this.#teardown(slot)
    await this.#store?.close()
    this.#store = undefined
  }

  async #teardown (slot: PluginSlot): Promise<void> {
    if (slot.ctx === undefined) return
    const log = slot.ctx.log
    if (slot.startAttempted) {
      this.#setState(slot, 'stopping')
      try {
        await slot.plugin.stop?.(slot.ctx, slot.service)
      } catch (err) {
        log.error({ err }, 'plugin stop failed')
      }
    }
    slot.schedule?.close()
    slot.events?.close()
    for (const close of slot.closers.splice(0).reverse()) {
      try {
        await close()
      } catch (err) {
        log.error({ err }, 'plugin cleanup failed')
      }
    }
    if (slot.state !== 'failed') this.#setState(slot, 'stopped')
    slot.ctx = undefined
    slot.startAttempted = false
  }
}
