// The gateway's spool on disk: every frame a device sends is appended (and synced) before anything
// else happens to it, and an offset records how far the server has acknowledged. Frames are forwarded
// in order from the offset, so a server that is down, a gateway restart or a crash lose nothing, and
// the server's idempotency turns a frame sent twice (acknowledged but not yet recorded) into a
// duplicate answer, not a second copy.
import { closeSync, existsSync, fstatSync, fsyncSync, mkdirSync, openSync, readFileSync, readSync, renameSync, writeFileSync, writeSync } from 'node:fs'
import { join } from 'node:path'

const LOG = 'spool.log'
const OFFSET = 'spool.offset'
/** Compact once this much has been delivered. */
const COMPACT_BYTES = 1 << 20

export interface Batch {
  frames: Buffer[]
  /** Offset after the batch. */
  end: number
}

export class Spool {
  readonly #dir: string
  #fd: number
  #offset: number

  constructor (dir: string) {
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    this.#dir = dir
    this.#fd = openSync(join(dir, LOG), 'a+', 0o600)
    const recorded = existsSync(join(dir, OFFSET)) ? Number(readFileSync(join(dir, OFFSET), 'utf8')) : 0
    this.#offset = Number.isInteger(recorded) && recorded >= 0 && recorded <= this.size ? recorded : 0
  }

  get size (): number {
    return fstatSync(this.#fd).size
  }

  /** Frames not yet acknowledged. */
  get pending (): number {
    return this.size - this.#offset
  }

  /** Append frames and sync them to disk. */
  append (frames: readonly Buffer[]): void {
    if (frames.length === 0) return
    const records = frames.flatMap(frame => {
      const length = Buffer.alloc(4)
      length.writeUInt32LE(frame.length)
      return [length, frame]
    })
    writeSync(this.#fd, Buffer.concat(records))
    fsyncSync(this.#fd)
  }

  /** Up to `maxBytes` of frames from the acknowledged offset on. */
  next (maxBytes: number): Batch {
    const frames: Buffer[] = []
    let at = this.#offset
    const size = this.size
    let bytes = 0
    while (at + 4 <= size) {
      const head = Buffer.alloc(4)
      readSync(this.#fd, head, 0, 4, at)
      const length = head.readUInt32LE(0)
      if (at + 4 + length > size || (frames.length > 0 && bytes + length > maxBytes)) break
      const frame = Buffer.alloc(length)
      readSync(this.#fd, frame, 0, length, at + 4)
      frames.push(frame)
      bytes += length
      at += 4 + length
    }
    return { frames, end: at }
  }

  /** The server has answered every frame before `end`. */
  acknowledge (end: number): void {
    this.#offset = end
    this.#writeOffset(end)
    if (end === this.size && end >= COMPACT_BYTES) {
      this.#writeOffset(0) // first: a crash now only sends delivered frames again
      closeSync(this.#fd)
      writeFileSync(join(this.#dir, LOG), '', { mode: 0o600 })
      this.#fd = openSync(join(this.#dir, LOG), 'a+', 0o600)
      this.#offset = 0
    }
  }

  close (): void {
    closeSync(this.#fd)
  }

  #writeOffset (offset: number): void {
    const file = join(this.#dir, OFFSET)
    writeFileSync(`${file}.tmp`, String(offset), { mode: 0o600 })
    renameSync(`${file}.tmp`, file)
  }
}
