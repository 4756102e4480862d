// Background daemons for tests: started with their output in a log file, ready when a probe says so
// (within a deadline), stopped with SIGTERM then SIGKILL. A daemon belongs to one test or to the run.
import { spawn } from 'node:child_process'
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { withLock } from './lock.js'
import { pollUntil } from './poll.js'

interface Teardown { teardown(fn: () => void | Promise<void>): void }

/** Run-scoped daemons are recorded here (with their logs) until `stopRunDaemons()`; BERTH_TEST_RUN_DIR gives a run its own, so two runs on one machine never stop each other's. */
export const RUN_DIR = process.env.BERTH_TEST_RUN_DIR ?? '/tmp/berth-test-run'
const RECORDS = join(RUN_DIR, 'daemons')

/** A path in RUN_DIR (created if needed). */
export function runFile (name: string): string {
  mkdirSync(RUN_DIR, { recursive: true })
  return join(RUN_DIR, name)
}

export interface DaemonOptions {
  command: string
  args: string[]
  /** Its stdout and stderr go here (the file is truncated first). */
  logFile: string
  env?: NodeJS.ProcessEnv
  cwd?: string
  /** Run it as this user and group (a daemon that refuses root, such as postgres). */
  uid?: number
  gid?: number
  /** Says whether the daemon serves yet; errors count as "not yet". */
  ready: () => boolean | Promise<boolean>
  /** Milliseconds to become ready (default 30 s). */
  timeout?: number
}

export interface Daemon {
  pid: number
  logFile: string
  stop(): Promise<void>
}

/** The process's start time (in clock ticks since boot), or undefined if it is gone or a zombie. */
function startTime (pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return fields[0] === 'Z' ? undefined : fields[19]
  } catch {
    return undefined
  }
}

/** True while the process runs (a zombie, which nobody reaped, counts as ended). */
export function isRunning (pid: number): boolean {
  return startTime(pid) !== undefined
}

function signal (pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err
  }
}

/** Stop a process: SIGTERM, wait up to `timeout` ms for it to end, then SIGKILL. */
export async function stopProcess (pid: number, timeout = 10_000): Promise<void> {
  if (!isRunning(pid)) return
  signal(pid, 'SIGTERM')
  try {
    await pollUntil(() => !isRunning(pid), { timeout, what: `process ${pid} to exit after SIGTERM` })
  } catch {
    signal(pid, 'SIGKILL')
    await pollUntil(() => !isRunning(pid), { timeout: 5_000, what: `process ${pid} to exit after SIGKILL` })
  }
}

/** A run-scoped daemon: its process, and the tap runs (runner pids) using it. */
interface RunRecord { pid: number, start?: string, users: number[] }

/** The tap runner: the parent of every test file and of the `after` script of one run. */
const RUNNER = process.ppid

function readRecord (path: string): RunRecord {
  const record = JSON.parse(readFileSync(path, 'utf8')) as RunRecord
  return { ...record, users: record.users ?? [] }
}

/** Count this run as a user of the run-scoped daemon `name`, if the tests started it (else nothing). */
export async function useRunDaemon (name: string): Promise<void> {
  const path = join(RECORDS, `${name}.json`)
  await withLock(`run daemon ${name}`, async () => {
    if (!existsSync(path)) return
    const record = readRecord(path)
    if (!record.users.includes(RUNNER)) writeFileSync(path, JSON.stringify({ ...record, users: [...record.users, RUNNER] }))
  })
}

/** A server shared by every test file of a run, as recorded in RUN_DIR: its data directory, and what its daemons need. */
export interface SharedServer { dir: string }

export interface SharedServerOptions<R extends SharedServer> {
  /** The run daemons it consists of (as named to `startDaemon`). */
  daemons: string[]
  /** Whether the recorded server still serves. */
  serves: (record: R) => Promise<boolean>
  /** Whether all its processes have ended (then its data directory goes). */
  ended: (record: R) => boolean
  /** Start a new one (its daemons owned by 'run'); the record to keep. */
  start: () => Promise<R>
}

/**
 * The run's server `name`: the recorded one when it still serves, else a new one (an earlier run's
 * stopped server has its data directory removed first). One process starts it, the others wait and
 * reuse it; this run is counted as a user of each of its daemons (stopped by `stopRunDaemons()`).
 */
export async function sharedServer<R extends SharedServer> (name: string, options: SharedServerOptions<R>): Promise<R> {
  const server = await withLock(`run daemon ${name}`, async () => {
    const path = runFile(`${name}-server.json`)
    if (existsSync(path)) {
      const known = JSON.parse(readFileSync(path, 'utf8')) as R
      if (await options.serves(known)) return known
      if (options.ended(known) && typeof known.dir === 'string') rmSync(known.dir, { recursive: true, force: true })
    }
    const record = await options.start()
    writeFileSync(path, JSON.stringify({ ...record, daemons: options.daemons }))
    return record
  })
  for (const daemon of options.daemons) await useRunDaemon(daemon)
  return server
}

function lastLogLine (logFile: string): string {
  try {
    return readFileSync(logFile, 'utf8').trim().split('\n').at(-1) ?? ''
  } catch {
    return ''
  }
}

/**
 * Start `options.command` and wait until `options.ready()` holds. `owner` is the test whose teardown
 * stops it, or 'run': then it outlives this process, is recorded in RUN_DIR and `stopRunDaemons()`
 * stops it. If it exits or is not ready in time it is stopped and the error quotes its log.
 */
export async function startDaemon (owner: Teardown | 'run', name: string, options: DaemonOptions): Promise<Daemon> {
  const { command, args, logFile, env, cwd, uid, gid, ready, timeout = 30_000 } = options
  const out = openSync(logFile, 'w')
  const child = spawn(command, args, { cwd, env, uid, gid, stdio: ['ignore', out, out], detached: owner === 'run' })
  closeSync(out)
  const pid = await new Promise<number>((resolve, reject) => {
    child.once('error', reject)
    child.once('spawn', () => { resolve(child.pid as number) })
  })
  let exited: string | undefined
  child.once('exit', (code, sig) => { exited = `exited (${code ?? sig})` })
  const record = join(RECORDS, `${name}.json`)
  const daemon: Daemon = {
    pid,
    logFile,
    stop: async () => {
      await stopProcess(pid)
      if (owner === 'run') rmSync(record, { force: true })
    }
  }
  if (owner === 'run') {
    child.unref()
    mkdirSync(RECORDS, { recursive: true })
    const entry: RunRecord = { pid, start: startTime(pid), users: [RUNNER] }
    writeFileSync(record, JSON.stringify(entry))
  } else {
    owner.teardown(daemon.stop)
  }
  try {
    await pollUntil(async () => exited !== undefined || await ready(), { timeout, what: `${name} to be ready` })
    if (exited !== undefined) throw new Error(`${name} ${exited}`)
  } catch (err) {
    await daemon.stop()
    throw new Error(`${(err as Error).message}; ${logFile}: ${lastLogLine(logFile)}`)
  }
  return daemon
}

/**
 * At the end of a run: leave each run-scoped daemon this run used, and stop (up to 30 s) those no
 * other live run still uses. Returns the names of the daemons stopped.
 */
export async function stopRunDaemons (): Promise<string[]> {
  let files: string[]
  try {
    files = readdirSync(RECORDS).filter(file => file.endsWith('.json'))
  } catch {
    return []
  }
  const stopped: string[] = []
  for (const file of files) {
    const name = file.slice(0, -'.json'.length)
    const path = join(RECORDS, file)
    await withLock(`run daemon ${name}`, async () => {
      const record = readRecord(path)
      const users = record.users.filter(user => user !== RUNNER && isRunning(user))
      if (users.length > 0) {
        writeFileSync(path, JSON.stringify({ ...record, users }))
        return
      }
      // A pid whose start time differs is another process that reused the number: leave it alone.
      if (record.start !== undefined && startTime(record.pid) === record.start) {
        await stopProcess(record.pid, 30_000)
        stopped.push(name)
      }
      rmSync(path, { force: true })
    })
  }
  await removeStoppedServers()
  return stopped
}

/** Remove the data directory and record of every shared server whose daemons have all been stopped. */
async function removeStoppedServers (): Promise<void> {
  for (const file of readdirSync(RUN_DIR).filter(file => file.endsWith('-server.json'))) {
    await withLock(`run daemon ${file.slice(0, -'-server.json'.length)}`, async () => {
      const path = join(RUN_DIR, file)
      if (!existsSync(path)) return
      const known = JSON.parse(readFileSync(path, 'utf8')) as SharedServer & { daemons?: string[] }
      if (known.daemons === undefined || known.daemons.some(daemon => existsSync(join(RECORDS, `${daemon}.json`)))) return
      rmSync(known.dir, { recursive: true, force: true })
      rmSync(path, { force: true })
    })
  }
}
