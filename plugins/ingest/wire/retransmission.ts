// The retransmission bit of a version 2 frame (docs/chunk-format.md, "Idempotency"): set on a copy of
// a whole frame, with its CRC-32 made anew. Header and payload are otherwise untouched, so a sealed
// chunk needs no new seal (its associated data leaves the bit out).
import { crc32 } from 'node:zlib'
import { FrameFlag, FRAME_VERSION } from '../../../wasm/index.js'

const VERSION_AT = 2
const FLAGS_AT = 4

/** A copy of `frame` marked as a retransmission; version 1 frames (which have no such bit) and frames already marked are returned as they are. */
export function asRetransmission (frame: Buffer): Buffer {
  if (frame[VERSION_AT] !== FRAME_VERSION || (frame[FLAGS_AT] & FrameFlag.Retransmitted) !== 0) return frame
  const copy = Buffer.from(frame)
  copy[FLAGS_AT] |= FrameFlag.Retransmitted
  copy.writeUInt32LE(crc32(copy.subarray(0, copy.length - 4)), copy.length - 4)
  return copy
}
