// The pid file in the state directory: written (0600) once the server listens, removed when it stops.
import { join } from 'node:path'
// node:fs without an ES import: its ES namespace loads fs streams, slowing every `berth` command down (docs/benchmarks.md, CLI start-up).
const { existsSync, readFileSync, rmSync, writeFileSync } = process.getBuiltinModule('node:fs')

export const PID_FILE = 'berth.pid'
export const LOG_FILE = 'berth.log'

export function pidFilePath (stateDir: string): string {
  return join(stateDir, PID_FILE)
}

/** The pid recorded in the state directory, if any (alive or not). */
export function readPid (stateDir: string): number | undefined {
  const file = pidFilePath(stateDir)
  if (!existsSync(file)) return undefined
  const pid = Number.parseInt(readFileSync(file, 'utf8').trim(), 10)
  return Number.isInteger(pid) && pid > 0 ? pid : undefined
}

/** Whether `pid` is a live process (a zombie, exited but not yet reaped, counts as gone). */
export function isAlive (pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
  const stat = `/proc/${pid}/stat`
  if (!existsSync(stat)) return true
  try {
    return readFileSync(stat, 'utf8').replace(/^.*\) /s, '')[0] !== 'Z'
  } catch {
    return false
  }
}

export function writePid (stateDir: string, pid: number): void {
  writeFileSync(pidFilePath(stateDir), `${pid}\n`, { mode: 0o600 })
}

/** Remove the pid file if it still names `pid`. */
export function removePid (stateDir: string, pid: number): void {
  if (readPid(stateDir) === pid) rmSync(pidFilePath(stateDir), { force: true })
}
