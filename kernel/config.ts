// Configuration: cluster.toml (TOML 1.0, smol-toml) plus environment overrides, validated section by
// section with TypeBox. Every refusal names the file or variable and the key path, in one line.
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { FormatRegistry, Type, type Static, type TObject, type TSchema } from '@sinclair/typebox'
import { Value, type ValueError } from '@sinclair/typebox/value'
import { parse as parseToml, TomlError } from 'smol-toml'
import { ConfigError, messageOf } from './errors.js'
import { LISTENER_NAMES, type AnyPlugin } from './plugin.js'
import { cronProblem } from './scheduler.js'

/** `Type.String({ format: 'cron' })` accepts six-field cron expressions only. */
FormatRegistry.Set('cron', value => cronProblem(value) === undefined)
/** `Type.String({ format: 'uri' })` accepts absolute URLs. */
FormatRegistry.Set('uri', value => URL.canParse(value))

const DEFAULT_PORTS: Record<string, number> = { control: 6880, telemetry: 6881, app: 6882 }
const MIB = 1024 * 1024

function listenerSchema (port: number): TObject {
  return Type.Object({
    host: Type.String({ default: '0.0.0.0', description: 'Address to bind.' }),
    port: Type.Integer({ minimum: 0, maximum: 65535, default: port, description: 'TCP port; 0 picks a free one.' }),
    body_limit: Type.Integer({ minimum: 1, default: MIB, description: 'Largest request body in bytes (413 beyond).' })
  }, { additionalProperties: false, default: {} })
}

export const ServerSection = Type.Object({
  state_dir: Type.String({ default: '.berth', description: 'State directory (LMDB, pid, logs, keys), relative to the working directory.' }),
  log_level: Type.Union(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map(l => Type.Literal(l)), { default: 'info' }),
  access_log: Type.Boolean({ default: false, description: 'Log every HTTP request at info (off by default, as it costs throughput).' }),
  plugins: Type.Optional(Type.Array(Type.String(), { description: 'Plugins to run; absent means every plugin found.' })),
  disable: Type.Array(Type.String(), { default: [], description: 'Plugins not to run.' }),
  listeners: Type.Object(
    Object.fromEntries(LISTENER_NAMES.map(name => [name, listenerSchema(DEFAULT_PORTS[name])])),
    { additionalProperties: false, default: {} })
}, { additionalProperties: false, default: {} })

export type ServerConfig = Static<typeof ServerSection> & {
  listeners: Record<string, { host: string, port: number, body_limit: number }>
}

/** Environment variables the kernel itself reads, and the `[server]` key each overrides. */
export const SERVER_ENV: Readonly<Record<string, string>> = {
  BERTH_STATE_DIR: 'state_dir',
  BERTH_LOG_LEVEL: 'log_level',
  BERTH_ACCESS_LOG: 'access_log',
  BERTH_PLUGINS: 'plugins',
  BERTH_CONTROL_PORT: 'listeners.control.port',
  BERTH_TELEMETRY_PORT: 'listeners.telemetry.port',
  BERTH_APP_PORT: 'listeners.app.port'
}

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
  /** Validated section of each known plugin, by plugin name. */
  readonly sections: ReadonlyMap<string, unknown>
}

/** Read, override from the environment, and validate the whole configuration. */
export function loadConfig (source: ConfigSource, plugins: readonly AnyPlugin[]): LoadedConfig {
  const origin = source.file ?? (source.raw !== undefined ? 'config' : 'defaults')
  const raw = structuredClone(source.raw ?? (source.file !== undefined ? readToml(source.file) : {}))
  const schemas = new Map<string, TObject>([['server', ServerSection]])
  const envMaps = new Map<string, Readonly<Record<string, string>>>([['server', SERVER_ENV]])
  for (const plugin of plugins) {
    schemas.set(plugin.name, plugin.config ?? Type.Object({}, { additionalProperties: false }))
    if (plugin.env !== undefined) envMaps.set(plugin.name, plugin.env)
  }
  for (const section of Object.keys(raw)) {
    if (!schemas.has(section)) {
      throw new ConfigError(`${origin}: unknown section [${section}] (known: ${[...schemas.keys()].join(', ')})`)
    }
    if (!isTable(raw[section])) throw new ConfigError(`${origin}: [${section}] must be a table`)
  }
  const fromEnv = new Map<string, string>()
  for (const [section, map] of envMaps) {
    applyEnv(raw, section, schemas.get(section) as TObject, map, source.env ?? {}, fromEnv)
  }
  const sections = new Map<string, unknown>()
  for (const [section, schema] of schemas) {
    sections.set(section, validateSection(section, schema, raw[section] ?? {}, origin, fromEnv))
  }
  const server = sections.get('server') as ServerConfig
  sections.delete('server')
  return { origin, server, stateDir: resolve(source.cwd, server.state_dir), sections }
}

function readToml (file: string): Record<string, unknown> {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (err) {
    throw new ConfigError(`${file}: cannot read: ${messageOf(err)}`)
  }
  try {
    return parseToml(text) as Record<string, unknown>
  } catch (err) {
    const where = err instanceof TomlError ? ` at line ${err.line}, column ${err.column}` : ''
    const reason = messageOf(err).split('\n')[0]
    throw new ConfigError(`${file}: invalid TOML${where}: ${reason}`)
  }
}

function isTable (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** Copy each set variable of `map` into its key, converted to the type the schema wants there. */
function applyEnv (
  raw: Record<string, unknown>, section: string, schema: TObject, map: Readonly<Record<string, string>>,
  env: NodeJS.ProcessEnv, fromEnv: Map<string, string>
): void {
  for (const [variable, keyPath] of Object.entries(map)) {
    const text = env[variable]
    if (text === undefined || text === '') continue
    const keys = keyPath.split('.')
    const target = schemaAt(schema, keys)
    if (target === undefined) throw new ConfigError(`environment ${variable}: maps to unknown key [${section}].${keyPath}`)
    const value = target.type === 'array'
      ? text.split(',').map(s => s.trim()).filter(s => s !== '')
      : Value.Convert(target, text)
    let table = (raw[section] ??= {}) as Record<string, unknown>
    for (const key of keys.slice(0, -1)) table = (table[key] ??= {}) as Record<string, unknown>
    table[keys[keys.length - 1]] = value
    fromEnv.set(`/${section}/${keys.join('/')}`, variable)
  }
}

function schemaAt (schema: TSchema, keys: string[]): TSchema | undefined {
  let current: TSchema | undefined = schema
  for (const key of keys) current = (current?.properties as Record<string, TSchema> | undefined)?.[key]
  return current
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
