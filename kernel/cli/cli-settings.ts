// What a client command needs from the configuration, resolved without the schema library: the state
// directory and the URL of each declared listener. Reads only [server] and listener ports; the server
// validates the whole file when it starts.
import { resolve } from 'node:path'
import { ConfigError } from '../errors.js'
import { declaredListeners, DEFAULT_HOST, DEFAULT_STATE_DIR, portVariable, reachableUrl, urlVariable } from '../listeners.js'
import type { AnyPlugin } from '../plugin.js'
import type { CliSettings } from './cli-registry.js'

export interface CliSettingsSource {
  /** cluster.toml in use, if any. */
  configFile?: string
  /** `--state-dir`, already resolved. */
  stateDir?: string
  env: NodeJS.ProcessEnv
  cwd: string
  plugins: readonly AnyPlugin[]
}

type Table = Record<string, unknown>

const tableAt = (value: unknown, key: string): Table => {
  const inner = (value as Table | undefined)?.[key]
  return typeof inner === 'object' && inner !== null && !Array.isArray(inner) ? inner as Table : {}
}

export async function resolveCliSettings (source: CliSettingsSource): Promise<CliSettings> {
  const { env, configFile } = source
  const origin = configFile ?? 'defaults'
  const raw: Table = configFile === undefined ? {} : (await import('../toml.js')).readToml(configFile)
  const server = tableAt(raw, 'server')
  const text = (value: unknown, where: string): string | undefined => {
    if (value === undefined) return undefined
    if (typeof value !== 'string') throw new ConfigError(`${origin}: ${where}: expected string, got ${JSON.stringify(value)}`)
    return value
  }
  /** A port from the file or a variable, refused as the server's validation would word it. */
  const port = (value: unknown, where: string, key: string): number | undefined => {
    if (value === undefined || value === '') return undefined
    const number = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value
    if (typeof number !== 'number' || !Number.isInteger(number)) throw new ConfigError(`${where}: ${key}: expected integer, got ${JSON.stringify(value)}`)
    if (number > 65535) throw new ConfigError(`${where}: ${key}: expected integer to be less or equal to 65535, got ${number}`)
    if (number < 0) throw new ConfigError(`${where}: ${key}: expected integer to be greater or equal to 0, got ${number}`)
    return number
  }
  const stateDir = source.stateDir ?? resolve(source.cwd, env.BERTH_STATE_DIR ?? text(server.state_dir, '[server].state_dir') ?? DEFAULT_STATE_DIR)

  const urls: Record<string, URL> = {}
  for (const listener of declaredListeners(source.plugins).values()) {
    const table = tableAt(tableAt(server, 'listeners'), listener.name)
    const variable = portVariable(listener)
    const key = listener.portKey === undefined ? `[server].listeners.${listener.name}.port` : `[${listener.owner}].${listener.portKey}`
    const configured = port(listener.portKey === undefined ? table.port : tableAt(raw, listener.owner)[listener.portKey], origin, key)
    const fromEnv = variable === undefined ? undefined : port(env[variable], `environment ${variable}`, key)
    const host = text(table.host, `[server].listeners.${listener.name}.host`) ?? DEFAULT_HOST
    const override = env[urlVariable(listener.name)] ?? (listener.name === 'control' ? env.BERTH_URL : undefined)
    urls[listener.name] = override !== undefined && override !== ''
      ? parseUrl(override, listener.name)
      : reachableUrl(host, fromEnv ?? configured ?? listener.port)
  }
  return { stateDir, controlUrl: urls.control, urls, configFile }
}

function parseUrl (text: string, listener: string): URL {
  if (!URL.canParse(text)) throw new ConfigError(`environment ${listener === 'control' ? 'BERTH_URL' : urlVariable(listener)}: not a URL: ${JSON.stringify(text)}`)
  return new URL(text)
}
