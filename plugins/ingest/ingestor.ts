// One request body → per-frame results. Frames are indexed by the WASM parser, fragments reassembled,
// chunks decoded and applied in ONE LMDB transaction; the caller acknowledges after it commits.
import { codecs, FrameFlag, type FrameIndex } from '../../wasm/index.js'
import { applyChunk, type TelemetryEvent } from './apply.js'
import { seenKey, type Device, type TelemetryStore } from './store.js'
import { decodeChunk } from './wire/decoder.js'
import { typeName, type ChunkTypeName } from './wire/payloads.js'
import type { Reassembler } from './wire/reassembly.js'

export type FrameStatus = 'accepted' | 'duplicate' | 'partial' | 'rejected'

export interface FrameResult {
  /** Position of the frame (or skipped span) in the body, from 0. */
  index: number
  /** Byte offset in the body. */
  offset: number
  status: FrameStatus
  device?: string
  sequence?: number
  type?: ChunkTypeName
  /** `2/5` for the second of five fragments. */
  fragment?: string
  reason?: string
}

export interface IngestSummary {
  accepted: number
  duplicate: number
  partial: number
  rejected: number
  frames: FrameResult[]
}

export interface IngestOutcome {
  summary: IngestSummary
  /** What happened, to publish once the transaction has committed. */
  events: TelemetryEvent[]
}

export interface IngestOptions {
  /** Create unknown devices from their first chunk instead of rejecting the chunk. */
  autoRegister: boolean
}

export class Ingestor {
  readonly #store: TelemetryStore
  readonly #reassembler: Reassembler
  readonly #options: IngestOptions

  constructor (store: TelemetryStore, reassembler: Reassembler, options: IngestOptions) {
    this.#store = store
    this.#reassembler = reassembler
    this.#options = options
  }

  async ingest (body: Uint8Array, now = Date.now()): Promise<IngestOutcome> {
    const index = codecs.parseFrames(body)
    return await this.#reassembler.settle(this.#store.transaction(() => this.#apply(index, now)))
  }

  #apply (index: FrameIndex, now: number): IngestOutcome {
    const events: TelemetryEvent[] = []
    const frames: FrameResult[] = []
    const devices = new Map<string, Device>()
    let i = 0
    for (const record of index) {
      const result: FrameResult = { index: i++, offset: record.start, status: 'rejected' }
      frames.push(result)
      if (record.status !== 'ok') {
        result.reason = record.reason
        continue
      }
      Object.assign(result, { device: record.deviceId, sequence: record.sequence, type: typeName(record.type) })
      if (record.fragmentCount > 0) result.fragment = `${record.fragmentIndex + 1}/${record.fragmentCount}`
      const key = seenKey(record.deviceId, record.sequence)
      if (this.#store.seen.get(key) !== undefined) {
        result.status = 'duplicate'
        continue
      }
      const device = devices.get(record.deviceId) ?? this.#store.devices.get(record.deviceId)
      if (device === undefined && !this.#options.autoRegister) {
        result.reason = `unknown device ${record.deviceId}: register it first`
        continue
      }
      if (device?.encrypted === true && (record.flags & FrameFlag.Encrypted) === 0) {
        result.reason = `device ${record.deviceId} is registered for encrypted chunks; an unencrypted one is refused`
        continue
      }
      let bytes = index.payload(record)
      if (record.fragmentCount > 0) {
        const outcome = this.#reassembler.add(key, record, bytes, now)
        if (outcome.status !== 'complete') {
          result.status = outcome.status
          if (outcome.status === 'rejected') result.reason = outcome.reason
          continue
        }
        bytes = outcome.bytes
      }
      const identity = { type: record.type, flags: record.flags, device: Buffer.from(record.deviceId, 'hex'), sequence: record.sequence }
      const decoded = decodeChunk(identity, bytes, this.#store.keys.get(record.deviceId))
      if (!decoded.ok) {
        result.reason = decoded.reason
        continue
      }
      const applied = applyChunk(this.#store, device, { device: record.deviceId, sequence: record.sequence, at: now }, decoded.payload)
      devices.set(record.deviceId, applied.device)
      events.push(...applied.events)
      this.#store.seen.put(key, now)
      result.status = 'accepted'
    }
    for (const device of devices.values()) this.#store.devices.put(device.id, device)
    return { summary: summarize(frames), events }
  }
}

function summarize (frames: FrameResult[]): IngestSummary {
  const count = (status: FrameStatus): number => frames.filter(f => f.status === status).length
  return { accepted: count('accepted'), duplicate: count('duplicate'), partial: count('partial'), rejected: count('rejected'), frames }
}
