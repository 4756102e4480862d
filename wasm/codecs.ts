// Turns a CodecEngine into the public Codecs API: argument checks, fixed CCM parameters, errors as values.
import type { Backend, CcmCodec, CcmEngine, CodecEngine, Codecs, RleDecodeResult, RleErrorCode } from './types.js'
import { FrameIndex } from './frame-index.js'
import { RLE_ERR_TRUNCATED, RLE_ERR_ZERO_HEADER, RLE_ERR_VARINT, RLE_ERR_LIMIT, RLE_ERR_MEMORY } from './layout.js'

export const CCM_KEY_LENGTH = 16
export const CCM_NONCE_LENGTH = 13
export const CCM_TAG_LENGTH = 8
/** 2^(8L) - 1 with L = 15 - 13 = 2. */
export const CCM_MAX_MESSAGE = 65535
/** Largest maxOutput accepted by rleDecode (the decoder reports sizes as i32). */
export const RLE_MAX_OUTPUT = 0x7fffffff

const RLE_ERRORS: Record<number, { code: RleErrorCode; reason: string }> = {
  [RLE_ERR_TRUNCATED]: { code: 'truncated', reason: 'input ends inside a run header or run' },
  [RLE_ERR_ZERO_HEADER]: { code: 'zero-header', reason: 'run header 0 is invalid' },
  [RLE_ERR_VARINT]: { code: 'bad-varint', reason: 'run header varint is longer than 3 bytes or not minimal' },
  [RLE_ERR_LIMIT]: { code: 'output-limit', reason: 'decoded output would exceed the maximum output size' },
  [RLE_ERR_MEMORY]: { code: 'out-of-memory', reason: 'WASM memory cannot grow to hold the output' },
}

function rleResult(decoded: Uint8Array | number): RleDecodeResult {
  if (typeof decoded !== 'number') return { ok: true, value: decoded }
  const error = RLE_ERRORS[decoded]
  if (error === undefined) throw new Error(`RLE decoder returned unknown code ${decoded}`)
  return { ok: false, ...error }
}

function checkLength(what: string, bytes: Uint8Array, expected: number): void {
  if (bytes.length !== expected) throw new RangeError(`${what} must be ${expected} bytes, got ${bytes.length}`)
}

/** The frame CCM parameters (16-byte key, 13-byte nonce, 8-byte tag) over a generic engine. */
export function ccmCodec(engine: CcmEngine): CcmCodec {
  return {
    ccmSeal(key, nonce, aad, plaintext) {
      checkLength('CCM key', key, CCM_KEY_LENGTH)
      checkLength('CCM nonce', nonce, CCM_NONCE_LENGTH)
      if (plaintext.length > CCM_MAX_MESSAGE) {
        throw new RangeError(`CCM plaintext must be at most ${CCM_MAX_MESSAGE} bytes, got ${plaintext.length}`)
      }
      return engine.seal(key, nonce, aad, plaintext, CCM_TAG_LENGTH)
    },
    ccmOpen(key, nonce, aad, sealed) {
      checkLength('CCM key', key, CCM_KEY_LENGTH)
      checkLength('CCM nonce', nonce, CCM_NONCE_LENGTH)
      const length = sealed.length - CCM_TAG_LENGTH
      if (length < 0 || length > CCM_MAX_MESSAGE) {
        const reason = `sealed message must be ${CCM_TAG_LENGTH}..${CCM_MAX_MESSAGE + CCM_TAG_LENGTH} bytes, got ${sealed.length}`
        return { ok: false, code: 'bad-length', reason }
      }
      const plaintext = engine.open(key, nonce, aad, sealed, CCM_TAG_LENGTH)
      return plaintext === null
        ? { ok: false, code: 'auth-failed', reason: 'CCM authentication tag mismatch' }
        : { ok: true, value: plaintext }
    },
  }
}

export function makeCodecs(engine: CodecEngine, backend: Backend, fallbackReason?: string): Codecs {
  return {
    backend,
    fallbackReason,
    crc32: (bytes) => engine.crc32(bytes),
    parseFrames: (body) => new FrameIndex(body, engine.parseFrameWords(body)),
    rleEncode: (bytes) => engine.rleEncode(bytes),
    rleDecode(bytes, maxOutput) {
      if (!Number.isInteger(maxOutput) || maxOutput < 0 || maxOutput > RLE_MAX_OUTPUT) {
        throw new RangeError(`maxOutput must be an integer in 0..${RLE_MAX_OUTPUT}, got ${maxOutput}`)
      }
      return rleResult(engine.rleDecode(bytes, maxOutput))
    },
    ...ccmCodec(engine.ccm),
  }
}
