// The loader: find plugin definitions under plugins/, choose the enabled ones, and order them so
// every plugin comes after what it depends on. Unknown names, missing dependencies and cycles are refused.
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { PluginLoadError, messageOf } from './errors.js'
import { isPluginDefinition, type AnyPlugin } from './plugin.js'
// node:fs without an ES import: its ES namespace loads fs streams, slowing every `berth` command down (docs/benchmarks.md, CLI start-up).
const { existsSync, readdirSync } = process.getBuiltinModule('node:fs')

/** plugins/ beside kernel/: the sources under tap, dist/plugins once built. */
export const BUILTIN_PLUGIN_DIR = fileURLToPath(new URL('../plugins/', import.meta.url))

/** The plugin folders of `dir` (sorted by name), each as [its index.{js,ts}, its name]. */
export function pluginFolders (dir: string): Array<[string, string]> {
  if (!existsSync(dir)) return []
  return readdirSync(dir, { withFileTypes: true })
    .filter(entry => entry.isDirectory() && !entry.name.startsWith('.'))
    .map(entry => entry.name)
    .sort()
    .flatMap(folder => {
      const file = ['index.js', 'index.ts'].map(f => join(dir, folder, f)).find(f => existsSync(f))
      return file === undefined ? [] : [[file, folder] as [string, string]]
    })
}

/** Import `<dir>/<name>/index.{js,ts}` for each folder (only those named in `only`, when given); the folder name must be the plugin's name. */
export async function discoverPlugins (dirs: readonly string[] = [BUILTIN_PLUGIN_DIR], only?: ReadonlySet<string>): Promise<AnyPlugin[]> {
  const files = dirs.flatMap(dir => pluginFolders(dir)).filter(([, folder]) => only === undefined || only.has(folder))
  return await Promise.all(files.map(async ([file, folder]) => await importDefinition(file, folder)))
}

async function importDefinition (file: string, folder: string): Promise<AnyPlugin> {
  let module: { default?: unknown }
  try {
    module = await import(pathToFileURL(file).href) as { default?: unknown }
  } catch (err) {
    throw new PluginLoadError(`plugin ${file}: cannot be imported: ${messageOf(err)}`)
  }
  if (!isPluginDefinition(module.default)) {
    throw new PluginLoadError(`plugin ${file}: the default export must be definePlugin({...})`)
  }
  if (module.default.name !== folder) {
    throw new PluginLoadError(`plugin ${file}: named "${module.default.name}" but its folder is "${folder}"`)
  }
  return module.default
}

export interface Selection {
  /** Plugins to run; undefined means all available. */
  enabled?: readonly string[]
  disabled?: readonly string[]
}

/** The enabled plugins, dependencies first. */
export function orderPlugins (available: readonly AnyPlugin[], selection: Selection = {}): AnyPlugin[] {
  const byName = new Map<string, AnyPlugin>()
  for (const plugin of available) {
    if (byName.has(plugin.name)) throw new PluginLoadError(`two plugins are named "${plugin.name}"`)
    byName.set(plugin.name, plugin)
  }
  const known = [...byName.keys()].join(', ') || 'none'
  for (const name of [...(selection.enabled ?? []), ...(selection.disabled ?? [])]) {
    if (!byName.has(name)) throw new PluginLoadError(`[server] names plugin "${name}", which does not exist (known: ${known})`)
  }
  const disabled = new Set(selection.disabled ?? [])
  const enabled = new Set((selection.enabled ?? [...byName.keys()]).filter(name => !disabled.has(name)))
  for (const name of enabled) {
    for (const dependency of byName.get(name)?.dependsOn ?? []) {
      if (!byName.has(dependency)) throw new PluginLoadError(`plugin "${name}" depends on "${dependency}", which does not exist`)
      if (!enabled.has(dependency)) throw new PluginLoadError(`plugin "${name}" depends on "${dependency}", which is not enabled`)
    }
  }
  const ordered: AnyPlugin[] = []
  const state = new Map<string, 'visiting' | 'done'>()
  const visit = (name: string, path: string[]): void => {
    if (state.get(name) === 'done') return
    if (state.get(name) === 'visiting') {
      const cycle = [...path.slice(path.indexOf(name)), name]
      throw new PluginLoadError(`plugin dependency cycle: ${cycle.join(' → ')}`)
    }
    state.set(name, 'visiting')
    const plugin = byName.get(name) as AnyPlugin
    for (const dependency of plugin.dependsOn ?? []) visit(dependency, [...path, name])
    for (const dependency of plugin.optionalDependsOn ?? []) if (enabled.has(dependency)) visit(dependency, [...path, name])
    state.set(name, 'done')
    ordered.push(plugin)
  }
  for (const name of [...enabled].sort()) visit(name, [])
  return ordered
}
