// The table of the plugins' top-level commands (name, the line `berth --help` prints for it, which
// plugins add to it), written beside the built CLI when it is built. With it `berth --help` lists every
// command without loading any plugin, and a plugin's command loads only the definitions of the plugins
// that add to it. A table whose plugin folders differ from those on disk is not used.
import { Command, Help } from 'commander'
import { discoverPlugins, pluginFolders } from '../loader.js'
import type { AnyPlugin } from '../plugin.js'
import { UsageError, type CliRegistry } from './cli-registry.js'
// node:fs without an ES import: its ES namespace loads fs streams, slowing every `berth` command down (docs/benchmarks.md, CLI start-up).
const { existsSync, readFileSync, writeFileSync } = process.getBuiltinModule('node:fs')

export interface CommandEntry {
  name: string
  /** The plugins that add the command or subcommands of it, in discovery order. */
  plugins: string[]
  /** What `berth --help` prints for it: the term (`deploys [options] [service]`) and the description. */
  term: string
  description: string
  hidden: boolean
  helpGroup: string
}

export interface CommandTable {
  /** The plugin folders the table was made from, sorted. */
  folders: string[]
  commands: CommandEntry[]
}

/** Written beside this module in dist/ by `npm run build:ts`. */
export const COMMAND_TABLE_FILE = new URL('./command-table.json', import.meta.url)

/** The table on disk, if it was made from the plugin folders that are there now. */
export function readCommandTable (pluginDir: string): CommandTable | undefined {
  if (!existsSync(COMMAND_TABLE_FILE)) return undefined
  const table = JSON.parse(readFileSync(COMMAND_TABLE_FILE, 'utf8')) as CommandTable
  const folders = pluginFolders(pluginDir).map(([, folder]) => folder)
  return folders.join('\n') === table.folders.join('\n') ? table : undefined
}

/** A top-level command with its subcommands' names, to see which plugins add to it. */
const shapeOf = (command: Command): string => JSON.stringify([command.name(), command.commands.map(shapeOf)])

/** Every plugin's commands, added in discovery order as `berth` adds them, with which plugins touched each. */
export function buildCommandTable (plugins: readonly AnyPlugin[], folders: readonly string[]): CommandTable {
  const program = new Command('berth')
  const unavailable = (): never => { throw new UsageError('not available while the command table is built') }
  const registry: CliRegistry = {
    program,
    settings: unavailable,
    serverOption: () => {},
    serverOptions: unavailable,
    globalArgs: unavailable,
    plugins: unavailable,
    script: ''
  }
  const owners = new Map<Command, string[]>()
  for (const plugin of plugins) {
    const before = new Map(program.commands.map(command => [command, shapeOf(command)]))
    plugin.commands?.(registry)
    for (const command of program.commands) {
      if (before.get(command) !== shapeOf(command)) owners.set(command, [...(owners.get(command) ?? []), plugin.name])
    }
  }
  const help = new Help()
  return {
    folders: [...folders],
    commands: program.commands.map(command => ({
      name: command.name(),
      plugins: owners.get(command) ?? [],
      term: help.subcommandTerm(command),
      description: help.subcommandDescription(command),
      hidden: (command as Command & { _hidden: boolean })._hidden,
      helpGroup: command.helpGroup()
    }))
  }
}

/** Adds each command of the table as a stand-in that `--help` lists as it would list the command itself. */
export function addTableCommands (program: Command, table: CommandTable): void {
  const terms = new Map<Command, string>()
  for (const entry of table.commands) {
    const command = program.command(entry.name, { hidden: entry.hidden }).description(entry.description)
    if (entry.helpGroup !== '') command.helpGroup(entry.helpGroup)
    terms.set(command, entry.term)
  }
  const subcommandTerm = Help.prototype.subcommandTerm
  program.configureHelp({ ...program.configureHelp(), subcommandTerm (command) { return terms.get(command) ?? subcommandTerm.call(this, command) } })
}

/**
 * The plugins whose commands `berth <args>` needs: none for the list of commands (no command named, or
 * `help` alone), those of the table's entry for a plugin's command, all of them (undefined) otherwise:
 * the server's and the state commands, an unknown option or command.
 */
export function pluginsForArgs (args: readonly string[], table: CommandTable): string[] | undefined {
  const valued = new Set(['-c', '--config', '-s', '--state-dir'])
  const flags = new Set(['-h', '--help', '-V', '--version'])
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]
    if (valued.has(arg)) i++
    else if (/^--(config|state-dir)=/.test(arg)) continue
    else if (flags.has(arg)) return []
    else if (arg.startsWith('-')) return undefined
    else {
      const name = arg === 'help' ? args[i + 1] : arg
      if (name === undefined) return []
      return table.commands.find(entry => entry.name === name)?.plugins
    }
  }
  return []
}

/** Writes the table of the built plugins beside the built CLI (run by `npm run build:ts`). */
export async function writeCommandTable (pluginDir: string): Promise<void> {
  const table = buildCommandTable(await discoverPlugins([pluginDir]), pluginFolders(pluginDir).map(([, folder]) => folder))
  writeFileSync(COMMAND_TABLE_FILE, `${JSON.stringify(table, null, 2)}\n`)
}
