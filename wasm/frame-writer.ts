// Builds one frame (header, payload, CRC-32) from field values, for device simulators and tests.
// Fields are written as given (no semantic checks), so it can also produce frames the parser rejects.
import { FRAME_MAGIC_0, FRAME_MAGIC_1, FRAME_VERSION_1, FRAME_HEADER_SIZE, FRAME_CRC_SIZE, FRAME_MAX_PAYLOAD } from './layout.js'
import { crc32 } from './ref-crc32.js'

export interface FrameFields {
  readonly type: number
  readonly flags?: number
  readonly fragmentIndex?: number
  readonly fragmentCount?: number
  /** 16 hex characters or 8 raw bytes. */
  readonly deviceId: string | Uint8Array
  readonly sequence: number
  readonly payload: Uint8Array
  /** Byte 2; defaults to 1 (version 2 frames are asked for explicitly). */
  readonly version?: number
  /** Byte 7; defaults to 0. */
  readonly reserved?: number
}

function deviceBytes(id: string | Uint8Array): Uint8Array {
  if (typeof id !== 'string') {
    if (id.length !== 8) throw new RangeError(`device id must be 8 bytes, got ${id.length}`)
    return id
  }
  if (!/^[0-9a-fA-F]{16}$/.test(id)) throw new RangeError(`device id must be 16 hex characters, got "${id}"`)
  return Uint8Array.from({ length: 8 }, (_, i) => parseInt(id.slice(2 * i, 2 * i + 2), 16))
}

export function encodeFrame(fields: FrameFields): Uint8Array {
  const { payload } = fields
  if (payload.length > FRAME_MAX_PAYLOAD) throw new RangeError(`payload must be at most ${FRAME_MAX_PAYLOAD} bytes, got ${payload.length}`)
  const frame = new Uint8Array(FRAME_HEADER_SIZE + payload.length + FRAME_CRC_SIZE)
  const view = new DataView(frame.buffer)
  frame.set([FRAME_MAGIC_0, FRAME_MAGIC_1, fields.version ?? FRAME_VERSION_1, fields.type, fields.flags ?? 0,
    fields.fragmentIndex ?? 0, fields.fragmentCount ?? 0, fields.reserved ?? 0])
  frame.set(deviceBytes(fields.deviceId), 8)
  view.setUint32(16, fields.sequence, true)
  view.setUint16(20, payload.length, true)
  frame.set(payload, FRAME_HEADER_SIZE)
  view.setUint32(FRAME_HEADER_SIZE + payload.length, crc32(frame.subarray(0, FRAME_HEADER_SIZE + payload.length)), true)
  return frame
}
