// The plugin contract: definePlugin() and the types of a plugin definition and of the context the
// kernel hands it. A definition is a plain value; the kernel reads it before running any of it.
import type { Static, TObject } from '@sinclair/typebox'
import type { FastifyPluginAsync } from 'fastify'
import type { Logger } from 'pino'
import type { CliRegistry } from './cli-registry.js'
import type { ScopedEvents } from './events.js'
import type { PluginMetrics } from './metrics.js'
import type { ScopedScheduler } from './scheduler.js'
import type { PluginStore } from './store.js'

/**
 * The services plugins offer each other, by plugin name. A plugin that exports a service adds itself
 * by declaration merging, so `ctx.use('name')` is checked at compile time:
 *   declare module '../../kernel/index.js' { interface Services { greeter: Greeter } }
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface Services {}

/** The listeners plugins mount routes on; ports come from `[server.listeners.<name>]`. */
export const LISTENER_NAMES = ['control', 'telemetry', 'app'] as const
export type ListenerName = typeof LISTENER_NAMES[number]

export type PluginState = 'loaded' | 'setting-up' | 'ready' | 'starting' | 'running' | 'stopping' | 'stopped' | 'failed'

export interface RouteOptions {
  /** Path prefix for every route the function registers, e.g. `/api/v1`. */
  prefix?: string
}

export interface PluginContext<C = unknown> {
  /** The plugin's name, as in its definition. */
  readonly name: string
  /** The plugin's config section, validated against its schema with defaults filled in. */
  readonly config: C
  /** A pino logger bound to `{ plugin: name }`. */
  readonly log: Logger
  /** Named LMDB databases private to this plugin, in the kernel's one environment. */
  readonly store: PluginStore
  /** The in-process event bus; subscriptions made here end when the plugin stops. */
  readonly events: ScopedEvents
  /** Cron (six fields) and interval jobs; they run only while the kernel runs. */
  readonly schedule: ScopedScheduler
  /** Counters, gauges and histograms registered in the kernel's one registry. */
  readonly metrics: PluginMetrics
  /** The server's state directory (absolute). Files a plugin creates there must be 0600. */
  readonly stateDir: string
  /** The server's working directory (absolute): relative paths in config resolve against it. */
  readonly cwd: string
  /**
   * Mount routes on a listener. The function runs as an encapsulated fastify plugin: its hooks,
   * parsers and decorators stay inside it. Call this during setup only.
   */
  http(listener: ListenerName, routes: FastifyPluginAsync, options?: RouteOptions): void
  /** The base URL a listener is bound to; available once the kernel has started listening. */
  address(listener: ListenerName): URL
  /** The service of a plugin named in `dependsOn`. */
  use<K extends keyof Services>(name: K): Services[K]
  /** Register cleanup that runs when the plugin stops, even if setup failed half-way. */
  onClose(fn: () => void | Promise<void>): void
}

export interface PluginDefinition<S extends TObject = TObject, Svc = unknown> {
  /** Unique name: also the config section `[name]` and the folder `plugins/<name>/`. */
  readonly name: string
  readonly version: string
  readonly description?: string
  /** Plugins that must be set up and started before this one (and stopped after it). */
  readonly dependsOn?: readonly string[]
  /** TypeBox schema of the `[name]` section. Unknown keys are refused. */
  readonly config?: S
  /** Environment variables that override keys of the section: `{ INGEST_API_KEY: 'api_key' }`. */
  readonly env?: Readonly<Record<string, string>>
  /** Provision: open stores, mount routes, subscribe to events. Returns the plugin's service. */
  setup?(ctx: PluginContext<Static<S>>): Svc | Promise<Svc>
  /** Begin background work. */
  start?(ctx: PluginContext<Static<S>>, service: Svc): void | Promise<void>
  /** End background work. Called once per start, in reverse dependency order; must leave no handle open. */
  stop?(ctx: PluginContext<Static<S>>, service: Svc): void | Promise<void>
  /** Add subcommands to the `berth` command. */
  commands?(cli: CliRegistry): void
}

const PLUGIN_BRAND = Symbol.for('berth.plugin')

/** Declare a plugin. Types of the config and of the service flow from the schema and setup(). */
export function definePlugin<S extends TObject, Svc = void> (definition: PluginDefinition<S, Svc>): PluginDefinition<S, Svc> {
  if (!/^[a-z][a-z0-9-]*$/.test(definition.name)) {
    throw new TypeError(`plugin name "${definition.name}" must be lowercase letters, digits and dashes`)
  }
  return Object.freeze(Object.assign(Object.create(null) as object, definition, { [PLUGIN_BRAND]: true })) as PluginDefinition<S, Svc>
}

export function isPluginDefinition (value: unknown): value is PluginDefinition {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[PLUGIN_BRAND] === true
}

/** A definition whose config and service types have been erased, as the loader holds them. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyPlugin = PluginDefinition<TObject, any>
