// RLE codec (docs/rle.md): zigzag-varint run headers, negative = literal run, positive = repeated byte.
// Scanning works on 8-byte words; runs of up to 16 bytes are copied with two 8-byte stores, so callers
// leave 16 bytes of slack after the input and output areas (reads and writes may overshoot into it).
import {
  RLE_MAX_LITERAL, RLE_MAX_REPEAT, RLE_MIN_REPEAT, RLE_ERR_TRUNCATED, RLE_ERR_ZERO_HEADER, RLE_ERR_VARINT,
  RLE_ERR_LIMIT, RLE_ERR_MEMORY,
} from "../layout"
import { ensureEnd, memoryEnd } from "./scratch"

const ONES: u64 = 0x0101010101010101
const HIGHS: u64 = 0x8080808080808080

/** Copies n bytes; up to 16 bytes are moved as two words, overshooting into the slack. */
// @ts-ignore: decorator
@inline function copyRun(dst: usize, src: usize, n: usize): void {
  if (n <= 16) {
    store<u64>(dst, load<u64>(src))
    store<u64>(dst, load<u64>(src, 8), 8)
  } else {
    memory.copy(dst, src, n)
  }
}

/** Fills n bytes with `byte`; up to 16 bytes are written as two words, overshooting into the slack. */
// @ts-ignore: decorator
@inline function fillRun(dst: usize, byte: u8, n: usize): void {
  if (n <= 16) {
    const word = <u64>byte * ONES
    store<u64>(dst, word)
    store<u64>(dst, word, 8)
  } else {
    memory.fill(dst, byte, n)
  }
}

/** Writes `value` (< 2^21) as an unsigned LEB128 varint at `dst`; returns the byte count. */
function writeVarint(dst: usize, value: u32): usize {
  if (value < 0x80) {
    store<u8>(dst, value)
    return 1
  }
  store<u8>(dst, value | 0x80)
  if (value < 0x4000) {
    store<u8>(dst, value >>> 7, 1)
    return 2
  }
  store<u8>(dst, (value >>> 7) | 0x80, 1)
  store<u8>(dst, value >>> 14, 2)
  return 3
}

/** Emits [src, src+len) as literal runs of at most RLE_MAX_LITERAL bytes; returns the new output position. */
function emitLiterals(src: usize, len: usize, dst: usize): usize {
  while (len > 0) {
    const n = min(len, <usize>RLE_MAX_LITERAL)
    dst += writeVarint(dst, (<u32>n << 1) - 1)
    copyRun(dst, src, n)
    dst += n
    src += n
    len -= n
  }
  return dst
}

/** First p in [from, end - 2) with bytes p, p+1, p+2 equal, else end. */
function nextTriple(from: usize, end: usize): usize {
  let p = from
  while (p + 8 <= end) {
    const w = load<u64>(p)
    const pairs = w ^ (w >> 8) // byte k is 0 where byte k == byte k+1 (k < 7)
    const triples = pairs | (pairs >> 8) | 0xffff000000000000 // byte k is 0 where a triple starts (k < 6)
    const zeros = (triples - ONES) & ~triples & HIGHS // lowest flagged byte is the first zero byte
    if (zeros != 0) return p + (<usize>ctz(zeros) >>> 3)
    p += 6
  }
  while (p + 2 < end) {
    const b = load<u8>(p)
    if (load<u8>(p, 1) == b && load<u8>(p, 2) == b) return p
    p++
  }
  return end
}

/** End of the run of `byte` starting at `from` (exclusive), scanning no further than `limit`. */
function runEnd(from: usize, limit: usize, byte: u8): usize {
  const pattern = <u64>byte * ONES
  let p = from
  while (p + 8 <= limit) {
    const diff = load<u64>(p) ^ pattern
    if (diff != 0) return p + (<usize>ctz(diff) >>> 3)
    p += 8
  }
  while (p < limit && load<u8>(p) == byte) p++
  return p
}

/**
 * Encodes `len` bytes at `src` into `dst` (capacity: rleMaxEncodedLength(len) + 16); returns the encoded length.
 * Greedy: every maximal run of >= RLE_MIN_REPEAT equal bytes (split at RLE_MAX_REPEAT) becomes a repeat
 * run; everything between becomes literal runs. Scanning for the next triple finds exactly those runs.
 */
export function rleEncode(src: usize, len: usize, dst: usize): usize {
  const end = src + len
  const start = dst
  let literal = src
  while (literal < end) {
    const run = nextTriple(literal, end)
    dst = emitLiterals(literal, run - literal, dst)
    if (run == end) break
    const byte = load<u8>(run)
    const stop = runEnd(run, min(end, run + <usize>RLE_MAX_REPEAT), byte)
    dst += writeVarint(dst, <u32>(stop - run) << 1)
    store<u8>(dst, byte)
    dst++
    literal = stop
  }
  return dst - start
}

/**
 * Decodes `len` bytes at `src` into `dst`, producing at most `maxOut` bytes and growing memory as
 * output arrives. Returns the decoded length, or an RLE_ERR_* code (< 0).
 */
export function rleDecode(src: usize, len: u32, dst: usize, maxOut: u32): i32 {
  let i: u32 = 0
  let o: u32 = 0
  let room = memoryEnd()
  while (i < len) {
    let b = <u32>load<u8>(src + i++)
    let z = b & 0x7f
    if (b & 0x80) {
      if (i == len) return RLE_ERR_TRUNCATED
      b = load<u8>(src + i++)
      z |= (b & 0x7f) << 7
      if (b & 0x80) {
        if (i == len) return RLE_ERR_TRUNCATED
        b = load<u8>(src + i++)
        if (b & 0x80) return RLE_ERR_VARINT
        z |= b << 14
      }
      if (b == 0) return RLE_ERR_VARINT
    }
    if (z == 0) return RLE_ERR_ZERO_HEADER
    const literal = (z & 1) != 0
    const n = literal ? (z + 1) >>> 1 : z >>> 1
    const need: u32 = literal ? n : 1
    if (len - i < need) return RLE_ERR_TRUNCATED
    if (maxOut - o < n) return RLE_ERR_LIMIT
    const at = <u64>dst + <u64>o + <u64>n + 16
    if (at > room) {
      if (!ensureEnd(at)) return RLE_ERR_MEMORY
      room = memoryEnd()
    }
    if (literal) copyRun(dst + o, src + i, n)
    else fillRun(dst + o, load<u8>(src + i), n)
    i += need
    o += n
  }
  return <i32>o
}
