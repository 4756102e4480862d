// Typed view over the flat parse records of a request body: one FrameRecord per frame or error span.
import {
  FRAME_HEADER_SIZE, FRAME_CRC_SIZE, FRAME_FLAGS_KNOWN, FRAME_FLAGS_KNOWN_V1, FRAME_VERSION_1, RECORD_WORDS, REC_STATUS, REC_START, REC_END,
  REC_PAYLOAD_OFFSET, REC_PAYLOAD_LENGTH, REC_HEADER, REC_SEQUENCE, REC_DEVICE_LO, REC_DEVICE_HI,
} from './layout.js'
import { crc32 } from './ref-crc32.js'

/** Frame types (byte 3). */
export const FrameType = {
  DeviceInfo: 1,
  RebootReason: 2,
  FaultRecord: 3,
  Metrics: 4,
  Trace: 5,
  Heartbeat: 6,
} as const

/** Frame flag bits (byte 4); bit 3 exists from version 2 on; the others are reserved. */
export const FrameFlag = {
  Encrypted: 0x01,
  Compressed: 0x02,
  Cbor: 0x04,
  /** Version 2: this chunk may have reached the server before (a retransmission). */
  Retransmitted: 0x08,
} as const

/** Record status names, indexed by the numeric FRAME_* codes in layout.ts. */
export const FRAME_STATUSES = [
  'ok',
  'bad-magic',
  'unsupported-version',
  'unknown-type',
  'reserved-bits',
  'bad-fragment',
  'truncated',
  'bad-crc',
] as const
export type FrameStatus = (typeof FRAME_STATUSES)[number]

export interface FrameRecord {
  readonly status: FrameStatus
  /** Why the record is not 'ok'; undefined for 'ok'. */
  readonly reason: string | undefined
  /** Byte span [start, end) of the body covered by this record; records tile the parsed prefix. */
  readonly start: number
  readonly end: number
  /** False for spans with no decoded header (garbage, unknown version, header cut off): fields below are 0 / ''. */
  readonly hasHeader: boolean
  /** Byte 2, 1 or 2 (0 without a decoded header). */
  readonly version: number
  readonly type: number
  readonly flags: number
  readonly fragmentIndex: number
  readonly fragmentCount: number
  /** 8 raw bytes as 16 lowercase hex characters. */
  readonly deviceId: string
  readonly sequence: number
  readonly payloadOffset: number
  /** Declared payload length (a 'truncated' record may declare more than the body holds). */
  readonly payloadLength: number
}

const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'))

function hexWord(word: number): string {
  return HEX[word & 0xff] + HEX[(word >>> 8) & 0xff] + HEX[(word >>> 16) & 0xff] + HEX[word >>> 24]
}

function hex32(value: number): string {
  return '0x' + value.toString(16).padStart(8, '0')
}

function readU32(body: Uint8Array, offset: number): number {
  return (body[offset] | (body[offset + 1] << 8) | (body[offset + 2] << 16) | (body[offset + 3] << 24)) >>> 0
}

/** Reason text for a record that is not 'ok'. */
function describe(body: Uint8Array, r: FrameRecord): string | undefined {
  const at = `at offset ${r.start}`
  switch (r.status) {
    case 'bad-magic':
      return `no frame magic "BT" + version 1 or 2 ${at}: skipped ${r.end - r.start} byte(s)`
    case 'unsupported-version':
      return `unsupported frame version ${body[r.start + 2]} ${at}: skipped ${r.end - r.start} byte(s)`
    case 'unknown-type':
      return `unknown frame type ${r.type} ${at}`
    case 'reserved-bits':
      return (r.flags & ~(r.version === FRAME_VERSION_1 ? FRAME_FLAGS_KNOWN_V1 : FRAME_FLAGS_KNOWN)) !== 0
        ? `reserved flag bits set (flags 0x${HEX[r.flags]}) ${at}`
        : `reserved byte 7 is 0x${HEX[body[r.start + 7]]}, must be 0, ${at}`
    case 'bad-fragment':
      return `bad fragment fields (index ${r.fragmentIndex}, count ${r.fragmentCount}) ${at}`
    case 'truncated':
      return r.hasHeader
        ? `frame ${at} declares a ${r.payloadLength}-byte payload (${FRAME_HEADER_SIZE + r.payloadLength + FRAME_CRC_SIZE} bytes) but the body holds ${body.length - r.start}`
        : `frame header ${at} cut off: ${body.length - r.start} of ${FRAME_HEADER_SIZE} bytes present`
    case 'bad-crc': {
      const covered = r.payloadOffset + r.payloadLength
      const computed = crc32(body.subarray(r.start, covered))
      return `CRC mismatch ${at}: stored ${hex32(readU32(body, covered))}, computed ${hex32(computed)}`
    }
  }
}

/** Index of one request body. Offsets are relative to `body`; payloads are never copied. */
export class FrameIndex implements Iterable<FrameRecord> {
  /** Number of records. */
  readonly count: number
  /** Bytes of `body` covered by records. */
  readonly consumed: number
  /** False when parsing stopped at FRAME_MAX_RECORDS records before the end of the body. */
  readonly complete: boolean

  constructor(
    readonly body: Uint8Array,
    /** Raw records, RECORD_WORDS u32 words each (layout.ts). */
    readonly words: Uint32Array,
  ) {
    this.count = words.length / RECORD_WORDS
    this.consumed = this.count === 0 ? 0 : words[(this.count - 1) * RECORD_WORDS + REC_END]
    this.complete = this.consumed === body.length
  }

  at(i: number): FrameRecord {
    if (!Number.isInteger(i) || i < 0 || i >= this.count) throw new RangeError(`record ${i} out of range 0..${this.count - 1}`)
    const w = this.words
    const base = i * RECORD_WORDS
    const start = w[base + REC_START]
    const payloadOffset = w[base + REC_PAYLOAD_OFFSET]
    const header = w[base + REC_HEADER]
    const hasHeader = payloadOffset !== start
    const record: { -readonly [K in keyof FrameRecord]: FrameRecord[K] } = {
      status: FRAME_STATUSES[w[base + REC_STATUS]],
      reason: undefined,
      start,
      end: w[base + REC_END],
      hasHeader,
      version: hasHeader ? this.body[start + 2] : 0,
      type: header & 0xff,
      flags: (header >>> 8) & 0xff,
      fragmentIndex: (header >>> 16) & 0xff,
      fragmentCount: header >>> 24,
      deviceId: hasHeader ? hexWord(w[base + REC_DEVICE_LO]) + hexWord(w[base + REC_DEVICE_HI]) : '',
      sequence: w[base + REC_SEQUENCE],
      payloadOffset,
      payloadLength: w[base + REC_PAYLOAD_LENGTH],
    }
    if (record.status !== 'ok') record.reason = describe(this.body, record)
    return record
  }

  /** The payload bytes of a record (a view into `body`, clamped to its end). */
  payload(record: FrameRecord): Uint8Array {
    return this.body.subarray(record.payloadOffset, record.payloadOffset + record.payloadLength)
  }

  *[Symbol.iterator](): Iterator<FrameRecord> {
    for (let i = 0; i < this.count; i++) yield this.at(i)
  }
}
