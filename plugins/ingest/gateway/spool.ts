// A spool on disk: frames are appended (and synced) before anything else happens to them, and two
// offsets record how far the server has answered (`acknowledged`) and how far a request may have
// carried frames to it (`attempted`): a frame before `attempted` goes out again with the
// retransmission bit, so the server tells a copy of what it stored from a new boot's frame. Frames are
// forwarded in order from the acknowledged offset, so a server that is down, a restart or a crash lose
// nothing. Pending bytes are bounded: past the cap the oldest frames are dropped and counted.
import { closeSync, existsSync, fstatSync, fsyncSync, mkdirSync, openSync, readFileSync, readSync, renameSync, writeFileSync, writeSync } from 'node:fs'
import { join } from 'node:path'

const LOG = 'spool.log'
const OFFSETS = 'spool.offset'
/** Rewrite the log once this much of it has been delivered (and at least half of it). */
const COMPACT_BYTES = 1 << 20

export interface SpooledFrame {
  bytes: Buffer
  /** A request may have carried it to the server before. */
  sentBefore: boolean
}

export interface Batch {
  frames: SpooledFrame[]
  /** Offset after the batch. */
  end: number
}

export class Spool {
  readonly #dir: string
  readonly #maxBytes: number
  #fd: number
  #acknowledged: number
  #attempted: number
  /** Frames dropped to keep the spool within its cap, since it was opened. */
  overflowed = 0

  /** `maxBytes`: the most pending bytes (frames and their 4-byte lengths) kept; older ones are dropped. */
  constructor (dir: string, maxBytes = Number.POSITIVE_INFINITY) {
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    this.#dir = dir
    this.#maxBytes = maxBytes
    this.#fd = openSync(join(dir, LOG), 'a+', 0o600)
    const size = this.size
    const [acknowledged, attempted] = existsSync(join(dir, OFFSETS)) ? readFileSync(join(dir, OFFSETS), 'utf8').trim().split(' ').map(Number) : [0, 0]
    this.#acknowledged = Number.isInteger(acknowledged) && acknowledged >= 0 && acknowledged <= size ? acknowledged : 0
    // An offsets file without the second number (an older gateway's) may have sent anything pending.
    this.#attempted = Number.isInteger(attempted) && attempted >= this.#acknowledged && attempted <= size ? attempted : size
  }

  get size (): number {
    return fstatSync(this.#fd).size
  }

  /** Bytes of frames not yet acknowledged. */
  get pending (): number {
    return this.size - this.#acknowledged
  }

  /** Append frames and sync them to disk; past the cap, the oldest pending frames are dropped. */
  append (frames: readonly Buffer[]): void {
    if (frames.length === 0) return
    const records = frames.flatMap(frame => {
      const length = Buffer.alloc(4)
      length.writeUInt32LE(frame.length)
      return [length, frame]
    })
    writeSync(this.#fd, Buffer.concat(records))
    fsyncSync(this.#fd)
    this.#keepWithinCap()
  }

  /** Up to `maxBytes` of frames from the acknowledged offset on (at least one). */
  next (maxBytes: number): Batch {
    const frames: SpooledFrame[] = []
    let at = this.#acknowledged
    const size = this.size
    let bytes = 0
    while (at + 4 <= size) {
      const length = this.#lengthAt(at)
      if (at + 4 + length > size || (frames.length > 0 && bytes + length > maxBytes)) break
      const frame = Buffer.alloc(length)
      readSync(this.#fd, frame, 0, length, at + 4)
      frames.push({ bytes: frame, sentBefore: at < this.#attempted })
      bytes += length
      at += 4 + length
    }
    return { frames, end: at }
  }

  /** A request is about to carry the frames before `end` (recorded before it leaves). */
  attempt (end: number): void {
    if (end <= this.#attempted) return
    this.#attempted = end
    this.#writeOffsets()
  }

  /** The request for the frames before `end` never reached the server: they were not sent after all. */
  notSent (previousAttempted: number): void {
    this.#attempted = Math.max(this.#acknowledged, previousAttempted)
    this.#writeOffsets()
  }

  get attempted (): number {
    return this.#attempted
  }

  /** The server has answered every frame before `end`. */
  acknowledge (end: number): void {
    this.#acknowledged = end
    this.#attempted = Math.max(this.#attempted, end)
    this.#writeOffsets()
    this.#compact()
  }

  close (): void {
    closeSync(this.#fd)
  }

  #lengthAt (at: number): number {
    const head = Buffer.alloc(4)
    readSync(this.#fd, head, 0, 4, at)
    return head.readUInt32LE(0)
  }

  /** Drop the oldest pending frames while the pending bytes pass the cap. */
  #keepWithinCap (): void {
    if (this.pending <= this.#maxBytes) return
    let at = this.#acknowledged
    const size = this.size
    while (size - at > this.#maxBytes && at + 4 <= size) {
      at += 4 + this.#lengthAt(at)
      this.overflowed++
    }
    this.acknowledge(Math.min(at, size))
  }

  /** Rewrite the log without its delivered part once that is most of it. */
  #compact (): void {
    const size = this.size
    if (this.#acknowledged < COMPACT_BYTES || this.#acknowledged * 2 < size) return
    const rest = Buffer.alloc(size - this.#acknowledged)
    readSync(this.#fd, rest, 0, rest.length, this.#acknowledged)
    const attempted = this.#attempted - this.#acknowledged
    // First: offsets valid for both logs that treat every frame as possibly sent, so a crash between
    // the steps sends frames again as retransmissions (answered duplicate), never as new ones.
    this.#writeOffsetsRaw(0, size)
    writeFileSync(join(this.#dir, `${LOG}.next`), rest, { mode: 0o600 })
    const next = openSync(join(this.#dir, `${LOG}.next`), 'r')
    fsyncSync(next)
    closeSync(next)
    closeSync(this.#fd)
    renameSync(join(this.#dir, `${LOG}.next`), join(this.#dir, LOG))
    this.#fd = openSync(join(this.#dir, LOG), 'a+', 0o600)
    this.#acknowledged = 0
    this.#attempted = attempted
    this.#writeOffsets()
  }

  #writeOffsets (): void {
    this.#writeOffsetsRaw(this.#acknowledged, this.#attempted)
  }

  #writeOffsetsRaw (acknowledged: number, attempted: number): void {
    const file = join(this.#dir, OFFSETS)
    writeFileSync(`${file}.tmp`, `${acknowledged} ${attempted}`, { mode: 0o600 })
    renameSync(`${file}.tmp`, file)
  }
}
