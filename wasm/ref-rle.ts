// Reference RLE codec (docs/rle.md): the same bytes and error codes as wasm/assembly/rle.ts.
import {
  RLE_MAX_VARINT_BYTES, RLE_MAX_LITERAL, RLE_MAX_REPEAT, RLE_MIN_REPEAT, RLE_ERR_TRUNCATED, RLE_ERR_ZERO_HEADER,
  RLE_ERR_VARINT, RLE_ERR_LIMIT,
} from './layout.js'

/** Upper bound of rleEncode's output length for an n-byte input. */
export function rleMaxEncodedLength(n: number): number {
  return n + 1 + Math.floor(n / 64) + Math.floor(n / RLE_MAX_LITERAL)
}

function pushVarint(out: number[], value: number): void {
  while (value >= 0x80) {
    out.push((value & 0x7f) | 0x80)
    value >>>= 7
  }
  out.push(value)
}

export function rleEncode(bytes: Uint8Array): Uint8Array {
  const out: number[] = []
  const flushLiterals = (from: number, to: number): void => {
    for (let at = from; at < to; at += RLE_MAX_LITERAL) {
      const n = Math.min(to - at, RLE_MAX_LITERAL)
      pushVarint(out, 2 * n - 1)
      for (let k = at; k < at + n; k++) out.push(bytes[k])
    }
  }
  let literalStart = 0
  let i = 0
  while (i < bytes.length) {
    let j = i + 1
    while (j < bytes.length && j - i < RLE_MAX_REPEAT && bytes[j] === bytes[i]) j++
    if (j - i >= RLE_MIN_REPEAT) {
      flushLiterals(literalStart, i)
      pushVarint(out, 2 * (j - i))
      out.push(bytes[i])
      literalStart = j
    }
    i = j
  }
  flushLiterals(literalStart, bytes.length)
  return Uint8Array.from(out)
}

interface Run {
  readonly literal: boolean
  readonly count: number
  /** Offset of the literal bytes or of the repeated byte. */
  readonly data: number
  readonly next: number
}

/** Reads the run starting at `i`, or returns an RLE_ERR_* code. */
function readRun(src: Uint8Array, i: number): Run | number {
  let z = 0
  for (let k = 0; ; k++) {
    if (k === RLE_MAX_VARINT_BYTES) return RLE_ERR_VARINT
    if (i >= src.length) return RLE_ERR_TRUNCATED
    const b = src[i++]
    z += (b & 0x7f) * 2 ** (7 * k)
    if ((b & 0x80) === 0) {
      if (k > 0 && b === 0) return RLE_ERR_VARINT
      break
    }
  }
  if (z === 0) return RLE_ERR_ZERO_HEADER
  const literal = z % 2 === 1
  const count = literal ? (z + 1) / 2 : z / 2
  const next = i + (literal ? count : 1)
  return next > src.length ? RLE_ERR_TRUNCATED : { literal, count, data: i, next }
}

/** Decoded bytes, or an RLE_ERR_* code. Validates everything before allocating the output. */
export function rleDecode(src: Uint8Array, maxOutput: number): Uint8Array | number {
  let size = 0
  for (let i = 0; i < src.length; ) {
    const run = readRun(src, i)
    if (typeof run === 'number') return run
    if (run.count > maxOutput - size) return RLE_ERR_LIMIT
    size += run.count
    i = run.next
  }
  const out = new Uint8Array(size)
  let o = 0
  for (let i = 0; i < src.length; ) {
    const run = readRun(src, i) as Run
    if (run.literal) out.set(src.subarray(run.data, run.data + run.count), o)
    else out.fill(src[run.data], o, o + run.count)
    o += run.count
    i = run.next
  }
  return out
}
