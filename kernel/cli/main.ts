// The `berth` command (started by cli.ts): global options, the server, state and update commands, and
// the commands of the plugins the command line needs.
// It loads only plugin definitions and their commands: a client command never loads the server.
// Exit codes: 0 ok, 1 runtime failure, 2 usage error — each failure as one line on stderr.
import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Command, CommanderError } from 'commander'
import { messageOf } from '../errors.js'
import { BUILTIN_PLUGIN_DIR, discoverPlugins } from '../loader.js'
import { VERSION } from '../paths.js'
import { UsageError, type CliRegistry, type CliSettings } from './cli-registry.js'
import { resolveCliSettings } from './cli-settings.js'
import { addTableCommands, pluginsForArgs, readCommandTable } from './command-table.js'
import { addServerCommands } from './server-command.js'
import { addStateCommands } from './state-command.js'
import { addUpdateCommand } from './update-command.js'
import type { AnyPlugin } from '../plugin.js'
// node:fs without an ES import: its ES namespace loads fs streams, slowing every `berth` command down (docs/benchmarks.md, CLI start-up).
const { existsSync } = process.getBuiltinModule('node:fs')

interface GlobalOptions {
  config?: string
  stateDir?: string
}

function fail (message: string, code: number): never {
  process.stderr.write(`berth: ${message.split('\n')[0]}\n`)
  process.exit(code)
}

async function main (argv: string[]): Promise<void> {
  const program = new Command('berth')
    .description('Berth: one small kernel with plugins for orchestration, device telemetry and campaign operations')
    .version(VERSION, '-V, --version')
    .option('-c, --config <file>', 'cluster.toml to use (default: ./cluster.toml when present; env BERTH_CONFIG)')
    .option('-s, --state-dir <dir>', 'state directory (default: [server].state_dir or .berth; env BERTH_STATE_DIR)')
    .exitOverride()
    .configureOutput({ outputError: (text, write) => { write(`berth: ${text.replace(/^error: /, '').trimEnd().split('\n')[0]}\n`) } })
    .showSuggestionAfterError()

  let plugins: AnyPlugin[] = []
  const globals = (): GlobalOptions => program.opts<GlobalOptions>()
  const configFile = (): string | undefined => {
    const given = globals().config ?? process.env.BERTH_CONFIG
    if (given !== undefined) {
      const path = resolve(given)
      if (!existsSync(path)) throw new UsageError(`config file ${path} does not exist`)
      return path
    }
    const local = resolve('cluster.toml')
    return existsSync(local) ? local : undefined
  }
  const env = (): NodeJS.ProcessEnv => {
    const stateDir = globals().stateDir
    return stateDir === undefined ? process.env : { ...process.env, BERTH_STATE_DIR: resolve(stateDir) }
  }
  const settings = async (): Promise<CliSettings> => {
    const stateDir = globals().stateDir
    return await resolveCliSettings({ configFile: configFile(), stateDir: stateDir === undefined ? undefined : resolve(stateDir), env: process.env, cwd: process.cwd(), plugins })
  }
  /** The global options again, for a detached server or a unit; `stateDirSuffix` makes a product's own state directory. */
  const globalArgs = async (stateDirSuffix = ''): Promise<string[]> => {
    const { stateDir, configFile: file } = await settings()
    return ['--state-dir', `${stateDir}${stateDirSuffix}`, ...(file !== undefined ? ['--config', file] : [])]
  }

  const serverOptions = addServerCommands(program, { settings, env, globalArgs })
  addStateCommands(program, { settings, plugins: () => plugins.map(plugin => plugin.name) })
  addUpdateCommand(program)
  // The command table names the plugins a command needs: none to list the commands, those that add to
  // a plugin's command (one, or two for `cluster`); without a table, and for the other commands, every plugin.
  const table = readCommandTable(BUILTIN_PLUGIN_DIR)
  const needed = table === undefined ? undefined : pluginsForArgs(argv.slice(2), table)
  plugins = needed === undefined ? await discoverPlugins() : await discoverPlugins(undefined, new Set(needed))
  let complete = needed === undefined
  /** Every plugin definition, with the commands of those not loaded yet, for a command that needs them all. */
  const completePlugins = async (): Promise<readonly AnyPlugin[]> => {
    if (!complete) {
      complete = true
      const loaded = new Set(plugins)
      plugins = await discoverPlugins()
      for (const plugin of plugins) if (!loaded.has(plugin)) plugin.commands?.(registry)
    }
    return plugins
  }
  const registry: CliRegistry = {
    program,
    settings,
    serverOption: serverOptions.add,
    serverOptions: async () => { await completePlugins(); return serverOptions.list() },
    globalArgs,
    plugins: completePlugins,
    script: fileURLToPath(new URL('./cli.js', import.meta.url))
  }
  for (const plugin of plugins) plugin.commands?.(registry)
  if (table !== undefined && needed?.length === 0) addTableCommands(program, table)

  await program.parseAsync(argv)
}

try {
  await main(process.argv)
} catch (err) {
  if (err instanceof CommanderError) process.exit(err.exitCode === 0 ? 0 : 2)
  fail(messageOf(err), err instanceof UsageError ? 2 : 1)
}
