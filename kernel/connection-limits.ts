// Connection limits: one client cannot take every listener offline. Every connection any listener
// accepts (fastify or raw) is counted by client address and in total; one over either cap is closed
// at once, so descriptors stay in reserve for plugins' own sockets, LMDB, outgoing calls and other
// clients. The process's descriptor limit is raised to its hard limit at start where it may be.
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import type { Socket } from 'node:net'

/** Descriptors kept out of the connection budget (files, plugins' own sockets, outgoing calls, LMDB). */
export const DESCRIPTOR_RESERVE = 1024
const MIN_TOTAL = 64

export interface ConnectionLimitSettings {
  /** Connections one client address may hold at once on all listeners together. */
  perAddress: number
  /** Connections on all listeners together; 0: the descriptor limit less DESCRIPTOR_RESERVE. */
  total: number
}

export interface DescriptorLimits {
  soft: number
  hard: number
}

/** The process's open-file limits, from /proc (undefined where there is no /proc). */
export function descriptorLimits (pid: number | 'self' = 'self'): DescriptorLimits | undefined {
  try {
    const line = readFileSync(`/proc/${pid}/limits`, 'utf8').split('\n').find(l => l.startsWith('Max open files'))
    const [soft, hard] = (line ?? '').split(/\s{2,}/).slice(1, 3).map(value => value === 'unlimited' ? Number.MAX_SAFE_INTEGER : Number(value))
    return Number.isFinite(soft) && Number.isFinite(hard) ? { soft, hard } : undefined
  } catch {
    return undefined
  }
}

let raised = false

/**
 * Once per process: raise the soft descriptor limit to the hard one (Node has no setrlimit; util-linux's
 * prlimit sets it for a process of the same user). Returns the limits in force, and what went wrong.
 */
export function raiseDescriptorLimit (): { limits: DescriptorLimits | undefined, problem?: string } {
  const before = descriptorLimits()
  if (raised || before === undefined || before.soft >= before.hard) return { limits: before }
  raised = true
  try {
    execFileSync('prlimit', ['--pid', String(process.pid), `--nofile=${before.hard}:${before.hard}`], { stdio: 'ignore', timeout: 5000 })
  } catch (err) {
    return { limits: before, problem: `the descriptor limit stays at ${before.soft} (prlimit: ${(err as Error).message.split('\n')[0]}); raise it with LimitNOFILE= in the unit or ulimit -n` }
  }
  return { limits: descriptorLimits() ?? before }
}

/** Counts of connections by client address and in total, shared by every listener of a server. */
export class ConnectionLimits {
  readonly #byAddress = new Map<string, number>()
  #total = 0
  #settings: ConnectionLimitSettings = { perAddress: Number.MAX_SAFE_INTEGER, total: Number.MAX_SAFE_INTEGER }
  /** Connections refused, by cap, since start. */
  readonly refused = { per_address: 0, total: 0 }

  /** Set the caps (a server's config; a reload may change them). A total of 0 follows the descriptor limit. */
  configure (settings: ConnectionLimitSettings, descriptors = descriptorLimits()): void {
    const total = settings.total > 0
      ? settings.total
      : Math.max(MIN_TOTAL, (descriptors?.soft ?? Number.MAX_SAFE_INTEGER) - DESCRIPTOR_RESERVE)
    this.#settings = { perAddress: settings.perAddress, total }
  }

  get settings (): Readonly<ConnectionLimitSettings> {
    return this.#settings
  }

  get total (): number {
    return this.#total
  }

  /** Count a new connection, or refuse it (false) when its address or the server is at its cap. */
  admit (socket: Socket): boolean {
    const address = socket.remoteAddress ?? ''
    const held = this.#byAddress.get(address) ?? 0
    if (this.#total >= this.#settings.total) {
      this.refused.total++
      return false
    }
    if (held >= this.#settings.perAddress) {
      this.refused.per_address++
      return false
    }
    this.#byAddress.set(address, held + 1)
    this.#total++
    socket.once('close', () => {
      this.#total--
      const left = (this.#byAddress.get(address) ?? 1) - 1
      if (left === 0) this.#byAddress.delete(address)
      else this.#byAddress.set(address, left)
    })
    return true
  }
}
