// Reassembly of fragmented chunks (small-MTU transports). Pending fragments live in LMDB, so an
// acknowledged fragment survives a restart; their number, their bytes and their age are bounded. A
// chunk dropped incomplete for its age is remembered (LOST_KEPT_MS): a later fragment of it is refused
// with `retry`, so that the device sends the whole chunk again, starting with its first fragment.
import type { Database } from 'lmdb'
import { FRAME_MAX_PAYLOAD } from '../../../wasm/index.js'
import type { LostChunk, PendingChunk } from '../store.js'

/** How long a chunk dropped incomplete is remembered, to tell its device to send it again. */
export const LOST_KEPT_MS = 7 * 86_400_000

export interface ReassemblyLimits {
  /** Chunks that may be incomplete at once. */
  maxChunks: number
  /** Fragment bytes that may be held at once. */
  maxBytes: number
  /** A chunk whose first fragment is older than this is dropped. */
  ttlMs: number
}

export interface FragmentHeader {
  type: number
  /** The frame's flags without the retransmission bit (the fragments of one chunk agree on the rest). */
  flags: number
  fragmentIndex: number
  fragmentCount: number
  /** This fragment carried the retransmission bit (version 2). */
  retransmitted: boolean
}

/** A chunk dropped incomplete for its age, or a whole chunk asked for again because of one. */
export type LostEvent = 'dropped' | 'resend'

export type FragmentOutcome =
  | { status: 'partial', received: number, count: number }
  | { status: 'complete', bytes: Uint8Array, retransmitted: boolean }
  /** `retry`: refused for want of room, so the same fragment may be taken later; `resend`: the earlier fragments were dropped, the whole chunk is wanted again. */
  | { status: 'rejected', reason: string, retry: boolean, resend?: true }

export class Reassembler {
  readonly #db: Database<PendingChunk, string>
  readonly #lost: Database<LostChunk, string>
  readonly #limits: ReassemblyLimits
  readonly #count: (event: LostEvent) => void
  #chunks = 0
  #bytes = 0

  /** `count` hears of each chunk dropped incomplete and each whole chunk asked for again. */
  constructor (db: Database<PendingChunk, string>, lost: Database<LostChunk, string>, limits: ReassemblyLimits, count: (event: LostEvent) => void = () => {}) {
    this.#db = db
    this.#lost = lost
    this.#limits = limits
    this.#count = count
    this.#recount()
  }

  /**
   * Await the transaction in which add() or expire() ran. The counts kept in memory follow their
   * writes; if the transaction failed it rolled back, so they are counted again from the database.
   */
  async settle<T> (transaction: Promise<T>): Promise<T> {
    try {
      return await transaction
    } catch (err) {
      this.#recount()
      throw err
    }
  }

  /** Count pending chunks and bytes from the database. */
  #recount (): void {
    this.#chunks = 0
    this.#bytes = 0
    for (const { value } of this.#db.getRange()) {
      this.#chunks++
      this.#bytes += value.bytes
    }
  }

  get pending (): { chunks: number, bytes: number } {
    return { chunks: this.#chunks, bytes: this.#bytes }
  }

  /** Add one fragment; call inside a write transaction passed to settle(). */
  add (key: string, header: FragmentHeader, payload: Uint8Array, now: number): FragmentOutcome {
    const step = stepFragment({ stored: this.#db.get(key), lost: this.#lost.get(key), header, payload, now, limits: this.#limits, held: this.pending })
    if (step.expired !== undefined) this.#dropLost(key, step.expired, now)
    if (step.outcome.status === 'rejected' && step.outcome.resend === true) this.#count('resend')
    if (step.foundAgain === true) this.#lost.remove(key)
    const before = step.expired === undefined ? this.#db.get(key) : undefined
    if (step.pending === null && before !== undefined) this.#drop(key, before)
    else if (step.pending !== null && step.pending !== undefined) {
      this.#db.put(key, step.pending)
      if (before === undefined) this.#chunks++
      this.#bytes += step.pending.bytes - (before?.bytes ?? 0)
    }
    return step.outcome
  }

  /** Drop chunks whose first fragment is older than the time limit (remembered as lost), and forget old lost ones; returns how many were dropped. Same rule as add(). */
  expire (now: number): number {
    let dropped = 0
    for (const { key, value } of this.#db.getRange()) {
      if (now - value.first_at > this.#limits.ttlMs) {
        this.#dropLost(key, value, now)
        dropped++
      }
    }
    for (const { key, value } of this.#lost.getRange()) if (now - value.lost_at > LOST_KEPT_MS) this.#lost.remove(key)
    return dropped
  }

  /** A chunk dropped incomplete for its age: remembered, so that its next fragment asks for the whole chunk again. */
  #dropLost (key: string, pending: PendingChunk, now: number): void {
    this.#drop(key, pending)
    this.#lost.put(key, { lost_at: now, received: pending.parts.filter(p => p !== null).length, count: pending.count })
    this.#count('dropped')
  }

  #drop (key: string, pending: PendingChunk): void {
    this.#db.remove(key)
    this.#chunks--
    this.#bytes -= pending.bytes
  }
}

/** One fragment and what it meets: the chunk's stored fragments and lost mark, the limits, and what is held in all. */
export interface FragmentInput {
  stored: PendingChunk | undefined
  lost: LostChunk | undefined
  header: FragmentHeader
  payload: Uint8Array
  now: number
  limits: ReassemblyLimits
  held: { chunks: number, bytes: number }
}

/** What one fragment does: the answer, and what becomes of its chunk's stored fragments. */
export interface FragmentStep {
  outcome: FragmentOutcome
  /** The chunk's fragments after it: new ones to store, null to remove them (complete), undefined to leave them. */
  pending?: PendingChunk | null
  /** The stored fragments were older than the age limit: dropped, to be remembered as lost. */
  expired?: PendingChunk
  /** The chunk comes again from its first fragment: its lost mark ends. */
  foundAgain?: boolean
}

/** The rules of reassembly, apart from where the fragments are kept (this node's LMDB, or a database nodes share). */
export function stepFragment ({ stored, lost, header, payload, now, limits, held }: FragmentInput): FragmentStep {
  const expired = stored !== undefined && now - stored.first_at > limits.ttlMs ? stored : undefined
  const current = expired === undefined ? stored : undefined
  const mark = expired === undefined ? lost : { lost_at: now, received: expired.parts.filter(p => p !== null).length, count: expired.count }
  const step = (outcome: FragmentOutcome, more: Omit<FragmentStep, 'outcome'> = {}): FragmentStep => ({ outcome, ...(expired !== undefined && { expired }), ...more })
  let foundAgain = false
  if (current === undefined && mark !== undefined) {
    // The device sends the chunk again from its first fragment; a later one means it does not know yet.
    if (header.fragmentIndex > 0) {
      return step({ status: 'rejected', reason: `the earlier fragments of this chunk (${mark.received} of ${mark.count}) were dropped, older than ${limits.ttlMs / 1000} s, before the rest came; send the whole chunk again`, retry: true, resend: true })
    }
    foundAgain = true
  }
  const again = foundAgain ? { foundAgain } : {}
  if (current === undefined && held.chunks >= limits.maxChunks) {
    return step({ status: 'rejected', reason: `${held.chunks} chunks are already being reassembled (the limit); send again later`, retry: true }, again)
  }
  const pending: PendingChunk = current === undefined
    ? { type: header.type, flags: header.flags, count: header.fragmentCount, parts: new Array<null>(header.fragmentCount).fill(null), bytes: 0, first_at: now, retransmitted: false }
    : { ...current, parts: [...current.parts] }
  if (pending.type !== header.type || pending.flags !== header.flags || pending.count !== header.fragmentCount) {
    return step({ status: 'rejected', reason: 'fragment disagrees with earlier fragments of this chunk on type, flags or fragment count', retry: false }, again)
  }
  const earlier = pending.parts[header.fragmentIndex]
  if (earlier !== null) {
    if (Buffer.compare(earlier, payload) !== 0) return step({ status: 'rejected', reason: `fragment ${header.fragmentIndex} differs from the copy received before`, retry: false }, again)
    const partial: FragmentOutcome = { status: 'partial', received: pending.parts.filter(p => p !== null).length, count: pending.count }
    return step(partial, header.retransmitted && pending.retransmitted !== true ? { ...again, pending: { ...pending, retransmitted: true } } : again)
  }
  if (held.bytes + payload.length > limits.maxBytes) {
    return step({ status: 'rejected', reason: `reassembly buffer full (${limits.maxBytes} bytes); send again later`, retry: true }, again)
  }
  pending.parts[header.fragmentIndex] = Buffer.from(payload)
  pending.bytes += payload.length
  if (header.retransmitted) pending.retransmitted = true
  const received = pending.parts.filter(p => p !== null).length
  if (received < pending.count) return step({ status: 'partial', received, count: pending.count }, { ...again, pending })
  const bytes = Buffer.concat(pending.parts as Uint8Array[])
  const done = { ...again, pending: current === undefined ? undefined : null }
  if (bytes.length > FRAME_MAX_PAYLOAD) return step({ status: 'rejected', reason: `reassembled chunk is ${bytes.length} bytes; at most ${FRAME_MAX_PAYLOAD} are allowed`, retry: false }, done)
  return step({ status: 'complete', bytes, retransmitted: pending.retransmitted === true }, done)
}
