// Codec API for the ingest path: frame parsing, CRC-32, RLE and AES-128-CCM, served by the WASM module
// (wasm/build/berth.wasm) or, when it cannot load, by the pure-TypeScript reference.
import { readFileSync } from 'node:fs'
import type { Codecs, CcmCodec } from './types.js'
import { makeCodecs, ccmCodec } from './codecs.js'
import { referenceEngine } from './reference.js'
import { createWasmEngine } from './wasm-engine.js'
import { nodeCcmEngine } from './node-ccm.js'
import { defaultWasmPath } from './locate.js'

export type { Backend, CcmCodec, CcmErrorCode, CcmOpenResult, Codecs, Result, RleDecodeResult, RleErrorCode } from './types.js'
export { FrameIndex, FrameType, FrameFlag, FRAME_STATUSES } from './frame-index.js'
export type { FrameRecord, FrameStatus } from './frame-index.js'
export { CCM_KEY_LENGTH, CCM_NONCE_LENGTH, CCM_TAG_LENGTH, CCM_MAX_MESSAGE, RLE_MAX_OUTPUT } from './codecs.js'
export { FRAME_MAX_RECORDS, FRAME_MAX_PAYLOAD, FRAME_HEADER_SIZE, FRAME_CRC_SIZE, FRAME_VERSION, FRAME_VERSION_1 } from './layout.js'
export { encodeFrame } from './frame-writer.js'
export type { FrameFields } from './frame-writer.js'
export { rleMaxEncodedLength } from './ref-rle.js'
export { defaultWasmPath } from './locate.js'

export interface CodecOptions {
  /** 'auto' (default) uses WASM and falls back to the reference; 'wasm' throws if the module cannot load. */
  readonly backend?: 'auto' | 'wasm' | 'reference'
  /** Module file; defaults to defaultWasmPath() ($BERTH_WASM_DIR or <package root>/wasm/build/berth.wasm). */
  readonly wasmPath?: string
}

function loadWasm(path: string): Codecs {
  let bytes: Buffer
  try {
    bytes = readFileSync(path)
  } catch (cause) {
    throw new Error(`cannot read ${path} (run \`npm run build:wasm\`): ${(cause as Error).message}`, { cause })
  }
  return makeCodecs(createWasmEngine(bytes), 'wasm')
}

/** Instantiates the codecs synchronously; never logs. With backend 'auto', inspect `fallbackReason`. */
export function createCodecs(options: CodecOptions = {}): Codecs {
  const backend = options.backend ?? 'auto'
  if (backend === 'reference') return makeCodecs(referenceEngine, 'reference')
  const path = options.wasmPath ?? defaultWasmPath()
  if (backend === 'wasm') return loadWasm(path)
  try {
    return loadWasm(path)
  } catch (error) {
    return makeCodecs(referenceEngine, 'reference', `WASM codecs unavailable: ${(error as Error).message}`)
  }
}

/** Process-wide codecs, created at import time. */
export const codecs: Codecs = createCodecs()

/** AES-128-CCM via Node's OpenSSL, same signatures as `codecs.ccmSeal` / `codecs.ccmOpen`. */
export const nodeCcm: CcmCodec = ccmCodec(nodeCcmEngine)
