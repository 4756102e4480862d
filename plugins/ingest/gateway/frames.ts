// Frames out of a byte stream (a UART, BLE notifications): resynchronises on the sync bytes "BT" + a
// known version (1 or 2), waits for the whole frame its length announces, and keeps it only when its
// CRC-32 matches; anything else is skipped and counted. A serial line also carries the update frames
// of docs/firmware-updates.md ("BU", version 1, at most 548 payload bytes): a splitter given a handler
// for them hands each one over, and they are not counted as skipped. Incremental: bytes may arrive in
// any pieces.
import { crc32 } from 'node:zlib'
import { FRAME_VERSION, FRAME_VERSION_1 } from '../../../wasm/index.js'
import { UPDATE_HEADER, UPDATE_MAX_PAYLOAD, UPDATE_OVERHEAD, UPDATE_VERSION } from './update-frames.js'

const B = 0x42
const T = 0x54
const U = 0x55
const HEADER = 22
const OVERHEAD = 26

export class FrameSplitter {
  #pending: Buffer = Buffer.alloc(0)
  /** Bytes skipped so far: noise, or frames that failed their CRC. */
  skipped = 0

  /** `onUpdate`: where update frames go; without it "BU" is noise like any other bytes. */
  constructor (readonly onUpdate?: (frame: Buffer) => void) {}

  /**
   * First position that starts a frame, or may once more bytes come: "BT" and a telemetry version,
   * "BU" and the update version (with a handler), or a "B", "BT", "BU" at the very end; -1 for none.
   */
  #findSync (bytes: Buffer): number {
    for (let at = bytes.indexOf(B); at >= 0; at = bytes.indexOf(B, at + 1)) {
      if (at + 1 >= bytes.length) return at
      const kind = bytes[at + 1]
      if (kind !== T && (kind !== U || this.onUpdate === undefined)) continue
      if (at + 2 >= bytes.length) return at
      const version = bytes[at + 2]
      if (kind === T ? version >= FRAME_VERSION_1 && version <= FRAME_VERSION : version === UPDATE_VERSION) return at
    }
    return -1
  }

  /** Add bytes; returns the complete telemetry frames they finished (update frames go to the handler). */
  push (bytes: Buffer): Buffer[] {
    this.#pending = this.#pending.length === 0 ? bytes : Buffer.concat([this.#pending, bytes])
    const frames: Buffer[] = []
    for (;;) {
      const sync = this.#findSync(this.#pending)
      if (sync < 0) {
        this.skipped += this.#pending.length
        this.#pending = Buffer.alloc(0)
        return frames
      }
      this.skipped += sync
      this.#pending = this.#pending.subarray(sync)
      if (this.#pending.length < 3) return frames
      const update = this.#pending[1] === U
      if (this.#pending.length < (update ? UPDATE_HEADER : HEADER)) return frames
      const payload = this.#pending.readUInt16LE(update ? 4 : 20)
      const length = payload + (update ? UPDATE_OVERHEAD : OVERHEAD)
      if (update && payload > UPDATE_MAX_PAYLOAD) {
        this.#skipOne()
        continue
      }
      if (this.#pending.length < length) return frames
      const frame = this.#pending.subarray(0, length)
      if (crc32(frame.subarray(0, length - 4)) !== frame.readUInt32LE(length - 4)) {
        this.#skipOne()
        continue
      }
      if (update) this.onUpdate?.(Buffer.from(frame))
      else frames.push(Buffer.from(frame))
      this.#pending = this.#pending.subarray(length)
    }
  }

  /** Not a frame after all: look for the next sync after this one. */
  #skipOne (): void {
    this.skipped += 1
    this.#pending = this.#pending.subarray(1)
  }
}
