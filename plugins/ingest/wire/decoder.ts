// The server side of one complete chunk: AES-CCM open → RLE decode → Avro/CBOR decode, in the order
// the device applied them in reverse. Every failure is a reason, never an exception.
import { codecs, FrameFlag, FRAME_MAX_PAYLOAD } from '../../../wasm/index.js'
import { openChunk, type ChunkIdentity } from './crypto.js'
import { decodePayload, typeName, type ChunkPayload } from './payloads.js'

/** A failure says whether it can change: a key registered or corrected later opens the same bytes. */
export type ChunkDecodeResult = { ok: true, payload: ChunkPayload } | { ok: false, reason: string, retry: boolean }

/** Decode a reassembled chunk; `key` is the device's key when it has one. */
export function decodeChunk (chunk: ChunkIdentity, bytes: Uint8Array, key: Uint8Array | undefined): ChunkDecodeResult {
  let data = bytes
  if ((chunk.flags & FrameFlag.Encrypted) !== 0) {
    if (key === undefined) return { ok: false, reason: 'encrypted chunk from a device without a registered key', retry: true }
    const opened = openChunk(key, chunk, data)
    if (!opened.ok) return opened.code === 'auth-failed' ? { ok: false, reason: 'authentication failed: wrong key or altered chunk', retry: true } : { ok: false, reason: opened.reason, retry: false }
    data = opened.value
  }
  if ((chunk.flags & FrameFlag.Compressed) !== 0) {
    // A decoded payload is never larger than what one frame may carry: no decompression bombs.
    const expanded = codecs.rleDecode(data, FRAME_MAX_PAYLOAD)
    if (!expanded.ok) return { ok: false, reason: `RLE: ${expanded.reason}`, retry: false }
    data = expanded.value
  }
  const decoded = decodePayload(typeName(chunk.type), data, (chunk.flags & FrameFlag.Cbor) !== 0)
  return decoded.ok ? decoded : { ...decoded, retry: false }
}
