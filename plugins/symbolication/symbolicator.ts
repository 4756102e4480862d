// Symbolication of faults: the fault's PC, else the call site its LR points to, resolved in the ELF
// uploaded for the device's build, and the backtrace unwound from its stack snapshot (unwind.ts: by the
// ELF's call-frame information, else by scanning); a
// symbolicated fault moves into the crash issue of its top frames. Work is read from the ingest storage's index of pending faults, by
// build (never from a scan of all faults): new faults as they are stored, a build's pending faults when
// its ELF arrives or its retry is due; the faults of one build in a batch are one resolver call.
import { readFile } from 'node:fs/promises'
import type { Logger } from 'pino'
import { codeSections, faultKey, localElf, pendingKey, sectionNamed, type BacktraceFrame, type CodeSection, type PendingKey, type SeriesKey, type StoredFault } from '../ingest/api.js'
import type { IngestService } from '../ingest/index.js'
import { ToolUnavailable, type Addr2line } from './addr2line.js'
import { readDebugFrame, type CallFrames } from './cfi.js'
import { backtraceOf, unwind } from './unwind.js'

/** Faults taken at a time, of new ones and of each build gone through. */
const BATCH = 2000
/** Longest wait between two tries of a build whose resolver failed. */
const MAX_RETRY_MS = 3_600_000
/** Builds whose code and call-frame information are kept in memory for unwinding. */
const CODE_CACHE_BUILDS = 8

const hex = (n: number): string => `0x${n.toString(16).padStart(8, '0')}`

/** What unwinding needs of an image: its code, and its call-frame information when it has some. */
interface Image {
  code: CodeSection[]
  cfi: CallFrames | undefined
}

interface Pending {
  key: PendingKey
  fault: StoredFault
}

/** A build whose resolver failed: how often in a row, why, and the timer of the next try (undefined once it is due). */
interface Retry {
  attempts: number
  reason: string
  timer: NodeJS.Timeout | undefined
}

/** What a batch's faults become: final symbols and backtraces (the faults leave the index), or one reason to wait with. */
type Outcome = { final: true, symbols: string[], backtraces: BacktraceFrame[][] } | { final: false, reason: string }

export interface SymbolicatorOptions {
  ingest: IngestService
  addr2line: Addr2line
  log: Logger
  outcomes: { inc: (labels: { outcome: string }) => void }
  /** First wait before a build whose resolver failed is tried again; it doubles with each failure. */
  retryMs: number
  /** Runs background work (the plugin's ctx.track: a stop waits for it). */
  background: (work: Promise<void>) => void
}

export class Symbolicator {
  readonly #options: SymbolicatorOptions
  /** Keys of faults stored since the last batch. */
  #fresh: SeriesKey[] = []
  /** Builds whose pending faults are gone through, and the last key read (undefined: from the start). */
  readonly #sweeps = new Map<string, PendingKey | undefined>()
  /** Builds whose resolver failed. */
  readonly #retries = new Map<string, Retry>()
  /** The code sections and call-frame information (undefined: the image has none) of recently resolved builds' images, oldest first. */
  readonly #code = new Map<string, Image>()
  #working = false
  #stopped = false

  constructor (options: SymbolicatorOptions) {
    this.#options = options
  }

  /** A fault was stored (its key in the ingest store's faults). */
  fault (key: SeriesKey): void {
    this.#fresh.push(key)
    this.#kick()
  }

  /** An ELF arrived for `buildId`: its pending faults are tried now, whatever failed before. */
  elf (buildId: string): void {
    clearTimeout(this.#retries.get(buildId)?.timer)
    this.#retries.delete(buildId)
    this.#sweep(buildId)
  }

  /** Go through every build's pending faults (at start). */
  all (): void {
    this.#options.background((async () => {
      for (const buildId of await this.#options.ingest.telemetry.storage.pendingBuilds()) this.#sweep(buildId)
    })())
  }

  /** Stop: no new batch, the resolver's runs killed, no retry timer left. */
  stop (): void {
    this.#stopped = true
    for (const retry of this.#retries.values()) clearTimeout(retry.timer)
    this.#options.addr2line.close()
  }

  #sweep (buildId: string): void {
    this.#sweeps.set(buildId, undefined)
    this.#kick()
  }

  #kick (): void {
    if (this.#working || this.#stopped) return
    this.#working = true
    this.#options.background(this.#work())
  }

  async #work (): Promise<void> {
    try {
      // Events are published in a loop after their commit: let the rest of this turn's faults queue up.
      await Promise.resolve()
      while (!this.#stopped) {
        const batches = await this.#take()
        if (batches.size === 0) break
        await Promise.all([...batches].map(async ([buildId, batch]) => { await this.#symbolicate(buildId, [...batch.values()]) }))
      }
    } finally {
      this.#working = false
    }
  }

  /** The next batch, by build: new faults, then a page of each build gone through; only faults still pending. */
  async #take (): Promise<Map<string, Map<string, Pending>>> {
    const { storage } = this.#options.ingest.telemetry
    const batches = new Map<string, Map<string, Pending>>()
    const add = (key: PendingKey, fault: StoredFault): void => {
      const batch = batches.get(key[0]) ?? new Map<string, Pending>()
      batches.set(key[0], batch.set(key.join(':'), { key, fault }))
    }
    for (const key of this.#fresh.splice(0, BATCH)) {
      const fault = await storage.fault(key)
      if (fault !== undefined && await storage.isPending(pendingKey(fault))) add(pendingKey(fault), fault)
    }
    for (const [buildId, after] of this.#sweeps) {
      const keys = await storage.pendingFaults(buildId, after, BATCH)
      if (keys.length < BATCH) this.#sweeps.delete(buildId)
      else this.#sweeps.set(buildId, keys[keys.length - 1])
      for (const key of keys) {
        const fault = await storage.fault(faultKey(key))
        if (fault !== undefined) add(key, fault)
      }
    }
    return batches
  }

  /** Resolve one build's batch and store what it gives, in one transaction. */
  async #symbolicate (buildId: string, batch: Pending[]): Promise<void> {
    const outcome = await this.#resolve(buildId, batch)
    if (this.#stopped) return
    const { telemetry } = this.#options.ingest
    const written = await telemetry.storage.setSymbols(batch.map(({ key }, i) => outcome.final
      ? { key, symbol: outcome.symbols[i], backtrace: outcome.backtraces[i], final: true }
      : { key, symbol: outcome.reason, final: false }))
    for (const symbol of written.symbols) this.#options.outcomes.inc({ outcome: symbol.startsWith('unsymbolicated') ? 'unresolved' : 'resolved' })
    // Symbolicated faults moved into their function's crash issue: a new issue or a regression is news.
    telemetry.publish(written.events)
  }

  async #resolve (buildId: string, batch: Pending[]): Promise<Outcome> {
    if (buildId === '') return { final: true, symbols: batch.map(() => 'unsymbolicated: the device reported no build id'), backtraces: batch.map(() => []) }
    const { telemetry } = this.#options.ingest
    const elf = await telemetry.storage.elf(buildId)
    if (elf === undefined) return { final: false, reason: `unsymbolicated: no ELF uploaded for build ${buildId}` }
    const retry = this.#retries.get(buildId)
    if (retry?.timer !== undefined) return { final: false, reason: retry.reason }
    const file = await localElf(telemetry.storage, telemetry.elfDir, elf)
    if (file === undefined) return { final: false, reason: `unsymbolicated: the ELF file of build ${buildId} is missing from the ELF directory; upload it again` }
    const { code, cfi } = await this.#imageOf(buildId, file)
    const unwound = batch.map(({ fault }) => unwind(cfi, code, fault))
    try {
      const found = await this.#options.addr2line.resolve(buildId, file, unwound.flatMap(u => u.frames.map(frame => frame.lookup)))
      this.#retries.delete(buildId)
      let at = 0
      const resolved = unwound.map(u => found.slice(at, at += u.frames.length))
      return {
        final: true,
        // The PC, else the call its LR returns to (frames 0 and 1): the innermost function there.
        symbols: batch.map(({ fault }, i) => resolved[i][0]?.[0] ?? resolved[i][1]?.[0] ?? `unsymbolicated: PC ${hex(fault.pc)} and LR ${hex(fault.lr)} are not in the image of build ${buildId}`),
        backtraces: unwound.map((u, i) => backtraceOf(u, resolved[i]))
      }
    } catch (err) {
      if (!(err instanceof ToolUnavailable)) throw err
      const reason = `unsymbolicated: ${err.message}`
      this.#retryLater(buildId, reason)
      return { final: false, reason }
    }
  }

  /** The code sections and call-frame information of a build's image, read once while it is among the recent ones. */
  async #imageOf (buildId: string, file: string): Promise<Image> {
    let image = this.#code.get(buildId)
    if (image === undefined) {
      const bytes = await readFile(file).catch(() => undefined)
      // Unreadable now: the faults resolve without frames from their stacks (addr2line says why it fails, if it does).
      if (bytes === undefined) return { code: [], cfi: undefined }
      // Copied out, so the rest of the file (debug information, mostly) is not kept alive by them.
      const code = codeSections(bytes).map(section => ({ address: section.address, bytes: Buffer.from(section.bytes) }))
      const frames = sectionNamed(bytes, '.debug_frame')
      image = { code, cfi: frames === undefined ? undefined : readDebugFrame(Buffer.from(frames), code) }
      if (this.#code.size >= CODE_CACHE_BUILDS) this.#code.delete(this.#code.keys().next().value as string)
    }
    this.#code.delete(buildId)
    this.#code.set(buildId, image)
    return image
  }

  /** Try the build's pending faults again after a wait that doubles with each failure in a row. */
  #retryLater (buildId: string, reason: string): void {
    if (this.#stopped) return
    const attempts = (this.#retries.get(buildId)?.attempts ?? 0) + 1
    const delay = Math.min(this.#options.retryMs * 2 ** (attempts - 1), MAX_RETRY_MS)
    const retry: Retry = { attempts, reason, timer: setTimeout(() => { retry.timer = undefined; this.#sweep(buildId) }, delay) }
    this.#retries.set(buildId, retry)
    this.#sweeps.delete(buildId)
    this.#options.log.warn({ build_id: buildId, reason, attempts, retry_in_ms: delay }, 'faults left unsymbolicated for now; they are tried again later')
  }
}
