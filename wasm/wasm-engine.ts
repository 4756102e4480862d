// Binds the AssemblyScript module's raw-pointer exports to the engine contract: inputs are copied once
// into the module's scratch area, outputs are copied out of linear memory.
import { instantiateSync } from '@assemblyscript/loader'
import type { CcmEngine, CodecEngine } from './types.js'
import { FRAME_MAX_RECORDS, RECORD_WORDS, CCM_OK, CCM_BAD_PARAMS } from './layout.js'
import { rleMaxEncodedLength } from './ref-rle.js'

/** The module's exports (wasm/assembly/index.ts); pointers and lengths are u32. */
interface RawExports extends Record<string, unknown> {
  readonly memory: { readonly buffer: ArrayBuffer }
  scratch(size: number): number
  crc32(ptr: number, len: number): number
  parseFrames(body: number, len: number, out: number, maxRecords: number): number
  rleEncode(src: number, len: number, dst: number): number
  rleDecode(src: number, len: number, dst: number, maxOut: number): number
  ccmSeal(key: number, nonce: number, nonceLen: number, aad: number, aadLen: number, src: number, len: number, dst: number, tagLen: number): number
  ccmOpen(key: number, nonce: number, nonceLen: number, aad: number, aadLen: number, src: number, len: number, dst: number, tagLen: number): number
}

const align16 = (n: number): number => (n + 15) & ~15
/** The RLE code may read and write up to 16 bytes past its areas (wasm/assembly/rle.ts). */
const RLE_SLACK = 16
/** Largest typed array V8 allocates on its heap (flag typed_array_max_size_in_heap). */
const ON_HEAP_BYTES = 64

/** Compiles and instantiates the module synchronously (it is a few KiB). */
export function createWasmEngine(bytes: Uint8Array): CodecEngine {
  const raw = instantiateSync<RawExports>(bytes, {}).exports
  let heap = new Uint8Array(raw.memory.buffer)

  /** Current view of linear memory. Growing detaches the old buffer (its views read as empty), so the
   *  cheap length check replaces the slower `memory.buffer` getter on every call. */
  const memory = (): Uint8Array => {
    if (heap.byteLength === 0) heap = new Uint8Array(raw.memory.buffer)
    return heap
  }

  const base = raw.scratch(0)
  let capacity = 0

  /** Ensures `size` scratch bytes and returns the scratch base (which never moves). */
  const reserve = (size: number): number => {
    if (size > capacity) {
      // Only reachable near the 4 GiB limit of 32-bit linear memory.
      /* c8 ignore next */
      if (raw.scratch(size) === 0) throw new RangeError(`WASM memory cannot grow to ${size} scratch bytes`)
      capacity = size
    }
    return base
  }

  /** Copies `bytes` to `at`; returns the next 16-byte aligned address after them. */
  const stage = (bytes: Uint8Array, at: number): number => {
    memory().set(bytes, at)
    return at + align16(bytes.length)
  }

  /**
   * Copies `length` bytes at `at` out of linear memory. V8 keeps typed arrays of up to 64 bytes on its
   * heap, but a larger one needs its own backing store (about a microsecond), so larger results are
   * carved from Node's Buffer pool (as Buffer.from does) and returned as plain Uint8Array views of it.
   */
  const copyOut = (at: number, length: number): Uint8Array => {
    if (length <= ON_HEAP_BYTES) return memory().slice(at, at + length)
    const pooled = Buffer.allocUnsafe(length)
    pooled.set(memory().subarray(at, at + length))
    return new Uint8Array(pooled.buffer, pooled.byteOffset, length)
  }

  /** Runs seal or open over `input` (plaintext, or ciphertext || tag); returns the output address, or -1 when authentication fails. */
  const runCcm = (sealing: boolean, ...[key, nonce, aad, input, tagLength]: Parameters<CcmEngine['seal']>): number => {
    const length = sealing ? input.length : input.length - tagLength
    const k = reserve(32 + align16(aad.length) + align16(input.length) + length + tagLength)
    const n = stage(key, k)
    const a = stage(nonce, n)
    const src = stage(aad, a)
    const dst = stage(input, src)
    const run = sealing ? raw.ccmSeal : raw.ccmOpen
    const status = run(k, n, nonce.length, a, aad.length, src, length, dst, tagLength)
    if (status === CCM_BAD_PARAMS) throw new RangeError(`CCM parameters rejected (nonce ${nonce.length}, tag ${tagLength}, length ${length})`)
    return status === CCM_OK ? dst : -1
  }

  return {
    crc32(bytes) {
      const src = reserve(bytes.length)
      stage(bytes, src)
      return raw.crc32(src, bytes.length) >>> 0
    },
    parseFrameWords(body) {
      const maxRecords = Math.min(FRAME_MAX_RECORDS, body.length)
      const src = reserve(align16(body.length) + maxRecords * RECORD_WORDS * 4)
      const out = stage(body, src)
      const count = raw.parseFrames(src, body.length, out, maxRecords)
      return new Uint32Array(memory().buffer, out, count * RECORD_WORDS).slice()
    },
    rleEncode(bytes) {
      const src = reserve(align16(bytes.length) + rleMaxEncodedLength(bytes.length) + RLE_SLACK)
      const dst = stage(bytes, src)
      return copyOut(dst, raw.rleEncode(src, bytes.length, dst))
    },
    rleDecode(bytes, maxOutput) {
      const src = reserve(bytes.length)
      const dst = stage(bytes, src)
      const length = raw.rleDecode(src, bytes.length, dst, maxOutput)
      return length < 0 ? length : copyOut(dst, length)
    },
    ccm: {
      seal: (key, nonce, aad, plaintext, tagLength) =>
        copyOut(runCcm(true, key, nonce, aad, plaintext, tagLength), plaintext.length + tagLength),
      open(key, nonce, aad, sealed, tagLength) {
        const at = runCcm(false, key, nonce, aad, sealed, tagLength)
        return at < 0 ? null : copyOut(at, sealed.length - tagLength)
      },
    },
  }
}
