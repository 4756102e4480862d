// `berth install-service`: a systemd unit that runs `berth server` as the system's service: in the
// working directory that holds services/ (this one, or --working-dir), with the global options given
// to this command (--config, --state-dir), allowed to bind ports below 1024 without root
// (AmbientCapabilities=CAP_NET_BIND_SERVICE), restarted on failure. With --leader the unit runs an
// agent instead (`berth server --join <leader>`). --unit-dir writes elsewhere than /etc/systemd/system
// (a package build, a test, a user who is not root).
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Command } from 'commander'
import { UsageError, type ServerOption } from './cli-registry.js'

const SYSTEM_UNIT_DIR = '/etc/systemd/system'
const UNIT = 'berth.service'
const CLI = fileURLToPath(new URL('./cli.js', import.meta.url))

interface InstallOptions { unitDir: string, workingDir?: string, user?: string, leader?: string }

/** systemd's quoting of one word of a command line. */
function quoted (word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `"${word.replace(/(["\\])/g, '\\$1')}"`
}

export function serviceUnit (options: { workingDir: string, user?: string, args: string[], serverArgs?: string[], description?: string }): string {
  return [
    '# Written by berth install-service.',
    '[Unit]',
    `Description=${options.description ?? 'Berth server (control API on :6880)'}`,
    'Documentation=https://www.npmjs.com/package/berth',
    'After=network-online.target docker.service',
    'Wants=network-online.target',
    '',
    '[Service]',
    'Type=simple',
    `WorkingDirectory=${options.workingDir}`,
    `ExecStart=${[process.execPath, CLI, ...options.args, 'server', ...(options.serverArgs ?? [])].map(quoted).join(' ')}`,
    ...(options.user !== undefined ? [`User=${options.user}`] : []),
    'AmbientCapabilities=CAP_NET_BIND_SERVICE',
    'Restart=on-failure',
    'RestartSec=2',
    'TimeoutStopSec=60',
    'KillMode=mixed',
    '',
    '[Install]',
    'WantedBy=multi-user.target',
    ''
  ].join('\n')
}

/** The option of `berth server` that makes it an agent of a leader (added by the plugin that runs agents). */
const JOIN_FLAG = '--join'

export function addInstallServiceCommand (program: Command, deps: { globalArgs(): Promise<string[]>, serverOptions(): readonly ServerOption[] }): void {
  program.command('install-service')
    .description('write a systemd unit that runs `berth server` in this directory (the one holding services/) at boot')
    .option('--unit-dir <dir>', 'where the unit file goes', SYSTEM_UNIT_DIR)
    .option('--working-dir <dir>', 'the directory holding services/ and cluster.toml (default: this one)')
    .option('--user <name>', 'run the server as this user (it binds ports below 1024 through CAP_NET_BIND_SERVICE)')
    .option('--leader <host:port>', 'write an agent\'s unit instead: `berth server --join host:port`, joining the master there')
    .action(async (options: InstallOptions) => {
      const leader = options.leader
      if (leader !== undefined && !/^\S+$/.test(leader)) throw new UsageError(`--leader ${JSON.stringify(leader)} is not <host>:<port>`)
      if (leader !== undefined && !deps.serverOptions().some(o => o.flags.split(/[ ,]+/).includes(JOIN_FLAG))) {
        throw new UsageError('--leader: no plugin runs agent nodes (berth server --join); install-service writes the master\'s unit only')
      }
      const workingDir = resolve(options.workingDir ?? process.cwd())
      if (leader === undefined && !existsSync(join(workingDir, 'services')) && !existsSync(join(workingDir, 'cluster.toml'))) {
        throw new UsageError(`${workingDir} holds neither services/ nor cluster.toml: run this where they are, or pass --working-dir`)
      }
      if (options.user !== undefined && !/^[a-z_][a-z0-9_-]*\$?$/i.test(options.user)) throw new UsageError(`--user ${options.user} is not a user name`)
      const unitDir = resolve(options.unitDir)
      mkdirSync(unitDir, { recursive: true })
      const file = join(unitDir, UNIT)
      const agent = leader === undefined ? {} : { serverArgs: [JOIN_FLAG, leader], description: `Berth agent (joins the leader at ${leader})` }
      writeFileSync(file, serviceUnit({ workingDir, user: options.user, args: await deps.globalArgs(), ...agent }), { mode: 0o644 })
      console.log(`wrote ${file}`)
      if (unitDir === SYSTEM_UNIT_DIR) console.log('enable and start it: systemctl daemon-reload && systemctl enable --now berth')
    })
}
