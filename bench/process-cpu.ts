// CPU time used by processes, from /proc (Linux): one process, a process with its descendants (a
// server whose workers are child processes), or a PostgreSQL server with its backends (the
// postmaster found by the port on its command line, and its children).
import { readdirSync, readFileSync } from 'node:fs'

/** Ticks of /proc/<pid>/stat (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100

/** [ppid, CPU seconds (user and system)] of `pid`, or undefined when it is gone. */
function statOf (pid: number): [number, number] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return [Number(fields[1]), (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND]
  } catch {
    return undefined
  }
}

function pids (): number[] {
  return readdirSync('/proc').filter(name => /^\d+$/.test(name)).map(Number)
}

/** CPU seconds process `pid` has used (0 once it is gone). */
export function cpuSeconds (pid: number): number {
  return statOf(pid)?.[1] ?? 0
}

/** CPU seconds used by process `pid` and its live descendants (their threads included). */
export function treeCpuSeconds (pid: number): number {
  const parents = new Map<number, number>()
  const seconds = new Map<number, number>()
  for (const each of pids()) {
    const stat = statOf(each)
    if (stat === undefined) continue
    parents.set(each, stat[0])
    seconds.set(each, stat[1])
  }
  const inTree = (each: number): boolean => {
    for (let at: number | undefined = each; at !== undefined && at > 1; at = parents.get(at)) if (at === pid) return true
    return false
  }
  let total = 0
  for (const [each, used] of seconds) if (inTree(each)) total += used
  return total
}

/** CPU seconds used by the PostgreSQL server listening on `port` and its live backends. */
export function postgresCpuSeconds (port: number): number {
  const postmaster = pids().find(pid => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(`\0-p\0${port}\0`)
    } catch {
      return false
    }
  })
  if (postmaster === undefined) throw new Error(`no PostgreSQL server on port ${port}`)
  let total = 0
  for (const pid of pids()) {
    const stat = statOf(pid)
    if (stat !== undefined && (pid === postmaster || stat[0] === postmaster)) total += stat[1]
  }
  return total
}
