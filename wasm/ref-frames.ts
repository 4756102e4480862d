// Reference frame parser: the same records as wasm/assembly/frame.ts, written for clarity.
import {
  FRAME_MAGIC_0, FRAME_MAGIC_1, FRAME_VERSION_1, FRAME_VERSION, FRAME_HEADER_SIZE, FRAME_CRC_SIZE, FRAME_TYPE_MIN, FRAME_TYPE_MAX,
  FRAME_FLAGS_KNOWN_V1, FRAME_FLAGS_KNOWN, FRAME_MAX_RECORDS, RECORD_WORDS, REC_STATUS, REC_START, REC_END, REC_PAYLOAD_OFFSET,
  REC_PAYLOAD_LENGTH, REC_HEADER, REC_SEQUENCE, REC_DEVICE_LO, REC_DEVICE_HI, FRAME_OK, FRAME_BAD_MAGIC,
  FRAME_UNSUPPORTED_VERSION, FRAME_UNKNOWN_TYPE, FRAME_RESERVED_BITS, FRAME_BAD_FRAGMENT, FRAME_TRUNCATED,
  FRAME_BAD_CRC,
} from './layout.js'
import { crc32 } from './ref-crc32.js'

function isSync(body: Uint8Array, pos: number): boolean {
  return body.length - pos >= 3 &&
    body[pos] === FRAME_MAGIC_0 && body[pos + 1] === FRAME_MAGIC_1 && body[pos + 2] >= FRAME_VERSION_1 && body[pos + 2] <= FRAME_VERSION
}

function nextSync(body: Uint8Array, from: number): number {
  let pos = from
  while (pos < body.length && !isSync(body, pos)) pos++
  return pos
}

function frameStatus(body: Uint8Array, view: DataView, pos: number, payloadLength: number): number {
  const covered = FRAME_HEADER_SIZE + payloadLength
  if (crc32(body.subarray(pos, pos + covered)) !== view.getUint32(pos + covered, true)) return FRAME_BAD_CRC
  const type = body[pos + 3]
  if (type < FRAME_TYPE_MIN || type > FRAME_TYPE_MAX) return FRAME_UNKNOWN_TYPE
  const known = body[pos + 2] === FRAME_VERSION_1 ? FRAME_FLAGS_KNOWN_V1 : FRAME_FLAGS_KNOWN
  if ((body[pos + 4] & ~known) !== 0 || body[pos + 7] !== 0) return FRAME_RESERVED_BITS
  const index = body[pos + 5]
  const count = body[pos + 6]
  const fragmentsOk = count === 0 ? index === 0 : count >= 2 && index < count
  return fragmentsOk ? FRAME_OK : FRAME_BAD_FRAGMENT
}

export function parseFrameWords(body: Uint8Array): Uint32Array {
  const view = new DataView(body.buffer, body.byteOffset, body.byteLength)
  const records: number[][] = []
  let pos = 0
  while (pos < body.length && records.length < FRAME_MAX_RECORDS) {
    const record: number[] = new Array<number>(RECORD_WORDS).fill(0)
    records.push(record)
    record[REC_START] = pos
    record[REC_PAYLOAD_OFFSET] = pos
    const remaining = body.length - pos
    if (!isSync(body, pos) || remaining < FRAME_HEADER_SIZE) {
      const magicOnly = remaining >= 3 && body[pos] === FRAME_MAGIC_0 && body[pos + 1] === FRAME_MAGIC_1
      record[REC_STATUS] = isSync(body, pos) ? FRAME_TRUNCATED : magicOnly ? FRAME_UNSUPPORTED_VERSION : FRAME_BAD_MAGIC
      pos = record[REC_END] = nextSync(body, pos + 1)
      continue
    }
    const payloadLength = view.getUint16(pos + 20, true)
    const size = FRAME_HEADER_SIZE + payloadLength + FRAME_CRC_SIZE
    const complete = size <= remaining
    record[REC_STATUS] = complete ? frameStatus(body, view, pos, payloadLength) : FRAME_TRUNCATED
    record[REC_END] = complete ? pos + size : nextSync(body, pos + 1)
    record[REC_PAYLOAD_OFFSET] = pos + FRAME_HEADER_SIZE
    record[REC_PAYLOAD_LENGTH] = payloadLength
    record[REC_HEADER] = view.getUint32(pos + 3, true)
    record[REC_SEQUENCE] = view.getUint32(pos + 16, true)
    record[REC_DEVICE_LO] = view.getUint32(pos + 8, true)
    record[REC_DEVICE_HI] = view.getUint32(pos + 12, true)
    pos = record[REC_END]
  }
  return Uint32Array.from(records.flat())
}
