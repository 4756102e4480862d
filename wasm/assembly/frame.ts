// Frame parser: one pass over a request body, writing one fixed-size record per frame or error span.
import {
  FRAME_MAGIC_0, FRAME_MAGIC_1, FRAME_VERSION_1, FRAME_VERSION, FRAME_HEADER_SIZE, FRAME_CRC_SIZE, FRAME_TYPE_MIN, FRAME_TYPE_MAX,
  FRAME_FLAGS_KNOWN_V1, FRAME_FLAGS_KNOWN, FRAME_MAX_RECORDS, RECORD_WORDS, REC_STATUS, REC_START, REC_END, REC_PAYLOAD_OFFSET,
  REC_PAYLOAD_LENGTH, REC_HEADER, REC_SEQUENCE, REC_DEVICE_LO, REC_DEVICE_HI, FRAME_OK, FRAME_BAD_MAGIC,
  FRAME_UNSUPPORTED_VERSION, FRAME_UNKNOWN_TYPE, FRAME_RESERVED_BITS, FRAME_BAD_FRAGMENT, FRAME_TRUNCATED,
  FRAME_BAD_CRC,
} from "../layout"
import { crc32 } from "./crc32"

// @ts-ignore: decorator
@inline function isSync(body: usize, pos: u32, len: u32): bool {
  if (len - pos < 3 || load<u8>(body + pos) != FRAME_MAGIC_0 || load<u8>(body + pos, 1) != FRAME_MAGIC_1) return false
  const version = <i32>load<u8>(body + pos, 2)
  return version >= FRAME_VERSION_1 && version <= FRAME_VERSION
}

/** First position >= from where "BT" + a known version (1 or 2) starts, or len. */
function nextSync(body: usize, from: u32, len: u32): u32 {
  let pos = from
  while (pos < len && !isSync(body, pos, len)) pos++
  return pos
}

// @ts-ignore: decorator
@inline function setWord(rec: usize, index: i32, value: u32): void {
  store<u32>(rec + (<usize>index << 2), value)
}

/** Writes a record with no decoded header (garbage, unknown version, header cut off). */
function writeSpan(rec: usize, status: u32, start: u32, end: u32): void {
  memory.fill(rec, 0, RECORD_WORDS << 2)
  setWord(rec, REC_STATUS, status)
  setWord(rec, REC_START, start)
  setWord(rec, REC_END, end)
  setWord(rec, REC_PAYLOAD_OFFSET, start)
}

/** Status of a complete frame whose CRC matched. */
function validate(p: usize): u32 {
  const type = <u32>load<u8>(p, 3)
  if (type < <u32>FRAME_TYPE_MIN || type > <u32>FRAME_TYPE_MAX) return FRAME_UNKNOWN_TYPE
  const known = load<u8>(p, 2) == FRAME_VERSION_1 ? <u32>FRAME_FLAGS_KNOWN_V1 : <u32>FRAME_FLAGS_KNOWN
  if ((<u32>load<u8>(p, 4) & ~known) != 0 || load<u8>(p, 7) != 0) return FRAME_RESERVED_BITS
  const index = load<u8>(p, 5)
  const count = load<u8>(p, 6)
  const fragmentsOk = count == 0 ? index == 0 : count >= 2 && index < count
  return fragmentsOk ? FRAME_OK : FRAME_BAD_FRAGMENT
}

/**
 * Parses `len` bytes at `body`, writing at most `maxRecords` (capped at FRAME_MAX_RECORDS) records
 * of RECORD_WORDS u32 at `out`. Returns the record count; records tile [0, end of last record).
 */
export function parseFrames(body: usize, len: u32, out: usize, maxRecords: u32): u32 {
  const cap = min(maxRecords, <u32>FRAME_MAX_RECORDS)
  let pos: u32 = 0
  let count: u32 = 0
  while (pos < len && count < cap) {
    const rec = out + <usize>count * (RECORD_WORDS << 2)
    count++
    const p = body + pos
    const avail = len - pos
    if (!isSync(body, pos, len)) {
      const magicOnly = avail >= 3 && load<u8>(p) == FRAME_MAGIC_0 && load<u8>(p, 1) == FRAME_MAGIC_1
      const next = nextSync(body, pos + 1, len)
      writeSpan(rec, magicOnly ? FRAME_UNSUPPORTED_VERSION : FRAME_BAD_MAGIC, pos, next)
      pos = next
      continue
    }
    if (avail < <u32>FRAME_HEADER_SIZE) {
      const next = nextSync(body, pos + 1, len)
      writeSpan(rec, FRAME_TRUNCATED, pos, next)
      pos = next
      continue
    }
    const payloadLength = <u32>load<u16>(p, 20)
    const size = <u32>FRAME_HEADER_SIZE + payloadLength + <u32>FRAME_CRC_SIZE
    let status: u32
    let end: u32
    if (size > avail) {
      status = FRAME_TRUNCATED
      end = nextSync(body, pos + 1, len)
    } else {
      const covered = <u32>FRAME_HEADER_SIZE + payloadLength
      status = crc32(p, covered) != load<u32>(p + covered) ? FRAME_BAD_CRC : validate(p)
      end = pos + size
    }
    setWord(rec, REC_STATUS, status)
    setWord(rec, REC_START, pos)
    setWord(rec, REC_END, end)
    setWord(rec, REC_PAYLOAD_OFFSET, pos + <u32>FRAME_HEADER_SIZE)
    setWord(rec, REC_PAYLOAD_LENGTH, payloadLength)
    setWord(rec, REC_HEADER, load<u32>(p, 3))
    setWord(rec, REC_SEQUENCE, load<u32>(p, 16))
    setWord(rec, REC_DEVICE_LO, load<u32>(p, 8))
    setWord(rec, REC_DEVICE_HI, load<u32>(p, 12))
    pos = end
  }
  return count
}
