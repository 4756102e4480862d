// Listener declarations: which listeners exist (the kernel's `control` plus those plugins declare),
// their default ports, kinds and owners, and the environment variable of each port.
import { PluginLoadError } from './errors.js'
import type { AnyPlugin } from './plugin.js'

export interface ListenerDeclaration {
  /** Lowercase letters, digits and dashes; configured under `[server.listeners.<name>]`. */
  readonly name: string
  /** Default TCP port. */
  readonly port: number
  /** `fastify` (default): plugins mount routes with `ctx.http`. `raw`: the owner hands its own server to `ctx.serve`. */
  readonly kind?: 'fastify' | 'raw'
  /** What it serves, for the example config and docs. */
  readonly description?: string
  /**
   * Key of the owner's own section that holds the port (`http_port` → `[<owner>].http_port`); the
   * `[server.listeners.<name>]` table then sets only the host.
   */
  readonly portKey?: string
}

/** A declared listener and the plugin that owns it (`kernel` for the kernel's own). */
export interface OwnedListener extends Required<Omit<ListenerDeclaration, 'portKey' | 'description'>> {
  readonly owner: string
  readonly portKey?: string
  readonly description?: string
}

/** The kernel's own listener: health, metrics, and the control plane's routes. */
export const CONTROL_LISTENER: ListenerDeclaration = {
  name: 'control', port: 6880, kind: 'fastify', description: 'the control API, /api/v1/health and /metrics'
}

export const KERNEL_OWNER = 'kernel'
export const DEFAULT_HOST = '0.0.0.0'
export const DEFAULT_STATE_DIR = '.berth'
const LISTENER_NAME = /^[a-z][a-z0-9-]*$/

/** Every listener the given plugins declare, the kernel's first; refuses duplicates and bad declarations. */
export function declaredListeners (plugins: readonly AnyPlugin[]): Map<string, OwnedListener> {
  const listeners = new Map<string, OwnedListener>()
  const add = (owner: string, declaration: ListenerDeclaration): void => {
    const { name, port } = declaration
    const who = owner === KERNEL_OWNER ? 'the kernel' : `plugin "${owner}"`
    if (!LISTENER_NAME.test(name)) throw new PluginLoadError(`${who} declares listener "${name}": names are lowercase letters, digits and dashes`)
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new PluginLoadError(`${who} declares listener "${name}" with port ${port}, which is not a TCP port`)
    const taken = listeners.get(name)
    if (taken !== undefined) {
      const other = taken.owner === KERNEL_OWNER ? 'the kernel' : `plugin "${taken.owner}"`
      throw new PluginLoadError(`${who} declares listener "${name}", which ${other} already declares`)
    }
    listeners.set(name, { ...declaration, kind: declaration.kind ?? 'fastify', owner })
  }
  add(KERNEL_OWNER, CONTROL_LISTENER)
  for (const plugin of plugins) {
    for (const declaration of plugin.listeners ?? []) add(plugin.name, declaration)
  }
  return listeners
}

/** `BERTH_<NAME>_PORT`, e.g. BERTH_CONTROL_PORT; undefined when the port lives in the owner's section. */
export function portVariable (listener: OwnedListener): string | undefined {
  return listener.portKey === undefined ? `BERTH_${envPart(listener.name)}_PORT` : undefined
}

/** `BERTH_<NAME>_URL`: the base URL commands use for a listener (for control also `BERTH_URL`). */
export function urlVariable (name: string): string {
  return `BERTH_${envPart(name)}_URL`
}

function envPart (name: string): string {
  return name.toUpperCase().replace(/-/g, '_')
}

/** The address clients use for a bound host: a wildcard means this machine. */
export function reachableUrl (host: string, port: number, scheme = 'http'): URL {
  const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host
  return new URL(`${scheme}://${shown.includes(':') ? `[${shown}]` : shown}:${port}`)
}
