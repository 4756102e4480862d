// The device side of the wire format, in TypeScript: serialize → RLE → AES-CCM → fragment → frames.
// Used by the device simulator, the benchmarks, the tests, and to make the golden vectors.
import { codecs, encodeFrame, FrameFlag, FRAME_MAX_PAYLOAD } from '../../../wasm/index.js'
import { sealChunk } from './crypto.js'
import { encodePayload, typeCode, type ChunkPayload } from './payloads.js'

export interface ChunkSpec {
  /** 16 hex characters. */
  device: string
  sequence: number
  payload: ChunkPayload
  /** CBOR instead of Avro. */
  cbor?: boolean
  /** Run-length encode the serialized payload. */
  compress?: boolean
  /** Seal with AES-128-CCM under this 16-byte key. */
  key?: Uint8Array
  /** Largest payload per frame; a larger chunk is split into fragments (at most 255). */
  mtu?: number
  /** Frame version: 1 (the default) or 2. */
  version?: 1 | 2
  /** Version 2: set the retransmission flag (the chunk may have reached the server before). */
  retransmission?: boolean
}

/** The frames of one chunk, concatenated. */
export function encodeChunk (spec: ChunkSpec): Uint8Array {
  const device = Buffer.from(spec.device, 'hex')
  const type = typeCode(spec.payload.type)
  const flags = (spec.key !== undefined ? FrameFlag.Encrypted : 0) |
    (spec.compress === true ? FrameFlag.Compressed : 0) |
    (spec.cbor === true ? FrameFlag.Cbor : 0)
  let bytes = encodePayload(spec.payload.type, spec.payload.record, spec.cbor === true)
  if (spec.compress === true) bytes = codecs.rleEncode(bytes)
  const version = spec.version ?? 1
  if (spec.retransmission === true && version < 2) throw new RangeError('the retransmission flag exists from frame version 2 on')
  if (spec.key !== undefined) bytes = sealChunk(spec.key, { version, type, flags, device, sequence: spec.sequence }, bytes)
  if (bytes.length > FRAME_MAX_PAYLOAD) throw new RangeError(`a chunk carries at most ${FRAME_MAX_PAYLOAD} bytes (tag included), this one ${bytes.length}`)
  const mtu = spec.mtu ?? 65535
  const common = { version, type, flags: flags | (spec.retransmission === true ? FrameFlag.Retransmitted : 0), deviceId: device, sequence: spec.sequence }
  if (bytes.length <= mtu) return encodeFrame({ ...common, payload: bytes })
  const count = Math.ceil(bytes.length / mtu)
  if (count > 255) throw new RangeError(`a ${bytes.length}-byte chunk needs ${count} fragments of ${mtu} bytes; at most 255 are allowed`)
  const frames = Array.from({ length: count }, (_, i) =>
    encodeFrame({ ...common, fragmentIndex: i, fragmentCount: count, payload: bytes.subarray(i * mtu, (i + 1) * mtu) }))
  return Buffer.concat(frames)
}
