// Public types of the codec API (frame index, RLE, AES-CCM) and the engine contract each backend implements.
import type { FrameIndex } from './frame-index.js'

/** Success with a value, or a failure with a stable code and a human-readable reason. */
export type Result<T, C extends string> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly code: C; readonly reason: string }

/** Which implementation serves the pure-computation codecs. */
export type Backend = 'wasm' | 'reference'

export type RleErrorCode = 'truncated' | 'zero-header' | 'bad-varint' | 'output-limit' | 'out-of-memory'
export type RleDecodeResult = Result<Uint8Array, RleErrorCode>

export type CcmErrorCode = 'auth-failed' | 'bad-length'
export type CcmOpenResult = Result<Uint8Array, CcmErrorCode>

/** AES-128-CCM with the frame parameters: 16-byte key, 13-byte nonce, 8-byte tag (max message 65535 bytes). */
export interface CcmCodec {
  /** Returns ciphertext || tag. Throws RangeError on a wrong key/nonce length or an over-long plaintext. */
  ccmSeal(key: Uint8Array, nonce: Uint8Array, aad: Uint8Array, plaintext: Uint8Array): Uint8Array
  /** Verifies and decrypts ciphertext || tag. Throws RangeError on a wrong key/nonce length. */
  ccmOpen(key: Uint8Array, nonce: Uint8Array, aad: Uint8Array, sealed: Uint8Array): CcmOpenResult
}

export interface Codecs extends CcmCodec {
  readonly backend: Backend
  /** Why the WASM module was not used, when `backend` is 'reference' by fallback. */
  readonly fallbackReason: string | undefined
  /** CRC-32 (IEEE 802.3 / zlib) as an unsigned 32-bit number. */
  crc32(bytes: Uint8Array): number
  /** Indexes every frame and error span in a request body without copying payloads. */
  parseFrames(body: Uint8Array): FrameIndex
  rleEncode(bytes: Uint8Array): Uint8Array
  /** Decodes at most `maxOutput` bytes (integer, 0..RLE_MAX_OUTPUT); more is an 'output-limit' failure. */
  rleDecode(bytes: Uint8Array, maxOutput: number): RleDecodeResult
}

/** CCM generic in tag and nonce length; `open` returns null when authentication fails. */
export interface CcmEngine {
  seal(key: Uint8Array, nonce: Uint8Array, aad: Uint8Array, plaintext: Uint8Array, tagLength: number): Uint8Array
  open(key: Uint8Array, nonce: Uint8Array, aad: Uint8Array, sealed: Uint8Array, tagLength: number): Uint8Array | null
}

/** What a backend computes; arguments are already validated by the caller (see codecs.ts). */
export interface CodecEngine {
  crc32(bytes: Uint8Array): number
  /** Parse records of RECORD_WORDS words each (layout.ts), in body order. */
  parseFrameWords(body: Uint8Array): Uint32Array
  rleEncode(bytes: Uint8Array): Uint8Array
  /** Decoded bytes, or a negative RLE_ERR_* code. */
  rleDecode(bytes: Uint8Array, maxOutput: number): Uint8Array | number
  readonly ccm: CcmEngine
}
