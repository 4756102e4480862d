// `berth server [-d]` and `berth shutdown`: run the kernel in the foreground until a signal (telling a
// person at a terminal where things are once it runs), start it detached with a pid file and a log
// file in the state directory, or stop the one running.
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Command } from 'commander'
import { StartupError } from '../errors.js'
import { isAlive, LOG_FILE, pidFilePath, readPid, removePid, writePid } from './pidfile.js'
import { startupSummary } from './summary.js'
import type { CliSettings, ServerOption } from './cli-registry.js'
// node:fs without an ES import: its ES namespace loads fs streams, slowing every `berth` command down (docs/benchmarks.md, CLI start-up).
const { closeSync, openSync, readFileSync } = process.getBuiltinModule('node:fs')

const CLI_PATH = fileURLToPath(new URL('./cli.js', import.meta.url))
const START_DEADLINE_MS = 30_000
/** A stop ends the process by this many plugin deadlines ([server].plugin_timeout_ms) at the latest. */
const STOP_BOUND_DEADLINES = 2
const POLL_MS = 50

export interface ServerCommandDeps {
  settings(): Promise<CliSettings>
  /** Environment for the kernel, with the global options applied. */
  env(): NodeJS.ProcessEnv
  /** The global options again, to hand to a detached child. */
  globalArgs(): Promise<string[]>
}

/** Adds an option of `berth server` that sets an environment variable (plugins add theirs through the CLI registry). */
export type AddServerOption = (option: ServerOption) => void

/** The options plugins added, to find one again (install-service writes `--join` into an agent's unit). */
export interface ServerOptions {
  add: AddServerOption
  list(): readonly ServerOption[]
}

export function addServerCommands (program: Command, deps: ServerCommandDeps): ServerOptions {
  const extra: ServerOption[] = []
  const server = program.command('server')
    .description('run the server: every enabled plugin on its listener')
    .option('-d, --detach', 'start in the background; pid and log files go to the state directory')
    .action(async (options: Record<string, unknown>) => {
      const settings = await deps.settings()
      refuseSecondServer(settings.stateDir)
      const variables: Record<string, string> = {}
      for (const option of extra) {
        const value = options[server.options.find(o => o.flags === option.flags)?.attributeName() ?? '']
        if (typeof value === 'string') variables[option.variable] = value
        else if (value === true) variables[option.variable] = 'true'
      }
      if (options.detach === true) await startDetached(settings.stateDir, await deps.globalArgs(), variables)
      else await runForeground(settings, { ...deps.env(), ...variables })
    })
  addShutdownCommand(program, deps)
  return {
    add: option => {
      extra.push(option)
      server.option(option.flags, `${option.description} (sets ${option.variable})`)
    },
    list: () => extra
  }
}

function addShutdownCommand (program: Command, deps: ServerCommandDeps): void {
  program.command('shutdown')
    .description('stop the server running from this state directory')
    .option('--timeout <seconds>', 'how long to wait for it to stop', '30')
    .action(async (options: { timeout: string }) => {
      const { stateDir } = await deps.settings()
      const seconds = Number(options.timeout)
      if (!Number.isFinite(seconds) || seconds <= 0) throw new StartupError('--timeout must be a positive number of seconds')
      await shutdown(stateDir, seconds * 1000)
    })
}

/** Refuse when a live server runs from `stateDir`. */
export function refuseSecondServer (stateDir: string): void {
  const pid = readPid(stateDir)
  if (pid !== undefined && pid !== process.pid && isAlive(pid)) {
    throw new StartupError(`a server is already running from ${stateDir} (pid ${pid})`)
  }
}

async function runForeground (settings: CliSettings, env: NodeJS.ProcessEnv): Promise<void> {
  // The host runs the kernel and can restart it in place (reload), keeping the pid and the listeners.
  const { ServerHost } = await import('../host.js')
  const { format } = await import('node:util')
  const host = new ServerHost({ configFile: settings.configFile, env }, { fatal: () => { process.exit(1) } })
  const kernel = await host.start()
  writePid(kernel.config.stateDir, process.pid)
  // Each listener's bound URL: with port 0 in the configuration this line is where its port is read.
  const listeners = Object.fromEntries(kernel.listenerNames.map(name => [name, kernel.url(name).href]))
  kernel.log.info({ plugins: kernel.pluginNames, stateDir: kernel.config.stateDir, listeners }, 'berth server running')
  // A person at a terminal is told where things are; logs to a file or a pipe stay JSON lines only.
  const terminal = [process.stderr, process.stdout].find(stream => stream.isTTY)
  terminal?.write(startupSummary(kernel))
  // What libraries print (lmdb-js its failed commits) goes to the log as JSON lines too.
  console.error = (...args: unknown[]) => { host.kernel.log.error(format(...args)) }
  console.warn = (...args: unknown[]) => { host.kernel.log.warn(format(...args)) }
  let stopping = false
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stopping) process.exit(1)
    stopping = true
    host.kernel.log.info({ signal }, 'stopping')
    // Each step of a stop has its deadline; should they add up past this, the process ends anyway:
    // a supervisor never needs SIGKILL.
    const bound = STOP_BOUND_DEADLINES * host.kernel.config.server.plugin_timeout_ms
    setTimeout(() => {
      host.kernel.log.fatal(`the stop did not finish within ${bound / 1000} s; exiting`)
      process.exit(1)
    }, bound).unref()
    void host.stop().then(() => {
      removePid(kernel.config.stateDir, process.pid)
      process.exit(0)
    })
  }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)
}

async function startDetached (stateDir: string, globalArgs: string[], variables: Record<string, string>): Promise<void> {
  const { prepareStateDir } = await import('../store.js')
  prepareStateDir(stateDir)
  const logFile = join(stateDir, LOG_FILE)
  const fd = openSync(logFile, 'a', 0o600)
  const child = spawn(process.execPath, [CLI_PATH, ...globalArgs, 'server'], { detached: true, stdio: ['ignore', fd, fd], env: { ...process.env, ...variables } })
  closeSync(fd)
  let exitCode: number | null = null
  child.on('exit', code => { exitCode = code ?? 1 })
  const deadline = Date.now() + START_DEADLINE_MS
  while (Date.now() < deadline) {
    if (readPid(stateDir) === child.pid) {
      child.unref()
      console.log(`berth server started (pid ${child.pid}); log: ${logFile}`)
      return
    }
    if (exitCode !== null) throw new StartupError(lastLine(logFile) ?? `server exited with code ${exitCode}; see ${logFile}`)
    await delay(POLL_MS)
  }
  child.kill('SIGTERM')
  throw new StartupError(`server did not start within ${START_DEADLINE_MS / 1000} s; see ${logFile}`)
}

/** The server's own one-line failure (`berth: ...`), without the prefix. */
function lastLine (logFile: string): string | undefined {
  const lines = readFileSync(logFile, 'utf8').trim().split('\n')
  const failure = lines.reverse().find(line => line.startsWith('berth: '))
  return failure?.slice('berth: '.length)
}

async function shutdown (stateDir: string, timeoutMs: number): Promise<void> {
  const pid = readPid(stateDir)
  if (pid === undefined) throw new StartupError(`no server is running from ${stateDir} (no ${pidFilePath(stateDir)})`)
  if (!isAlive(pid)) {
    removePid(stateDir, pid)
    throw new StartupError(`no server is running from ${stateDir} (removed a stale pid file naming ${pid})`)
  }
  process.kill(pid, 'SIGTERM')
  const deadline = Date.now() + timeoutMs
  while (isAlive(pid)) {
    if (Date.now() > deadline) throw new StartupError(`server (pid ${pid}) did not stop within ${timeoutMs / 1000} s`)
    await delay(POLL_MS)
  }
  console.log(`berth server stopped (pid ${pid})`)
}

async function delay (ms: number): Promise<void> {
  await new Promise(resolve => setTimeout(resolve, ms))
}
