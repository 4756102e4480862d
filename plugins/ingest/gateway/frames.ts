// Frames out of a byte stream (a UART): resynchronises on the sync bytes "BT" + version 1, waits for
// the whole frame its length announces, and keeps it only when its CRC-32 matches; anything else is
// skipped and counted. Incremental: bytes may arrive in any pieces.
import { crc32 } from 'node:zlib'

const SYNC = Buffer.from([0x42, 0x54, 0x01])
const HEADER = 22
const OVERHEAD = 26

export class FrameSplitter {
  #pending: Buffer = Buffer.alloc(0)
  /** Bytes skipped so far: noise, or frames that failed their CRC. */
  skipped = 0

  /** Add bytes; returns the complete frames they finished. */
  push (bytes: Buffer): Buffer[] {
    this.#pending = this.#pending.length === 0 ? bytes : Buffer.concat([this.#pending, bytes])
    const frames: Buffer[] = []
    for (;;) {
      const sync = this.#pending.indexOf(SYNC)
      if (sync < 0) {
        // Keep a possible start of the sync bytes at the end.
        const keep = this.#pending.length >= 2 && this.#pending[this.#pending.length - 2] === 0x42 && this.#pending[this.#pending.length - 1] === 0x54 ? 2 : this.#pending.at(-1) === 0x42 ? 1 : 0
        this.skipped += this.#pending.length - keep
        this.#pending = this.#pending.subarray(this.#pending.length - keep)
        return frames
      }
      this.skipped += sync
      this.#pending = this.#pending.subarray(sync)
      if (this.#pending.length < HEADER) return frames
      const length = OVERHEAD + this.#pending.readUInt16LE(20)
      if (this.#pending.length < length) return frames
      const frame = this.#pending.subarray(0, length)
      if (crc32(frame.subarray(0, length - 4)) === frame.readUInt32LE(length - 4)) {
        frames.push(Buffer.from(frame))
        this.#pending = this.#pending.subarray(length)
      } else {
        this.skipped += 1 // not a frame after all: look for the next sync after this one
        this.#pending = this.#pending.subarray(1)
      }
    }
  }
}
