// `berth install-service`, a command of the orchestration product: a systemd unit that runs `berth
// server` as the system's service: in the working directory that holds services/ (this one, or
// --working-dir), after Docker, with the global options given to this command (--config, --state-dir),
// with NODE_ENV=production and room for many connections (LimitNOFILE), allowed to bind ports below 1024
// without root (AmbientCapabilities=CAP_NET_BIND_SERVICE), restarted on failure. With --product the unit
// runs one product's plugins in a process of their own (berth-<product>.service: BERTH_PLUGINS, its own
// state directory and control port); with --leader it runs an agent instead (`berth server --join
// <leader>`). --unit-dir writes elsewhere than /etc/systemd/system (a package build, a test, a user who
// is not root).
import { join, resolve } from 'node:path'
import { CONTROL_LISTENER, UsageError, type AnyPlugin, type CliRegistry } from '../../kernel/index.js'
// node:fs without an ES import: its ES namespace loads fs streams, slowing every `berth` command down (docs/benchmarks.md, CLI start-up).
const { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } = process.getBuiltinModule('node:fs')

const SYSTEM_UNIT_DIR = '/etc/systemd/system'
/** Open files per process: every connection is one (two through the proxy); see docs/operations.md. */
export const LIMIT_NOFILE = 65536

interface InstallOptions { unitDir: string, workingDir?: string, user?: string, leader?: string, product?: string, controlPort?: string }

export interface UnitOptions {
  /** The script of the `berth` command. */
  script: string
  workingDir: string
  user?: string
  /** The global options of `berth` (state directory, config file). */
  args: string[]
  serverArgs?: string[]
  description?: string
  /** Variables besides NODE_ENV=production. */
  environment?: Readonly<Record<string, string>>
}

/** systemd's quoting of one word of a command line. */
function quoted (word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `"${word.replace(/(["\\])/g, '\\$1')}"`
}

export function serviceUnit (options: UnitOptions): string {
  const environment = { NODE_ENV: 'production', ...options.environment }
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
    ...Object.entries(environment).map(([name, value]) => `Environment=${quoted(`${name}=${value}`)}`),
    `ExecStart=${[process.execPath, options.script, ...options.args, 'server', ...(options.serverArgs ?? [])].map(quoted).join(' ')}`,
    ...(options.user !== undefined ? [`User=${options.user}`] : []),
    'AmbientCapabilities=CAP_NET_BIND_SERVICE',
    `LimitNOFILE=${LIMIT_NOFILE}`,
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
const CONTROL_PORT_LINE = /^Environment=BERTH_CONTROL_PORT=(\d+)$/m

export function addInstallServiceCommand (cli: CliRegistry): void {
  cli.program.command('install-service')
    .description('write a systemd unit that runs `berth server` in this directory (the one holding services/) at boot')
    .option('--unit-dir <dir>', 'where the unit file goes', SYSTEM_UNIT_DIR)
    .option('--working-dir <dir>', 'the directory holding services/ and cluster.toml (default: this one)')
    .option('--user <name>', 'run the server as this user (it binds ports below 1024 through CAP_NET_BIND_SERVICE)')
    .option('--leader <host:port>', 'write an agent\'s unit instead: `berth server --join host:port`, joining the master there')
    .option('--product <name>', 'write berth-<name>.service, running only that product\'s plugins, with the state directory <state dir>-<name>')
    .option('--control-port <port>', `the control listener's port (health, metrics), BERTH_CONTROL_PORT in the unit (with --product: ${CONTROL_LISTENER.port} unless given); one per process on a machine`)
    .action(async (options: InstallOptions) => {
      const { leader, product } = options
      if (leader !== undefined && !/^\S+$/.test(leader)) throw new UsageError(`--leader ${JSON.stringify(leader)} is not <host>:<port>`)
      if (leader !== undefined && !(await cli.serverOptions()).some(o => o.flags.split(/[ ,]+/).includes(JOIN_FLAG))) {
        throw new UsageError('--leader: no plugin runs agent nodes (berth server --join); install-service writes the master\'s unit only')
      }
      if (leader !== undefined && product !== undefined) throw new UsageError('--product cannot be combined with --leader: an agent runs what its leader sends')
      const { controlPort } = options
      if (controlPort !== undefined && !(/^\d{1,5}$/.test(controlPort) && Number(controlPort) >= 1 && Number(controlPort) <= 65535)) {
        throw new UsageError(`--control-port ${controlPort} is not a TCP port (1-65535)`)
      }
      const workingDir = resolve(options.workingDir ?? process.cwd())
      if (leader === undefined && !existsSync(join(workingDir, 'services')) && !existsSync(join(workingDir, 'cluster.toml'))) {
        throw new UsageError(`${workingDir} holds neither services/ nor cluster.toml: run this where they are, or pass --working-dir`)
      }
      if (options.user !== undefined && !/^[a-z_][a-z0-9_-]*\$?$/i.test(options.user)) throw new UsageError(`--user ${options.user} is not a user name`)
      const unitDir = resolve(options.unitDir)
      let unit: { name: string, description?: string, serverArgs?: string[], environment: Record<string, string> } = controlPort === undefined
        ? { name: 'berth.service', environment: {} }
        : { name: 'berth.service', description: `Berth server (control API on :${controlPort})`, environment: { BERTH_CONTROL_PORT: controlPort } }
      if (leader !== undefined) unit = { ...unit, serverArgs: [JOIN_FLAG, leader], description: `Berth agent (joins the leader at ${leader})` }
      if (product !== undefined) {
        const plugins = productPlugins(await cli.plugins(), product)
        const port = controlPort ?? String(CONTROL_LISTENER.port)
        unit = {
          name: `berth-${product}.service`,
          description: `Berth ${product}: ${plugins.join(', ')} (control API on :${port})`,
          environment: { BERTH_PLUGINS: plugins.join(','), BERTH_CONTROL_PORT: port }
        }
      }
      const { name, ...kind } = unit
      const port = kind.environment.BERTH_CONTROL_PORT
      if (port !== undefined) refuseTakenControlPort(unitDir, name, port)
      mkdirSync(unitDir, { recursive: true })
      const file = join(unitDir, name)
      const args = await cli.globalArgs(product === undefined ? '' : `-${product}`)
      writeFileSync(file, serviceUnit({ script: cli.script, workingDir, user: options.user, args, ...kind }), { mode: 0o644 })
      console.log(`wrote ${file}`)
      if (unitDir === SYSTEM_UNIT_DIR) console.log(`enable and start it: systemctl daemon-reload && systemctl enable --now ${name.replace(/\.service$/, '')}`)
    })
}

/** The plugins of a product, in discovery order; refused when none belongs to it. */
function productPlugins (plugins: readonly AnyPlugin[], product: string): string[] {
  const names = plugins.filter(plugin => plugin.product === product).map(plugin => plugin.name)
  if (names.length === 0) {
    const known = [...new Set(plugins.flatMap(plugin => plugin.product ?? []))].sort()
    throw new UsageError(`--product ${product}: no plugin belongs to it (products: ${known.join(', ')})`)
  }
  return names
}

/** Refuse a control port another unit written here already gives its server: two processes cannot share it. */
function refuseTakenControlPort (unitDir: string, unit: string, port: string): void {
  if (!existsSync(unitDir)) return
  for (const other of readdirSync(unitDir)) {
    if (other === unit || !/^berth(-[a-z0-9-]+)?\.service$/.test(other)) continue
    if (CONTROL_PORT_LINE.exec(readFileSync(join(unitDir, other), 'utf8'))?.[1] === port) {
      throw new UsageError(`--control-port ${port} is already the control port of ${join(unitDir, other)}: give each product's process its own (--control-port)`)
    }
  }
}
