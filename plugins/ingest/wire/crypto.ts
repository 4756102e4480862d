// AES-128-CCM parameters of the chunk format: the nonce (device id, sequence), the chunk header used as
// associated data, and the implementation chosen by size (WASM for small payloads, OpenSSL above).
import { codecs, nodeCcm, FrameFlag, FRAME_HEADER_SIZE, FRAME_MAX_PAYLOAD, FRAME_VERSION_1, type CcmOpenResult } from '../../../wasm/index.js'

/** Up to this many bytes the WASM CCM is at least as fast as Node's OpenSSL (docs/benchmarks.md). */
export const WASM_CCM_MAX_BYTES = 512

/** What identifies a chunk: the header fields common to all its fragments. */
export interface ChunkIdentity {
  /** Frame version, 1 when not given. */
  version?: number
  type: number
  flags: number
  /** 8 raw bytes. */
  device: Uint8Array
  sequence: number
}

/** Nonce (13 bytes): device id (8) ‖ sequence (u32 little-endian) ‖ 0x00. */
export function chunkNonce (chunk: ChunkIdentity): Uint8Array {
  const nonce = new Uint8Array(13)
  nonce.set(chunk.device, 0)
  new DataView(nonce.buffer).setUint32(8, chunk.sequence, true)
  return nonce
}

/**
 * Associated data: the 22-byte header of the chunk sent as one unfragmented frame of `sealedLength`
 * bytes, first transmission (the retransmission flag clear, so a retransmission needs no new seal).
 */
export function chunkAad (chunk: ChunkIdentity, sealedLength: number): Uint8Array {
  const aad = new Uint8Array(FRAME_HEADER_SIZE)
  const view = new DataView(aad.buffer)
  aad.set([0x42, 0x54, chunk.version ?? FRAME_VERSION_1, chunk.type, chunk.flags & ~FrameFlag.Retransmitted, 0, 0, 0])
  aad.set(chunk.device, 8)
  view.setUint32(16, chunk.sequence, true)
  view.setUint16(20, sealedLength, true)
  return aad
}

export function openChunk (key: Uint8Array, chunk: ChunkIdentity, sealed: Uint8Array): CcmOpenResult {
  const ccm = sealed.length <= WASM_CCM_MAX_BYTES ? codecs : nodeCcm
  return ccm.ccmOpen(key, chunkNonce(chunk), chunkAad(chunk, sealed.length), sealed)
}

export function sealChunk (key: Uint8Array, chunk: ChunkIdentity, plaintext: Uint8Array): Uint8Array {
  if (plaintext.length + 8 > FRAME_MAX_PAYLOAD) throw new RangeError(`a sealed chunk carries at most ${FRAME_MAX_PAYLOAD - 8} bytes of plaintext, got ${plaintext.length}`)
  const ccm = plaintext.length <= WASM_CCM_MAX_BYTES ? codecs : nodeCcm
  return ccm.ccmSeal(key, chunkNonce(chunk), chunkAad(chunk, plaintext.length + 8), plaintext)
}
