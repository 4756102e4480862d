// Run the built `berth` command in a child process, as an operator would: with its output in pipes,
// or on a pseudo-terminal of its own (python3's pty module), as in a person's terminal.
import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { pollUntil } from './poll.js'

export const CLI = fileURLToPath(new URL('../../dist/kernel/cli/cli.js', import.meta.url))

/**
 * The child runs compiled JavaScript: tap's loaders (NODE_OPTIONS) would only slow it down. The telemetry,
 * app and proxy listeners take free ports unless a test says otherwise, so parallel servers never collide.
 */
function childEnv (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const { NODE_OPTIONS: _loaders, ...env } = process.env
  return { BERTH_TELEMETRY_PORT: '0', BERTH_APP_PORT: '0', PROXY_HTTP_PORT: '0', PROXY_HTTPS_PORT: '0', PROXY_WORKERS: '1', ...env, ...extra }
}

export interface CliResult {
  code: number | null
  stdout: string
  stderr: string
}

/** Run `berth ...args` to completion (bounded by `timeout` ms); `input` is its standard input, written at once and ended (else it has none). */
export async function runCli (args: string[], options: { cwd?: string, env?: NodeJS.ProcessEnv, timeout?: number, input?: string } = {}): Promise<CliResult> {
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd: options.cwd, env: childEnv(options.env), stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'], timeout: options.timeout ?? 60_000
  })
  child.stdin?.end(options.input)
  let stdout = ''
  let stderr = ''
  child.stdout?.on('data', (d: Buffer) => { stdout += d.toString() })
  child.stderr?.on('data', (d: Buffer) => { stderr += d.toString() })
  const code = await new Promise<number | null>(resolve => child.on('close', resolve))
  return { code, stdout, stderr }
}

/**
 * Run a command on a new pseudo-terminal (its standard input, output and error; it is the session
 * leader with the terminal as its controlling one, so it gets SIGHUP if this relay dies), relay what
 * it writes to standard output, pass SIGTERM and SIGINT on, and exit with its code.
 */
const IN_TERMINAL = `
import fcntl, os, pty, signal, subprocess, sys, termios
master, slave = pty.openpty()
def own_terminal():
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)
child = subprocess.Popen(sys.argv[1:], stdin=slave, stdout=slave, stderr=slave, preexec_fn=own_terminal)
os.close(slave)
for number in (signal.SIGTERM, signal.SIGINT):
    signal.signal(number, lambda received, frame: child.send_signal(received))
while True:
    try:
        data = os.read(master, 65536)
    except OSError:
        break
    if not data:
        break
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()
sys.exit(child.wait())
`

export type RunningCli = ChildProcess & {
  /** Standard output and error as they came. */
  output: () => string
  /** Standard output alone (on a terminal: everything the terminal showed). */
  stdout: () => string
}

/** Start `berth ...args` and leave it running; the caller stops it. `terminal` runs it on a pseudo-terminal (needs python3). */
export function spawnCli (args: string[], options: { cwd?: string, env?: NodeJS.ProcessEnv, terminal?: boolean } = {}): RunningCli {
  const command = [process.execPath, CLI, ...args]
  const [file, ...rest] = options.terminal === true ? ['python3', '-c', IN_TERMINAL, ...command] : command
  const child = spawn(file, rest, { cwd: options.cwd, env: childEnv(options.env), stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  let stdout = ''
  child.stdout.on('data', (d: Buffer) => { output += d.toString(); stdout += d.toString() })
  child.stderr.on('data', (d: Buffer) => { output += d.toString() })
  return Object.assign(child, { output: () => output, stdout: () => stdout })
}

/** Wait for a child to exit, returning its code (or the signal name). */
export async function exited (child: ChildProcess): Promise<number | string> {
  if (child.exitCode !== null) return child.exitCode
  if (child.signalCode !== null) return child.signalCode
  return await new Promise(resolve => child.on('exit', (code, signal) => { resolve(code ?? signal ?? 'unknown') }))
}

interface Teardown { teardown(fn: () => void | Promise<void>): void }

/** `berth ...args` started for a test and killed (SIGKILL) at its end if still running. */
export function spawnCliForTest (t: Teardown, args: string[], options: Parameters<typeof spawnCli>[1] = {}): RunningCli {
  const child = spawnCli(args, options)
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL')
      await exited(child)
    }
  })
  return child
}

/** Wait until `url` answers 2xx, failing at once (with its output) when the child exits first. */
export async function untilAnswers (child: RunningCli, url: string | URL, what: string, timeout = 30_000): Promise<void> {
  await pollUntil(async () => {
    if (child.exitCode !== null) throw new Error(`${what} exited: ${child.output()}`)
    return (await fetch(url)).ok
  }, { timeout, what })
}

/** The listeners' URLs in a `berth server running` log line among `text`'s JSON lines, if there is one. */
export function listenerUrlsIn (text: string): Record<string, URL> | undefined {
  const line = text.split('\n').find(l => l.includes('"msg":"berth server running"'))
  if (line === undefined) return undefined
  const { listeners } = JSON.parse(line) as { listeners: Record<string, string> }
  return Object.fromEntries(Object.entries(listeners).map(([name, url]) => [name, new URL(url)]))
}

/**
 * The URL each listener of a `berth server` child is bound to, from its `berth server running` log
 * line: a port configured as 0 is read back here, never chosen by the test beforehand.
 */
export async function boundUrls (child: RunningCli, what: string, timeout = 60_000): Promise<Record<string, URL>> {
  try {
    return await pollUntil(() => {
      const urls = listenerUrlsIn(child.stdout())
      if (urls === undefined && child.exitCode !== null) throw new Error(`${what} exited: ${child.output()}`)
      return urls
    }, { timeout, what: `${what}'s listeners` })
  } catch (err) {
    if (child.exitCode !== null) throw err
    // Still running without its line: what it said so far tells where its start stopped.
    throw new Error(`${(err as Error).message}; its output so far: ${child.output().slice(-4000)}`)
  }
}

/** The same, for a server started with `--detach`, from its log file. */
export async function boundUrlsInLog (logFile: string, what: string, timeout = 30_000): Promise<Record<string, URL>> {
  return await pollUntil(() => {
    try { return listenerUrlsIn(readFileSync(logFile, 'utf8')) } catch { return undefined }
  }, { timeout, what: `${what}'s listeners` })
}
