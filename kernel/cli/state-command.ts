// `berth state backup|restore <plugin> <file>`: copy one plugin's databases out of the state directory,
// or put a copy back (with the server stopped). A backup holds that plugin's data and nothing else.
import { resolve } from 'node:path'
import type { Command } from 'commander'
import { StartupError } from '../errors.js'
import { UsageError, type CliSettings } from './cli-registry.js'
import { refuseSecondServer } from './server-command.js'
import type { BackupSummary } from '../store.js'

export interface StateCommandDeps {
  settings(): Promise<CliSettings>
  /** Names of the plugins there are. */
  plugins(): readonly string[]
}

export function addStateCommands (program: Command, deps: StateCommandDeps): void {
  const state = program.command('state').description('copy a plugin\'s data out of the state directory, or put a copy back')

  state.command('backup <plugin> <file>')
    .description('write a consistent copy of one plugin\'s databases to <file> (0600); the server may be running')
    .action(async (plugin: string, file: string) => {
      const { Store } = await import('../store.js')
      const store = Store.open(await stateDirFor(deps, plugin))
      try {
        report('backed up', await store.backupPlugin(plugin, resolve(file)), resolve(file))
      } finally {
        await store.close()
      }
    })

  state.command('restore <plugin> <file>')
    .description('replace one plugin\'s databases with a backup of it; stop the server first')
    .action(async (plugin: string, file: string) => {
      const stateDir = await stateDirFor(deps, plugin)
      try {
        refuseSecondServer(stateDir)
      } catch (err) {
        throw new StartupError(`${(err as Error).message}; stop it first (berth shutdown)`)
      }
      const { Store } = await import('../store.js')
      const store = Store.open(stateDir)
      try {
        report('restored', await store.restorePlugin(plugin, resolve(file)), resolve(file))
      } finally {
        await store.close()
      }
    })
}

async function stateDirFor (deps: StateCommandDeps, plugin: string): Promise<string> {
  const known = deps.plugins()
  if (!known.includes(plugin)) throw new UsageError(`no plugin named "${plugin}" (known: ${known.join(', ')})`)
  return (await deps.settings()).stateDir
}

function report (what: string, summary: BackupSummary, file: string): void {
  for (const { name, entries } of summary.databases) console.log(`  ${summary.plugin}/${name}: ${entries} entries`)
  console.log(`${what} ${summary.plugin} (${summary.databases.length} databases, taken ${summary.created_at}): ${file}`)
}
