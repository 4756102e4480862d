// The pure-TypeScript codec engine: readable reference for the WASM module and its fallback.
import type { CodecEngine } from './types.js'
import { crc32 } from './ref-crc32.js'
import { parseFrameWords } from './ref-frames.js'
import { rleEncode, rleDecode } from './ref-rle.js'
import { referenceCcm } from './ref-ccm.js'

export const referenceEngine: CodecEngine = { crc32, parseFrameWords, rleEncode, rleDecode, ccm: referenceCcm }
