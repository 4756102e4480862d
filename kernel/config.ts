// Configuration: cluster.toml (TOML 1.0, smol-toml) plus environment overrides, validated section by
// section with TypeBox. Each section and each variable has one owner: the kernel ([server]) or the
// plugin that declares it. Every refusal names the file or variable and the key path, in one line.
import { resolve } from 'node:path'
import { Value, type ValueError } from '@sinclair/typebox/value'
import { ConfigError, PluginLoadError } from './errors.js'
import { declaredListeners, DEFAULT_HOST, DEFAULT_STATE_DIR, KERNEL_OWNER, portVariable, type OwnedListener } from './listeners.js'
import type { AnyPlugin } from './plugin.js'
import { cronProblem } from './scheduler.js'
import { Type, type TObject, type TProperties, type TSchema } from './schema.js'
import { readToml } from './toml.js'

const MIB = 1024 * 1024
export const DEFAULT_PLUGIN_TIMEOUT_MS = 30_000

export interface ListenerConfig {
  host: string
  port: number
  body_limit: number
  headers_timeout_ms: number
  request_timeout_ms: number
  idle_timeout_ms: number
}

function listenerSchema (listener: OwnedListener): TObject {
  const host = Type.String({ default: DEFAULT_HOST, description: 'Address to bind.' })
  const port = Type.Integer({ minimum: 0, maximum: 65535, default: listener.port, description: 'TCP port; 0 picks a free one.' })
  const bodyLimit = Type.Integer({ minimum: 1, default: MIB, description: 'Largest request body in bytes (413 beyond).' })
  const keys: TProperties = { host }
  if (listener.portKey === undefined) keys.port = port
  if (listener.kind === 'fastify') {
    keys.body_limit = bodyLimit
    keys.headers_timeout_ms = Type.Integer({ minimum: 1000, default: 20_000, description: 'A request whose head has not arrived within this is answered 408 and its connection closed.' })
    keys.request_timeout_ms = Type.Integer({ minimum: 1000, default: 120_000, description: 'A request (head and body) not received within this is answered 408 and its connection closed.' })
    keys.idle_timeout_ms = Type.Integer({ minimum: 100, default: 5000, description: 'A kept-alive connection idle this long is closed.' })
  }
  return Type.Object(keys, { additionalProperties: false, default: {} })
}

function serverSection (listeners: ReadonlyMap<string, OwnedListener>): TObject {
  return Type.Object({
    state_dir: Type.String({ default: DEFAULT_STATE_DIR, description: 'State directory (LMDB, pid, logs, keys), relative to the working directory.' }),
    environment: Type.String({ default: 'development', description: 'The deployment environment (NODE_ENV): "production" refuses development aids such as embedded identity providers.' }),
    log_level: Type.Union(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map(l => Type.Literal(l)), { default: 'info' }),
    access_log: Type.Boolean({ default: false, description: 'Log every HTTP request at info (off by default, as it costs throughput).' }),
    plugins: Type.Optional(Type.Array(Type.String(), { description: 'Plugins to run; absent means every plugin found.' })),
    disable: Type.Array(Type.String(), { default: [], description: 'Plugins not to run.' }),
    plugin_timeout_ms: Type.Integer({ minimum: 1, default: DEFAULT_PLUGIN_TIMEOUT_MS, description: 'Deadline of each plugin\'s setup, start and stop (and of draining its work at stop).' }),
    stop_idle_grace_ms: Type.Integer({ minimum: 0, default: 1000, description: 'At stop, a kept-alive connection idle this long is closed (a request its client is sending meanwhile is still answered).' }),
    connections_per_address: Type.Integer({ minimum: 1, default: 1024, description: 'Connections one client address may hold at once on all listeners together; more are closed at once.' }),
    connections_total: Type.Integer({ minimum: 0, default: 0, description: 'Connections on all listeners together; more are closed at once. 0: the descriptor limit less 1,024 kept for files, sockets plugins hold and outgoing calls.' }),
    store_limit_mb: Type.Integer({ minimum: 0, default: 0, description: 'Refuse writes (507) once the LMDB store holds this many MiB; reads go on. 0: no limit (the store grows as needed).' }),
    outbound_allow: Type.Array(Type.String({ pattern: '^[A-Za-z0-9.:_-]+(/\\d{1,3})?$' }), { default: [], description: 'Host names, addresses or CIDR ranges that destinations users give (alert rules, webhooks) may reach although they are loopback, private, link-local or reserved.' }),
    listeners: Type.Object(
      Object.fromEntries([...listeners.values()].map(listener => [listener.name, listenerSchema(listener)])),
      { additionalProperties: false, default: {} })
  }, { additionalProperties: false, default: {} })
}

export interface ServerConfig {
  state_dir: string
  environment: string
  log_level: string
  access_log: boolean
  plugins?: string[]
  disable: string[]
  plugin_timeout_ms: number
  store_limit_mb: number
  outbound_allow: string[]
  stop_idle_grace_ms: number
  connections_per_address: number
  connections_total: number
  /** Every declared listener's effective settings (a port kept in its owner's section is filled in). */
  listeners: Record<string, ListenerConfig>
}

/** Environment variables the kernel itself reads, and the `[server]` key each overrides. */
const SERVER_ENV: Readonly<Record<string, string>> = {
  BERTH_STATE_DIR: 'state_dir',
  NODE_ENV: 'environment',
  BERTH_LOG_LEVEL: 'log_level',
  BERTH_ACCESS_LOG: 'access_log',
  BERTH_PLUGINS: 'plugins',
  BERTH_PLUGIN_TIMEOUT_MS: 'plugin_timeout_ms'
}

/** Variables read by the CLI only: no plugin may claim them. */
const CLI_VARIABLES = ['BERTH_CONFIG', 'BERTH_URL', 'BERTH_TOKEN']

export interface ConfigSource {
  /** Path of cluster.toml; undefined means no file (defaults and environment only). */
  file?: string
  /** Raw sections given in code (tests, embedding); used instead of a file. */
  raw?: Record<string, unknown>
  env?: NodeJS.ProcessEnv
  cwd: string
}

export interface LoadedConfig {
  /** Where the values came from, for messages: a file path or "defaults". */
  readonly origin: string
  readonly server: ServerConfig
  /** Absolute state directory. */
  readonly stateDir: string
  /** Every declared listener with its owner. */
  readonly listeners: ReadonlyMap<string, OwnedListener>
  /** Validated sections other than [server], by section name. */
  readonly sections: ReadonlyMap<string, unknown>
  /** The plugin that owns each section other than [server]. */
  readonly owners: ReadonlyMap<string, string>
}

interface Claims {
  schemas: Map<string, TObject>
  owners: Map<string, string>
  env: Map<string, { section: string, keyPath: string }>
}

/** Who owns which section and variable; refuses a section or variable claimed twice. */
function collectClaims (plugins: readonly AnyPlugin[], listeners: ReadonlyMap<string, OwnedListener>): Claims {
  const schemas = new Map<string, TObject>([['server', serverSection(listeners)]])
  const owners = new Map<string, string>([['server', KERNEL_OWNER]])
  const claim = (section: string, owner: string, schema: TObject): void => {
    const taken = owners.get(section)
    if (taken !== undefined) {
      const other = taken === KERNEL_OWNER ? 'the kernel' : `plugin "${taken}"`
      throw new PluginLoadError(`plugin "${owner}" declares section [${section}], which ${other} already owns`)
    }
    owners.set(section, owner)
    schemas.set(section, schema)
  }
  for (const plugin of plugins) claim(plugin.name, plugin.name, plugin.config?.(Type) ?? Type.Object({}, { additionalProperties: false }))
  for (const plugin of plugins) {
    for (const [section, schema] of Object.entries(plugin.sections ?? {})) claim(section, plugin.name, (schema as (type: typeof Type) => TObject)(Type))
  }
  const env = new Map<string, { section: string, keyPath: string }>()
  const variableOwner = new Map<string, string>()
  const claimVariable = (variable: string, owner: string, section: string, keyPath: string): void => {
    const taken = variableOwner.get(variable) ?? (CLI_VARIABLES.includes(variable) ? KERNEL_OWNER : undefined)
    if (taken !== undefined) {
      const other = taken === KERNEL_OWNER ? 'the kernel' : `plugin "${taken}"`
      throw new PluginLoadError(`environment variable ${variable} is claimed by ${other} and by plugin "${owner}"; each variable belongs to one plugin`)
    }
    if (schemaAt(schemas.get(section) as TObject, keyPath.split('.')) === undefined) {
      throw new PluginLoadError(`plugin "${owner}" maps environment variable ${variable} to [${section}].${keyPath}, which its schema does not have`)
    }
    variableOwner.set(variable, owner)
    env.set(variable, { section, keyPath })
  }
  for (const [variable, keyPath] of Object.entries(SERVER_ENV)) claimVariable(variable, KERNEL_OWNER, 'server', keyPath)
  for (const listener of listeners.values()) {
    const variable = portVariable(listener)
    if (variable !== undefined) claimVariable(variable, KERNEL_OWNER, 'server', `listeners.${listener.name}.port`)
  }
  for (const plugin of plugins) {
    for (const [variable, keyPath] of Object.entries(plugin.env ?? {})) claimVariable(variable, plugin.name, plugin.name, keyPath)
  }
  for (const listener of listeners.values()) {
    if (listener.portKey === undefined) continue
    const target = schemaAt(schemas.get(listener.owner) as TObject, listener.portKey.split('.'))
    if (target?.type !== 'integer') {
      throw new PluginLoadError(`plugin "${listener.owner}" keeps the port of listener "${listener.name}" in [${listener.owner}].${listener.portKey}, which its schema does not define as an integer`)
    }
  }
  return { schemas, owners, env }
}

/** Read, override from the environment, and validate the whole configuration. */
export function loadConfig (source: ConfigSource, plugins: readonly AnyPlugin[]): LoadedConfig {
  const origin = source.file ?? (source.raw !== undefined ? 'config' : 'defaults')
  const raw = structuredClone(source.raw ?? (source.file !== undefined ? readToml(source.file) : {}))
  const listeners = declaredListeners(plugins)
  const claims = collectClaims(plugins, listeners)
  for (const section of Object.keys(raw)) {
    if (!claims.schemas.has(section)) {
      throw new ConfigError(`${origin}: unknown section [${section}] (known: ${[...claims.schemas.keys()].join(', ')})`)
    }
    if (!isTable(raw[section])) throw new ConfigError(`${origin}: [${section}] must be a table`)
  }
  const fromEnv = applyEnv(raw, claims, source.env ?? {})
  const sections = new Map<string, unknown>()
  for (const [section, schema] of claims.schemas) {
    sections.set(section, validateSection(section, schema, raw[section] ?? {}, origin, fromEnv))
  }
  const server = sections.get('server') as Omit<ServerConfig, 'listeners'> & { listeners: Record<string, Partial<ListenerConfig>> }
  sections.delete('server')
  for (const listener of listeners.values()) {
    const entry = server.listeners[listener.name]
    if (listener.portKey !== undefined) entry.port = valueAt(sections.get(listener.owner), listener.portKey) as number
    entry.body_limit ??= MIB
  }
  const owners = new Map(claims.owners)
  owners.delete('server')
  return { origin, server: server as ServerConfig, stateDir: resolve(source.cwd, server.state_dir), listeners, sections, owners }
}

function isTable (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** Copy each set variable into its key, converted to the type the schema wants; returns key path → variable. */
function applyEnv (raw: Record<string, unknown>, claims: Claims, env: NodeJS.ProcessEnv): Map<string, string> {
  const fromEnv = new Map<string, string>()
  for (const [variable, { section, keyPath }] of claims.env) {
    const text = env[variable]
    if (text === undefined || text === '') continue
    const keys = keyPath.split('.')
    const target = schemaAt(claims.schemas.get(section) as TObject, keys) as TSchema
    const value = target.type === 'array'
      ? text.split(',').map(s => s.trim()).filter(s => s !== '')
      : Value.Convert(target, text)
    let table = (raw[section] ??= {}) as Record<string, unknown>
    for (const key of keys.slice(0, -1)) table = (table[key] ??= {}) as Record<string, unknown>
    table[keys[keys.length - 1]] = value
    fromEnv.set(`/${section}/${keys.join('/')}`, variable)
  }
  return fromEnv
}

function schemaAt (schema: TSchema, keys: string[]): TSchema | undefined {
  let current: TSchema | undefined = schema
  for (const key of keys) current = (current?.properties as Record<string, TSchema> | undefined)?.[key]
  return current
}

function valueAt (value: unknown, keyPath: string): unknown {
  return keyPath.split('.').reduce<unknown>((current, key) => (current as Record<string, unknown> | undefined)?.[key], value)
}

function validateSection (section: string, schema: TObject, value: unknown, origin: string, fromEnv: Map<string, string>): unknown {
  const withDefaults = Value.Default(schema, structuredClone(value))
  const first = Value.Errors(schema, withDefaults).First()
  if (first === undefined) return withDefaults
  const path = `/${section}${first.path}`
  const variable = [...fromEnv].find(([p]) => path === p || path.startsWith(`${p}/`))?.[1]
  const where = variable !== undefined ? `environment ${variable}` : origin
  throw new ConfigError(`${where}: ${formatPath(section, first.path)}: ${describeError(first)}`)
}

/** `/listeners/control/port` in section server → `[server].listeners.control.port`. */
export function formatPath (section: string, pointer: string): string {
  const parts = pointer.split('/').slice(1).map(p => p.replace(/~1/g, '/').replace(/~0/g, '~'))
  return parts.reduce((text, part) => /^\d+$/.test(part) ? `${text}[${part}]` : `${text}.${part}`, `[${section}]`)
}

function describeError (error: ValueError): string {
  const schema = error.schema
  if (error.message === 'Unexpected property') return 'unknown key'
  if (schema.format === 'cron' && typeof error.value === 'string') return cronProblem(error.value) ?? error.message
  if (Array.isArray(schema.anyOf) && schema.anyOf.every((s: TSchema) => 'const' in s)) {
    return `expected one of ${schema.anyOf.map((s: TSchema) => JSON.stringify(s.const)).join(', ')}, got ${JSON.stringify(error.value)}`
  }
  if (error.value === undefined) return 'is required'
  return `${error.message.replace(/^Expected/, 'expected')}, got ${JSON.stringify(error.value)}`
}

