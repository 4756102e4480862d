// Storage faults are answers, not crashes: a commit that fails for want of space or an I/O error (in
// LMDB or a file a plugin writes) is recognised, answered 507, and opens the store's breaker: writes
// are refused at once (reads go on) until a probe write succeeds, checked every few seconds, so the
// server recovers by itself when space returns. A store over its size limit refuses writes the same
// way. LMDB rejects the promises of a failed commit, some of which nobody awaits: the process-level
// handler installed here takes those for what they are instead of letting them end the process.
import { BerthError, KERNEL_CODES } from './errors.js'

/** errno values and LMDB codes that mean the disk, not the request, is at fault. */
const STORAGE_ERRNOS = new Set([5, 28, 30, 122]) // EIO, ENOSPC, EROFS, EDQUOT
const STORAGE_CODES = new Set(['EIO', 'ENOSPC', 'EROFS', 'EDQUOT'])
const MDB_MAP_FULL = -30792
/** lmdb-js rejects every write of a failed commit with this message (the cause in `commitError`). */
const LMDB_COMMIT_FAILED = 'Commit failed'

const DESCRIPTIONS: Record<string, string> = {
  ENOSPC: 'no space left on the device',
  EDQUOT: 'the disk quota is exhausted',
  EIO: 'an I/O error',
  EROFS: 'the file system is read-only'
}

export class StorageFault extends BerthError {
  constructor (message: string, options?: ErrorOptions) { super(message, KERNEL_CODES.STORAGE_FAULT.status, KERNEL_CODES.STORAGE_FAULT.code, options) }
}

/** Whether `err` is a storage fault: the disk or the store is full or failing, whatever was asked. */
export function isStorageFault (err: unknown): boolean {
  if (err instanceof StorageFault) return true
  if (!(err instanceof Error)) return false
  const { code, errno } = err as NodeJS.ErrnoException & { code?: unknown }
  if (typeof code === 'string' && STORAGE_CODES.has(code)) return true
  if (typeof code === 'number' && (STORAGE_ERRNOS.has(code) || code === MDB_MAP_FULL)) return true
  if (typeof errno === 'number' && STORAGE_ERRNOS.has(Math.abs(errno))) return true
  return err.message.startsWith(LMDB_COMMIT_FAILED) || /MDB_MAP_FULL|No space left on device|Input\/output error/.test(err.message)
}

/** What the fault is, in a few words. */
export function describeStorageFault (err: unknown): string {
  if (err instanceof StorageFault) return err.message
  const code = (err as NodeJS.ErrnoException).code
  if (typeof code === 'string' && code in DESCRIPTIONS) return `${DESCRIPTIONS[code]} (${code})`
  if (typeof code === 'number' && code === 28) return `${DESCRIPTIONS.ENOSPC} (ENOSPC)`
  if (typeof code === 'number' && code === 5) return `${DESCRIPTIONS.EIO} (EIO)`
  // lmdb-js says only "Commit failed (see commitError for details)", and its commitError is not always an error.
  const cause = (err as { commitError?: unknown }).commitError
  if (cause instanceof Error && cause !== err) return describeStorageFault(cause)
  if (err instanceof Error && err.message.startsWith(LMDB_COMMIT_FAILED)) return 'a write could not be committed (the disk is full or failing)'
  if (err instanceof Error && /MDB_MAP_FULL/.test(err.message)) return 'the store reached its map size (MDB_MAP_FULL)'
  return `a write could not be committed (${err instanceof Error ? err.message : String(err)})`
}

/**
 * Throw a StorageFault unless the file system of `dir` has `bytes` free: for work that must not begin
 * when its outcome could not be written (LMDB may take a small write into pages it holds already).
 */
export async function assertRoom (dir: string, bytes: number): Promise<void> {
  // Not an ES import: kernel/index.ts re-exports this module, and every `berth` command loads that.
  const { bavail, bsize } = await process.getBuiltinModule('node:fs/promises').statfs(dir)
  const free = bavail * bsize
  if (free < bytes) throw new StorageFault(`the server cannot write its state now: no space left on the device (${free} bytes free where the state is kept, ${bytes} needed); writes resume by themselves once there is room`)
}

export interface StorageState {
  status: 'ok' | 'degraded'
  reason?: string
  since?: string
}

/** A store's breaker: open while its disk fails or it is over its limit; a probe write closes it. */
export class StorageMonitor {
  readonly #where: string
  readonly #probe: () => Promise<void>
  readonly #size: () => number
  readonly #limitBytes: number
  #fault: { reason: string, since: number } | undefined
  #timer: NodeJS.Timeout | undefined
  #probing = false
  /** Told when the breaker opens (with the reason) and closes (undefined). */
  onChange: (reason: string | undefined) => void = () => {}

  /**
   * `probe` writes a little and resolves once committed; `size` is the store's bytes in use; a
   * `limitBytes` of 0 sets no limit.
   */
  constructor (where: string, options: { probe: () => Promise<void>, size: () => number, limitBytes: number }) {
    this.#where = where
    this.#probe = options.probe
    this.#size = options.size
    this.#limitBytes = options.limitBytes
    monitors.add(this)
  }

  /** Writes are refused now (the breaker is open). */
  get refusing (): boolean {
    return this.#fault !== undefined
  }

  /** The error a refused write gets. */
  refusal (): StorageFault {
    return new StorageFault(`the server cannot write its state now: ${this.#fault?.reason ?? 'storage fault'}; reads still work, and writes resume by themselves once the store can take them`)
  }

  /** A write failed with a storage fault: open the breaker. */
  failed (err: unknown): void {
    if (this.#fault === undefined) this.#open(`${this.#where}: ${describeStorageFault(err)}`)
  }

  #open (reason: string): void {
    this.#fault = { reason, since: Date.now() }
    this.onChange(reason)
  }

  /** Check the limit and, while the breaker is open, whether a write gets through again. */
  async check (): Promise<void> {
    if (this.#probing) return
    this.#probing = true
    try {
      const size = this.#size()
      if (this.#limitBytes > 0 && size >= this.#limitBytes) {
        if (this.#fault === undefined) this.#open(`${this.#where}: the store holds ${mib(size)} of its limit of ${mib(this.#limitBytes)} ([server].store_limit_mb)`)
        return
      }
      if (this.#fault === undefined) return
      await this.#probe()
      this.#fault = undefined
      this.onChange(undefined)
    } catch (err) {
      if (!isStorageFault(err)) throw err
    } finally {
      this.#probing = false
    }
  }

  /** Check every `intervalMs` until stopped. */
  start (intervalMs: number, onError: (err: unknown) => void): void {
    this.#timer = setInterval(() => { this.check().catch(onError) }, intervalMs)
    this.#timer.unref()
  }

  stop (): void {
    clearInterval(this.#timer)
    monitors.delete(this)
  }

  state (): StorageState {
    return this.#fault === undefined
      ? { status: 'ok' }
      : { status: 'degraded', reason: `${this.#fault.reason}; writes are refused with 507 until it can take them`, since: new Date(this.#fault.since).toISOString() }
  }
}

const mib = (bytes: number): string => `${(bytes / 1048576).toFixed(1)} MiB`

/** The stores open in this process: a fault nobody awaited is noted on each (one store per server process). */
const monitors = new Set<StorageMonitor>()

/** A storage fault seen outside a store's own calls (a request's error, a file write): open every breaker. */
export function noteStorageFault (err: unknown): void {
  for (const monitor of monitors) monitor.failed(err)
}

let handlerInstalled = false

/**
 * Once per process: an unhandled rejection that is a storage fault (LMDB rejects every write of a
 * failed commit, awaited or not) opens the breakers instead of ending the process; any other keeps
 * Node's default, an uncaught exception.
 */
export function installStorageFaultHandler (): void {
  if (handlerInstalled) return
  handlerInstalled = true
  process.on('unhandledRejection', (reason: unknown) => {
    if (isStorageFault(reason)) {
      noteStorageFault(reason)
      return
    }
    throw reason
  })
}
