// Frames out of a byte stream (a UART, BLE notifications): resynchronises on the sync bytes "BT" + a
// known version (1 or 2), waits for the whole frame its length announces, and keeps it only when its
// CRC-32 matches; anything else is skipped and counted. Incremental: bytes may arrive in any pieces.
import { crc32 } from 'node:zlib'
import { FRAME_VERSION, FRAME_VERSION_1 } from '../../../wasm/index.js'

const MAGIC = Buffer.from([0x42, 0x54])
const HEADER = 22
const OVERHEAD = 26

/** First position of "BT" followed by a known version byte, or -1 (a "BT" at the very end counts: its version may follow). */
function findSync (bytes: Buffer): number {
  for (let at = bytes.indexOf(MAGIC); at >= 0; at = bytes.indexOf(MAGIC, at + 1)) {
    if (at + 2 >= bytes.length || (bytes[at + 2] >= FRAME_VERSION_1 && bytes[at + 2] <= FRAME_VERSION)) return at
  }
  return -1
}

export class FrameSplitter {
  #pending: Buffer = Buffer.alloc(0)
  /** Bytes skipped so far: noise, or frames that failed their CRC. */
  skipped = 0

  /** Add bytes; returns the complete frames they finished. */
  push (bytes: Buffer): Buffer[] {
    this.#pending = this.#pending.length === 0 ? bytes : Buffer.concat([this.#pending, bytes])
    const frames: Buffer[] = []
    for (;;) {
      const sync = findSync(this.#pending)
      if (sync < 0 || sync + 2 >= this.#pending.length) {
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
