// Symbolication of faults: the fault's PC, else the call site its LR points to, resolved in the ELF
// uploaded for the device's build. A fault that cannot be resolved keeps a clear
// "unsymbolicated: <reason>"; one waiting for its ELF is resolved when the ELF arrives.
import type { Logger } from 'pino'
import { elfPath } from '../ingest/elf-files.js'
import type { IngestService } from '../ingest/index.js'
import type { SeriesKey, StoredFault } from '../ingest/store.js'
import { ToolUnavailable, type Addr2line } from './addr2line.js'

const hex = (n: number): string => `0x${n.toString(16).padStart(8, '0')}`

export class Symbolicator {
  readonly #ingest: IngestService
  readonly #addr2line: Addr2line
  readonly #log: Logger
  readonly resolved: { inc: (labels: { outcome: string }) => void }

  constructor (ingest: IngestService, addr2line: Addr2line, log: Logger, resolved: { inc: (labels: { outcome: string }) => void }) {
    this.#ingest = ingest
    this.#addr2line = addr2line
    this.#log = log
    this.resolved = resolved
  }

  #queue: Promise<unknown> = Promise.resolve()

  /** Symbolicate the faults `select` picks, one run after the other (a new fault, those of a build whose ELF arrived, those never tried). */
  async symbolicate (select: (fault: StoredFault, key: SeriesKey) => boolean): Promise<number> {
    const run = this.#queue.then(async () => await this.#symbolicate(select))
    this.#queue = run.catch(() => undefined)
    return await run
  }

  async #symbolicate (select: (fault: StoredFault, key: SeriesKey) => boolean): Promise<number> {
    const faults = this.#ingest.telemetry.store.faults
    const picked = [...faults.getRange()].filter(({ key, value }) => select(value, key))
    for (const { key, value } of picked) {
      const symbol = await this.#symbolOf(value)
      await faults.put(key, { ...value, symbol })
      this.resolved.inc({ outcome: symbol.startsWith('unsymbolicated') ? 'unresolved' : 'resolved' })
    }
    return picked.length
  }

  async #symbolOf (fault: StoredFault): Promise<string> {
    if (fault.build_id === null) return 'unsymbolicated: the device reported no build id'
    const elf = this.#ingest.telemetry.store.elves.get(fault.build_id)
    if (elf === undefined) return `unsymbolicated: no ELF uploaded for build ${fault.build_id}`
    // LR carries the Thumb bit and points after the call: 2 bytes back is inside the call instruction.
    const callSite = ((fault.lr & ~1) >>> 0) - 2
    try {
      const [pc, caller] = await this.#addr2line.resolve(fault.build_id, elfPath(this.#ingest.telemetry.elfDir, elf), [(fault.pc & ~1) >>> 0, callSite])
      const symbol = pc ?? caller
      return symbol ?? `unsymbolicated: PC ${hex(fault.pc)} and LR ${hex(fault.lr)} are not in the image of build ${fault.build_id}`
    } catch (err) {
      if (!(err instanceof ToolUnavailable)) throw err
      this.#log.warn({ build_id: fault.build_id, err: err.message }, 'fault left unsymbolicated')
      return `unsymbolicated: ${err.message}`
    }
  }
}
