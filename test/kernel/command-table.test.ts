// The command table beside the built CLI: made from the plugins as they are, `berth --help` from it
// prints what it prints with every plugin loaded, and each command is sent to the plugins it needs.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { Command } from 'commander'
import { BUILTIN_PLUGIN_DIR, discoverPlugins, pluginFolders } from '../../kernel/loader.js'
import { addTableCommands, buildCommandTable, pluginsForArgs, type CommandTable } from '../../kernel/cli/command-table.js'
import type { CliRegistry } from '../../kernel/cli/cli-registry.js'

const folders = pluginFolders(BUILTIN_PLUGIN_DIR).map(([, folder]) => folder)
const plugins = await discoverPlugins()
const table = buildCommandTable(plugins, folders)

t.test('the built table is the one the plugins make now (npm run build:ts writes it)', async t => {
  const built = JSON.parse(readFileSync(new URL('../../dist/kernel/cli/command-table.json', import.meta.url), 'utf8')) as CommandTable
  t.same(built, table)
})

t.test('--help from the table is --help with every plugin loaded, at any width', async t => {
  const program = (): Command => new Command('berth').option('-c, --config <file>', 'cluster.toml to use')
  const loaded = program()
  const registry = { program: loaded, serverOption: () => {} } as unknown as CliRegistry
  for (const plugin of plugins) plugin.commands?.(registry)
  const fromTable = program()
  addTableCommands(fromTable, table)
  for (const helpWidth of [60, 80, 200]) {
    for (const program of [loaded, fromTable]) program.configureHelp({ ...program.configureHelp(), helpWidth })
    t.equal(fromTable.helpInformation(), loaded.helpInformation(), `width ${helpWidth}`)
  }
  t.ok(table.commands.some(entry => entry.name === 'cluster' && entry.plugins.join() === 'cluster,nodes'), 'a command two plugins add to names both')
})

t.test('each command line goes to the plugins it needs', async t => {
  const cases: Array<[string[], string[] | undefined]> = [
    [[], []],
    [['--help'], []],
    [['-V'], []],
    [['help'], []],
    [['--config', 'x.toml', '-h'], []],
    [['status'], ['reconciler']],
    [['--state-dir=s', 'status', '--json'], ['reconciler']],
    [['-s', 'dir', 'help', 'deploy'], ['reconciler']],
    [['cluster', 'nodes'], ['cluster', 'nodes']],
    [['server'], undefined],
    [['state', 'export'], undefined],
    [['bogus'], undefined],
    [['--bogus', 'status'], undefined]
  ]
  for (const [args, expected] of cases) t.same(pluginsForArgs(args, table), expected, `berth ${args.join(' ')}`)
})
