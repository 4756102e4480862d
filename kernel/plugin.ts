// The plugin contract: definePlugin() and the types of a plugin definition and of the context the
// kernel hands it. A definition is a plain value the kernel reads before running any of it; reading
// it loads nothing heavy (schemas are built on demand), so every `berth` command can read them all.
import type { Server } from 'node:net'
import type { Static, TObject, Type } from '@sinclair/typebox'
import type { FastifyPluginAsync } from 'fastify'
import type { Logger } from 'pino'
import type { CliRegistry } from './cli/cli-registry.js'
import type { ScopedEvents } from './events.js'
import type { ListenerDeclaration } from './listeners.js'
import type { OutboundClient } from './outbound.js'
import type { PluginMetrics } from './metrics.js'
import type { ScopedScheduler } from './scheduler.js'
import type { BackupSummary, PluginStore } from './store.js'

/**
 * The services plugins offer each other, by plugin name. A plugin that exports a service adds itself
 * by declaration merging, so `ctx.use('name')` is checked at compile time:
 *   declare module '../../kernel/index.js' { interface Services { greeter: Greeter } }
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface Services {}

export type PluginState = 'loaded' | 'setting-up' | 'ready' | 'starting' | 'running' | 'stopping' | 'stopped' | 'failed'

/** TypeBox's builder: a schema function receives it, so a definition never imports TypeBox itself. */
export type TypeBuilder = typeof Type

/** A config section's schema, built when the server validates its configuration (never by CLI commands). */
export type SectionSchema<S extends TObject = TObject> = (type: TypeBuilder) => S

/** The values of the extra sections a plugin reads, by section name. */
export type SectionValues<X extends Record<string, TObject>> = { readonly [K in keyof X]: Static<X[K]> }

/** Short facts a plugin reports in `GET /api/v1/health` (which implementation runs, and the like). */
export type HealthDetails = Readonly<Record<string, string | number | boolean>>

/** One thing a plugin depends on, as the health report shows it: `down` when it cannot be used at all. */
export interface HealthCheck {
  status: 'ok' | 'degraded' | 'down'
  /** Why, when not ok: what failed and what it means (`the database at db:5432 is unreachable: …`). */
  reason?: string
  /** When it last changed, ISO 8601. */
  since?: string
}

export interface ServeOptions {
  /**
   * Bind the address with SO_REUSEPORT (Linux): the owner's worker threads may bind the same address
   * with `reusePort` too, and the system spreads new connections over every socket bound to it.
   */
  reusePort?: boolean
}

export interface RouteOptions {
  /** Path prefix for every route the function registers, e.g. `/api/v1`. */
  prefix?: string
  /**
   * How the `{"error": "...", "code": "..."}` body of every failure under `prefix` is encoded, instead of JSON: the
   * errors of these routes, of unknown routes under the prefix, and of requests node refuses before
   * routing (malformed, headers too large) when their request line can be read. Needs `prefix`.
   */
  errors?: ErrorFormat
  /**
   * The routes include WebSocket routes (`wsHandler`, @fastify/websocket): the listener registers the
   * WebSocket support once for every plugin that asks, and calls `preClose` when it begins to close
   * (before its remaining WebSockets are closed with 1001, and before requests in flight are drained).
   */
  websocket?: { preClose?: () => void }
}

/** The body of every error answer: the message for people, the stable code for programs. */
export interface ErrorBody {
  error: string
  code: string
}

/** An encoding of error bodies, such as CBOR for an API that speaks CBOR. */
export interface ErrorFormat {
  /** The Content-Type of error answers. */
  type: string
  encode(body: ErrorBody): string | Uint8Array
}

export interface PluginContext<C = unknown, X extends Record<string, unknown> = Record<string, unknown>> {
  /** The plugin's name, as in its definition. */
  readonly name: string
  /** The plugin's config section `[name]`, validated against its schema with defaults filled in. */
  readonly config: C
  /** The other sections the plugin declared in `sections`, validated the same way. */
  readonly sections: X
  /** A pino logger bound to `{ plugin: name }`. */
  readonly log: Logger
  /** Named LMDB databases private to this plugin, in the kernel's one environment. */
  readonly store: PluginStore
  /** The in-process event bus; subscriptions made here end when the plugin stops. */
  readonly events: ScopedEvents
  /** Cron (six fields) and interval jobs; they run only while the kernel runs. */
  readonly schedule: ScopedScheduler
  /** Counters, gauges and histograms of this plugin, exposed on the listeners it serves. */
  readonly metrics: PluginMetrics
  /** The server's state directory (absolute). Files a plugin creates there must be 0600. */
  readonly stateDir: string
  /** The server's working directory (absolute): relative paths in config resolve against it. */
  readonly cwd: string
  /**
   * `[server].environment` (NODE_ENV) is `production`: a development aid (an embedded identity
   * provider, a fallback user) must refuse to start, naming its setting.
   */
  readonly production: boolean
  /** Aborted when the kernel begins to stop: end long-lived answers (streams) and cancel long work. */
  readonly stopping: AbortSignal
  /** True while the kernel stops to be followed by a new one in the same process (a restart in place, `berth reload`). */
  readonly restarting: boolean
  /** The one client for HTTP requests to destinations users give (`[server].outbound_allow`): see kernel/outbound.ts. */
  readonly outbound: OutboundClient
  /**
   * Mount routes on a fastify listener this plugin, a plugin it depends on, or the kernel (`control`)
   * declares. The function runs as an encapsulated fastify plugin: its hooks, parsers and decorators
   * stay inside it. Call this during setup only.
   */
  http(listener: string, routes: FastifyPluginAsync, options?: RouteOptions): void
  /**
   * Hand the server of a raw listener this plugin declares (node:http, node:https, node:tls or
   * node:net). The kernel binds it on the configured address after setup and closes it at stop.
   */
  serve(listener: string, server: Server, options?: ServeOptions): void
  /** The base URL a listener is bound to; available once the kernel has started listening. */
  address(listener: string): URL
  /** The host (as configured, `0.0.0.0` included) and port a listener is bound to, to bind it again with `reusePort`; once listening. */
  bound(listener: string): { host: string, port: number }
  /** The ports every open listener of this server is bound to (any plugin's): what nothing else on the host may take. */
  listenerPorts(): number[]
  /**
   * Restart the server in place: the configuration is read again (a bad one is refused here and
   * nothing changes), then, once the caller's current work has returned, every plugin is stopped and
   * a new kernel starts with the listeners still bound (connections arriving meanwhile wait). Rejects
   * with Conflict when the server runs without a host that can restart it, or a restart is under way.
   */
  restart(): Promise<void>
  /** The service of a plugin named in `dependsOn`. */
  use<K extends keyof Services>(name: K): Services[K]
  /**
   * The service of a plugin named in `optionalDependsOn`, or undefined when that plugin is not enabled.
   * Typed by the provider's `Services` entry when it is installed, else `unknown`: a plugin that must
   * build without the provider takes the service through a structural type of its own.
   */
  useOptional<K extends string>(name: K): (K extends keyof Services ? Services[K] : unknown) | undefined
  /**
   * Work that must finish before the plugin stops and the store closes (a deploy, a commit started
   * outside a request). Returns the same promise. The kernel waits for it up to the lifecycle deadline.
   */
  track<T>(work: Promise<T>): Promise<T>
  /** Replace the details this plugin shows in the health report. */
  report(details: HealthDetails): void
  /**
   * Set the state of one of the plugin's dependencies (`database`, `mail-server`) in the
   * health report; anything not ok makes the server `degraded`. The time it changed is kept.
   */
  check(name: string, check: HealthCheck): void
  /**
   * Tell the person who started the server how to use what this plugin serves (where to sign in, a
   * file to read, a password drawn for them): `berth server` shows the notes once after start, when a
   * terminal is attached. Notes are never logged.
   */
  note(text: string): void
  /** Register cleanup that runs when the plugin stops, even if setup failed half-way. */
  onClose(fn: () => void | Promise<void>): void
  /**
   * Every plugin's state, for a plugin that declares `copiesAllState` (the backup plugin): the names
   * of the plugins that have databases, and a copy of one plugin's databases to a file, as
   * `berth state backup` makes it. Any other plugin calling these gets an error.
   */
  readonly allState: {
    plugins(): string[]
    backup(plugin: string, path: string): Promise<BackupSummary>
  }
}

export interface PluginDefinition<S extends TObject = TObject, Svc = unknown, X extends Record<string, TObject> = Record<string, never>> {
  /** Unique name: also the config section `[name]` and the folder `plugins/<name>/`. */
  readonly name: string
  readonly version: string
  readonly description?: string
  /**
   * The product this plugin is part of, a name the plugins shipped together share: a product's
   * plugins can run in a process of their own (`BERTH_PLUGINS`) and be taken out together.
   */
  readonly product?: string
  /** Plugins that must be set up and started before this one (and stopped after it). */
  readonly dependsOn?: readonly string[]
  /** Plugins this one uses when they are enabled (set up and started first then), and does without otherwise. */
  readonly optionalDependsOn?: readonly string[]
  /** Schema of the `[name]` section, as a function of TypeBox's builder. Unknown keys are refused. */
  readonly config?: SectionSchema<S>
  /** Other top-level sections this plugin reads (`{ mail: type => type.Object(...) }`); one owner per section. */
  readonly sections?: { readonly [K in keyof X]: SectionSchema<X[K]> }
  /**
   * This plugin may copy every plugin's databases (`ctx.allState`): it crosses the products'
   * isolation, so it is granted only to a plugin that asks, and shown in its definition.
   */
  readonly copiesAllState?: boolean
  /** Environment variables that override keys of the section: `{ HELLO_API_KEY: 'api_key' }`. One owner per variable. */
  readonly env?: Readonly<Record<string, string>>
  /** Listeners this plugin owns: name, default port, fastify or raw. */
  readonly listeners?: readonly ListenerDeclaration[]
  /** Provision: open stores, mount routes, subscribe to events. Returns the plugin's service. */
  setup?(ctx: PluginContext<Static<S>, SectionValues<X>>): Svc | Promise<Svc>
  /** Begin background work. */
  start?(ctx: PluginContext<Static<S>, SectionValues<X>>, service: Svc): void | Promise<void>
  /** End background work. Called once per start, in reverse dependency order; must leave no handle open. */
  stop?(ctx: PluginContext<Static<S>, SectionValues<X>>, service: Svc): void | Promise<void>
  /** Add subcommands to the `berth` command. Keep their imports light: every command reads every definition. */
  commands?(cli: CliRegistry): void
}

const PLUGIN_BRAND = Symbol.for('berth.plugin')
export const NAME_PATTERN = /^[a-z][a-z0-9-]*$/

/** Declare a plugin. Types of the config and of the service flow from the schema and setup(). */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export function definePlugin<S extends TObject = TObject, Svc = void, X extends Record<string, TObject> = {}> (
  definition: PluginDefinition<S, Svc, X>
): PluginDefinition<S, Svc, X> {
  if (!NAME_PATTERN.test(definition.name)) {
    throw new TypeError(`plugin name "${definition.name}" must be lowercase letters, digits and dashes`)
  }
  return Object.freeze(Object.assign(Object.create(null) as object, definition, { [PLUGIN_BRAND]: true })) as PluginDefinition<S, Svc, X>
}

export function isPluginDefinition (value: unknown): value is PluginDefinition {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[PLUGIN_BRAND] === true
}

/** A definition whose config and service types have been erased, as the loader holds them. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyPlugin = PluginDefinition<TObject, any, any>
