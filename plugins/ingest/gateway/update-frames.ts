// The serial update frames of docs/firmware-updates.md ("BU", version 1, a type, a payload of at most
// 548 bytes, CRC-32), both directions: what a device sends (state, request, result) and what the
// gateway answers (offer, block, none). Payloads are decoded into plain objects and encoded from them;
// the splitting of frames out of a line's bytes is frames.ts's.
import { crc32 } from 'node:zlib'

export const UPDATE_MAGIC = Buffer.from('BU', 'latin1')
export const UPDATE_VERSION = 1
export const UPDATE_HEADER = 6
/** Header and CRC around the payload. */
export const UPDATE_OVERHEAD = UPDATE_HEADER + 4
export const UPDATE_MAX_PAYLOAD = 548
/** The most bytes a `request` may ask for (a `block` carries them after its digest and offset). */
export const BLOCK_MAX = 512

export const UpdateType = { state: 1, offer: 2, request: 3, block: 4, result: 5, none: 6 } as const
export type UpdateTypeName = keyof typeof UpdateType

export const SLOT_STATE_CODES = ['empty', 'pending', 'testing', 'confirmed', 'bad'] as const
export const EVENT_CODES = [null, 'revert', 'refused', 'confirmed'] as const
export const RESULT_CODES = [null, 'verified', 'bad_signature', 'bad_header', 'digest_mismatch', 'no_room'] as const
export type SlotStateName = typeof SLOT_STATE_CODES[number]
export type EventName = NonNullable<typeof EVENT_CODES[number]>
export type ResultName = NonNullable<typeof RESULT_CODES[number]>

const TEXT = 24
const DIGEST = 32
const NO_DIGEST = '0'.repeat(64)

export interface DeviceState {
  device: string
  softwareType: string
  version: string
  runningSlot: number
  slots: Array<{ state: SlotStateName, version: string | null, image: string | null }>
  download: { image: string, received: number } | null
  event: { kind: EventName, slot: number } | null
}
export interface Offer { image: string, size: number, version: string }
export interface BlockRequest { image: string, offset: number, length: number }
export interface Block { image: string, offset: number, bytes: Buffer }
export interface DownloadResult { image: string, status: ResultName }

export type UpdateMessage =
  | { type: 'state', state: DeviceState }
  | { type: 'offer', offer: Offer }
  | { type: 'request', request: BlockRequest }
  | { type: 'block', block: Block }
  | { type: 'result', result: DownloadResult }
  | { type: 'none' }

/** A frame whose payload is not what its type says; the message says what. */
export class UpdateFrameError extends Error {}

/** A whole frame around `payload`. */
export function updateFrame (type: UpdateTypeName, payload: Buffer = Buffer.alloc(0)): Buffer {
  if (payload.length > UPDATE_MAX_PAYLOAD) throw new UpdateFrameError(`a ${type} payload of ${payload.length} bytes is over ${UPDATE_MAX_PAYLOAD}`)
  const head = Buffer.alloc(UPDATE_HEADER)
  UPDATE_MAGIC.copy(head, 0)
  head[2] = UPDATE_VERSION
  head[3] = UpdateType[type]
  head.writeUInt16LE(payload.length, 4)
  const body = Buffer.concat([head, payload])
  const crc = Buffer.alloc(4)
  crc.writeUInt32LE(crc32(body))
  return Buffer.concat([body, crc])
}

/** Text as a NUL-padded 24-byte field (cut at 24 bytes). */
const text = (value: string | null): Buffer => {
  const field = Buffer.alloc(TEXT)
  if (value !== null) Buffer.from(value, 'utf8').subarray(0, TEXT).copy(field)
  return field
}
const digest = (hex: string | null): Buffer => Buffer.from(hex ?? NO_DIGEST, 'hex')
const u32 = (n: number): Buffer => { const b = Buffer.alloc(4); b.writeUInt32LE(n); return b }
const u16 = (n: number): Buffer => { const b = Buffer.alloc(2); b.writeUInt16LE(n); return b }

/** Reads a payload field by field, refusing one that is too short or too long. */
class Reader {
  #at = 0
  constructor (readonly bytes: Buffer, readonly type: string) {}
  take (n: number): Buffer {
    if (this.#at + n > this.bytes.length) throw new UpdateFrameError(`a ${this.type} payload of ${this.bytes.length} bytes is too short`)
    const out = this.bytes.subarray(this.#at, this.#at + n)
    this.#at += n
    return out
  }

  u8 (): number { return this.take(1)[0] }
  u16 (): number { return this.take(2).readUInt16LE(0) }
  u32 (): number { return this.take(4).readUInt32LE(0) }
  /** A NUL-padded text field; null when empty. */
  text (): string | null {
    const field = this.take(TEXT)
    const end = field.indexOf(0)
    const value = field.subarray(0, end < 0 ? TEXT : end).toString('utf8')
    return value === '' ? null : value
  }

  /** A digest as hex; null when all zero. */
  digest (): string | null {
    const hex = this.take(DIGEST).toString('hex')
    return hex === NO_DIGEST ? null : hex
  }

  rest (): Buffer { return this.take(this.bytes.length - this.#at) }
  end (): void {
    if (this.#at !== this.bytes.length) throw new UpdateFrameError(`a ${this.type} payload of ${this.bytes.length} bytes is too long (${this.#at} expected)`)
  }
}

function code<T> (codes: readonly T[], value: number, what: string): T {
  if (value >= codes.length) throw new UpdateFrameError(`${what} ${value} is not one of 0-${codes.length - 1}`)
  return codes[value]
}

/** The frame of a message. */
export function encodeUpdate (message: UpdateMessage): Buffer {
  switch (message.type) {
    case 'state': {
      const s = message.state
      return updateFrame('state', Buffer.concat([
        Buffer.from(s.device, 'hex'), text(s.softwareType), text(s.version), Buffer.from([s.runningSlot]),
        ...s.slots.flatMap(slot => [Buffer.from([SLOT_STATE_CODES.indexOf(slot.state)]), text(slot.version), digest(slot.image)]),
        digest(s.download?.image ?? null), u32(s.download?.received ?? 0),
        Buffer.from([s.event === null ? 0 : EVENT_CODES.indexOf(s.event.kind), s.event?.slot ?? 0])
      ]))
    }
    case 'offer': return updateFrame('offer', Buffer.concat([digest(message.offer.image), u32(message.offer.size), text(message.offer.version)]))
    case 'request': return updateFrame('request', Buffer.concat([digest(message.request.image), u32(message.request.offset), u16(message.request.length)]))
    case 'block': return updateFrame('block', Buffer.concat([digest(message.block.image), u32(message.block.offset), message.block.bytes]))
    case 'result': return updateFrame('result', Buffer.concat([digest(message.result.image), Buffer.from([RESULT_CODES.indexOf(message.result.status)])]))
    case 'none': return updateFrame('none')
  }
}

/** The message of a whole frame (its CRC already checked by the splitter). */
export function decodeUpdate (frame: Buffer): UpdateMessage {
  const type = Object.entries(UpdateType).find(([, n]) => n === frame[3])?.[0] as UpdateTypeName | undefined
  if (type === undefined) throw new UpdateFrameError(`update frame type ${frame[3]} is not one of 1-6`)
  const r = new Reader(frame.subarray(UPDATE_HEADER, frame.length - 4), type)
  const needed = (value: string | null, what: string): string => {
    if (value === null) throw new UpdateFrameError(`a ${type} without its ${what}`)
    return value
  }
  let message: UpdateMessage
  switch (type) {
    case 'state': {
      const device = r.take(8).toString('hex')
      const softwareType = needed(r.text(), 'software type')
      const version = needed(r.text(), 'version')
      const runningSlot = r.u8()
      const slots = [0, 1].map(() => ({ state: code(SLOT_STATE_CODES, r.u8(), 'slot state'), version: r.text(), image: r.digest() }))
      const downloading = r.digest()
      const received = r.u32()
      const kind = code(EVENT_CODES, r.u8(), 'event')
      const slot = r.u8()
      if (runningSlot > 1 || (kind !== null && slot > 1)) throw new UpdateFrameError('a slot is 0 or 1')
      message = { type, state: { device, softwareType, version, runningSlot, slots, download: downloading === null ? null : { image: downloading, received }, event: kind === null ? null : { kind, slot } } }
      break
    }
    case 'offer': message = { type, offer: { image: needed(r.digest(), 'digest'), size: r.u32(), version: needed(r.text(), 'version') } }; break
    case 'request': {
      message = { type, request: { image: needed(r.digest(), 'digest'), offset: r.u32(), length: r.u16() } }
      if (message.request.length === 0 || message.request.length > BLOCK_MAX) throw new UpdateFrameError(`a request for ${message.request.length} bytes; 1-${BLOCK_MAX} may be asked for`)
      break
    }
    case 'block': message = { type, block: { image: needed(r.digest(), 'digest'), offset: r.u32(), bytes: Buffer.from(r.rest()) } }; break
    case 'result': {
      const image = needed(r.digest(), 'digest')
      const status = code(RESULT_CODES, r.u8(), 'result status')
      if (status === null) throw new UpdateFrameError('result status 0 is none of 1-5')
      message = { type, result: { image, status } }
      break
    }
    case 'none': message = { type }; break
  }
  r.end()
  return message
}
