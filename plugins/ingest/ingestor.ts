// One request body → per-frame results. Frames are indexed by the WASM parser, fragments reassembled,
// chunks decoded, and everything they change written in ONE transaction of the storage (storage/);
// the caller acknowledges after it commits. The request holds its devices' turns from its reads to
// its commit (on every node sharing the storage), so what it reads (chunks already seen, the device
// records and keys, read at once before deciding) is what the previous request of those devices
// committed. On LMDB the writes are issued as puts in one event turn: one transaction, whose B-tree
// work runs on lmdb-js's write thread. A request with fragments runs in a transaction of the kernel
// store, since the reassembler reads and writes pending fragments (node-local) as it goes.
import { codecs, FrameFlag, type FrameIndex } from '../../wasm/index.js'
import { applyChunk, newDevice, type TelemetryEvent } from './apply.js'
import { chunkDigest, isCopy, markTime, markWith, type StoredMark } from './chunk-marks.js'
import type { IssueEvent } from './crash-issues.js'
import { emptyWrites, type Device, type IngestReads, type IngestWrites, type TelemetryStorage } from './storage/contract.js'
import { seenKey, type TelemetryStore } from './store.js'
import { decodeChunk } from './wire/decoder.js'
import { typeName, type ChunkTypeName } from './wire/payloads.js'
import type { FragmentOutcome, Reassembler } from './wire/reassembly.js'
import type { SharedReassembler } from './wire/shared-reassembly.js'

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
  /** Rejected for a reason that can change (the device registered, a key set, room freed): the same bytes may be accepted later. */
  retry?: true
  /** Accepted although a different chunk was stored under this sequence before (a new boot, or a reused number). */
  sequence_reused?: true
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
  readonly #storage: TelemetryStorage
  /** The kernel store, where fragments wait (node-local state on every backend). */
  readonly #local: TelemetryStore
  readonly #reassembler: Reassembler
  /** On nodes sharing a database, where fragments wait instead (every node sees them). */
  readonly #shared: SharedReassembler | undefined
  readonly #options: IngestOptions

  constructor (storage: TelemetryStorage, local: TelemetryStore, reassembler: Reassembler, options: IngestOptions, shared?: SharedReassembler) {
    this.#storage = storage
    this.#local = local
    this.#reassembler = reassembler
    this.#shared = shared
    this.#options = options
  }

  async ingest (body: Uint8Array, now = Date.now()): Promise<IngestOutcome> {
    const index = codecs.parseFrames(body)
    const ids = new Set<string>()
    const pairs: Array<[string, number]> = []
    const sealed = new Set<string>()
    let fragmented = false
    for (const record of index) {
      if (record.status !== 'ok') continue
      ids.add(record.deviceId)
      pairs.push([record.deviceId, record.sequence])
      if ((record.flags & FrameFlag.Encrypted) !== 0) sealed.add(record.deviceId)
      if (record.fragmentCount > 0) fragmented = true
    }
    return await this.#storage.ingest(ids, async session => {
      const reads = await session.read([...ids], pairs, [...sealed])
      if (fragmented && this.#shared !== undefined) {
        const { outcome, writes } = this.#apply(index, reads, now, await this.#sharedFragments(this.#shared, index, reads, now))
        outcome.events.push(...await session.write(writes))
        return outcome
      }
      if (fragmented) {
        let written: Promise<IssueEvent[]> | undefined
        const outcome = await this.#reassembler.settle(this.#local.transaction(() => {
          const { outcome, writes } = this.#apply(index, reads, now)
          written = session.write(writes)
          return outcome
        }))
        outcome.events.push(...await written ?? [])
        return outcome
      }
      const { outcome, writes } = this.#apply(index, reads, now)
      outcome.events.push(...await session.write(writes))
      return outcome
    })
  }

  /** The answer of each fragment of the request (by frame), from the reassembly every node shares; fragments of devices refused are not held. */
  async #sharedFragments (shared: SharedReassembler, index: FrameIndex, reads: IngestReads, now: number): Promise<Map<number, FragmentOutcome>> {
    const outcomes = new Map<number, FragmentOutcome>()
    let i = 0
    for (const record of index) {
      const frame = i++
      if (record.status !== 'ok' || record.fragmentCount === 0) continue
      if (deviceRefusal(record, reads.devices.get(record.deviceId), this.#options.autoRegister) !== undefined) continue
      const flags = record.flags & ~FrameFlag.Retransmitted
      outcomes.set(frame, await shared.add(seenKey(record.deviceId, record.sequence), { ...record, flags, retransmitted: flags !== record.flags }, index.payload(record), now))
    }
    return outcomes
  }

  /** `fragments`: the answers of the request's fragments already found (shared reassembly); else this node's reassembler answers them. */
  #apply (index: FrameIndex, reads: IngestReads, now: number, fragments?: ReadonlyMap<number, FragmentOutcome>): { outcome: IngestOutcome, writes: IngestWrites } {
    const writes = emptyWrites()
    const events: TelemetryEvent[] = []
    const frames: FrameResult[] = []
    /** This request's copies of its device records (stored: undefined for a device it registers). */
    const devices = new Map<string, { device: Device, isNew: boolean }>()
    /** Marks of the chunks accepted earlier in this request (not yet committed, so not in `seen`). */
    const marks = new Map<string, StoredMark>()
    let i = 0
    for (const record of index) {
      const result: FrameResult = { index: i++, offset: record.start, status: 'rejected' }
      frames.push(result)
      if (record.status !== 'ok') {
        result.reason = record.reason
        continue
      }
      result.device = record.deviceId
      result.sequence = record.sequence
      result.type = typeName(record.type)
      if (record.fragmentCount > 0) result.fragment = `${record.fragmentIndex + 1}/${record.fragmentCount}`
      const copy = devices.get(record.deviceId)
      const device = copy?.device ?? reads.devices.get(record.deviceId)
      const refusal = deviceRefusal(record, device, this.#options.autoRegister)
      if (refusal !== undefined) {
        refuse(result, refusal, true)
        continue
      }
      const seen = seenKey(record.deviceId, record.sequence)
      const flags = record.flags & ~FrameFlag.Retransmitted
      let retransmitted = flags !== record.flags
      let bytes = index.payload(record)
      if (record.fragmentCount > 0) {
        const outcome = fragments?.get(result.index) ?? this.#reassembler.add(seen, { ...record, flags, retransmitted }, bytes, now)
        if (outcome.status === 'partial') {
          result.status = 'partial'
          continue
        }
        if (outcome.status === 'rejected') {
          refuse(result, outcome.reason, outcome.retry)
          continue
        }
        bytes = outcome.bytes
        retransmitted = outcome.retransmitted
      }
      const digest = chunkDigest(record.type, flags, bytes)
      const mark = marks.get(seen) ?? reads.marks.get(seen)
      if (mark !== undefined && isCopy(mark, digest, record.version >= 2 && !retransmitted)) {
        result.status = 'duplicate'
        continue
      }
      const identity = { version: record.version, type: record.type, flags, device: Buffer.from(record.deviceId, 'hex'), sequence: record.sequence }
      let key: Uint8Array | undefined
      if ((record.flags & FrameFlag.Encrypted) !== 0) {
        key = reads.keys.get(record.deviceId)
      }
      const decoded = decodeChunk(identity, bytes, key)
      if (!decoded.ok) {
        refuse(result, decoded.reason, decoded.retry)
        continue
      }
      // A chunk stored again under a sequence keeps a time of its own, so its series keys stay apart.
      const at = mark === undefined ? now : Math.max(now, markTime(mark) + 1)
      if (mark !== undefined) result.sequence_reused = true
      const own = copy ?? { device: device !== undefined ? { ...device } : newDevice(record.deviceId, now), isNew: device === undefined }
      devices.set(record.deviceId, own)
      applyChunk(writes, events, own.device, own.isNew, { device: record.deviceId, sequence: record.sequence, at }, decoded.payload)
      own.isNew = false
      const next = markWith(mark, digest, at)
      writes.marks.push({ device: record.deviceId, sequence: record.sequence, mark: next, digest })
      marks.set(seen, next)
      result.status = 'accepted'
    }
    for (const { device } of devices.values()) writes.devices.push(device)
    return { outcome: { summary: summarize(frames), events }, writes }
  }
}

/** Mark a frame rejected; `retry` when the same bytes may be accepted later. */
/** Why a frame of `device` (undefined: not registered) is refused before anything of it is held, if it is. */
function deviceRefusal (record: { deviceId: string, flags: number }, device: Device | undefined, autoRegister: boolean): string | undefined {
  if (device === undefined && !autoRegister) return `unknown device ${record.deviceId}: register it first`
  if (device?.encrypted === true && (record.flags & FrameFlag.Encrypted) === 0) return `device ${record.deviceId} is registered for encrypted chunks; an unencrypted one is refused`
  return undefined
}

function refuse (result: FrameResult, reason: string, retry: boolean): void {
  result.reason = reason
  if (retry) result.retry = true
}

function summarize (frames: FrameResult[]): IngestSummary {
  const count = (status: FrameStatus): number => frames.filter(f => f.status === status).length
  return { accepted: count('accepted'), duplicate: count('duplicate'), partial: count('partial'), rejected: count('rejected'), frames }
}
