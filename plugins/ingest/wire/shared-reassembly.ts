// Reassembly on nodes that share a PostgreSQL database: each chunk's fragments are one document of the
// storage (kind 'fragment', by device and sequence), changed under its per-document lock on every
// node, so the fragments of a chunk may reach any node, and the chunk completes once, where its last
// fragment arrives. The rules are the node-local Reassembler's (stepFragment); the bounds count what
// the last sweep found, plus what this node added since.
import type { LostChunk, PendingChunk, TelemetryStorage } from '../storage/contract.js'
import { LOST_KEPT_MS, stepFragment, type FragmentHeader, type FragmentOutcome, type FragmentStep, type LostEvent, type ReassemblyLimits } from './reassembly.js'

/** A chunk's fragments as a JSON document: each part in base64, with the chunk's key for the sweep. */
interface StoredFragments extends Omit<PendingChunk, 'parts'> {
  key: string
  parts: Array<string | null>
}

type StoredLost = LostChunk & { key: string }

const toDocument = (key: string, pending: PendingChunk): StoredFragments =>
  ({ ...pending, key, parts: pending.parts.map(part => part === null ? null : Buffer.from(part).toString('base64')) })

const fromDocument = ({ key: _, ...stored }: StoredFragments): PendingChunk =>
  ({ ...stored, parts: stored.parts.map(part => part === null ? null : Buffer.from(part, 'base64')) })

export class SharedReassembler {
  readonly #storage: TelemetryStorage
  readonly #limits: ReassemblyLimits
  readonly #count: (event: LostEvent) => void
  #held = { chunks: 0, bytes: 0 }

  constructor (storage: TelemetryStorage, limits: ReassemblyLimits, count: (event: LostEvent) => void = () => {}) {
    this.#storage = storage
    this.#limits = limits
    this.#count = count
  }

  get pending (): { chunks: number, bytes: number } {
    return { ...this.#held }
  }

  /** Add one fragment under its chunk's lock; its answer. */
  async add (key: string, header: FragmentHeader, payload: Uint8Array, now: number): Promise<FragmentOutcome> {
    const lost = await this.#storage.document<StoredLost>('fragment-lost', key)
    let step: FragmentStep | undefined
    let before: PendingChunk | undefined
    await this.#storage.changeDocument<StoredFragments>('fragment', key, current => {
      before = current === undefined ? undefined : fromDocument(current)
      step = stepFragment({ stored: before, lost, header, payload, now, limits: this.#limits, held: this.#held })
      if (step.pending === null) return null
      if (step.pending !== undefined) return toDocument(key, step.pending)
      return step.expired !== undefined ? null : undefined
    })
    const done = step as FragmentStep
    this.#follow(before, done)
    if (done.expired !== undefined) {
      const { expired } = done
      await this.#storage.changeDocument<StoredLost>('fragment-lost', key, () => ({ key, lost_at: now, received: expired.parts.filter(p => p !== null).length, count: expired.count }))
      this.#count('dropped')
    }
    if (done.outcome.status === 'rejected' && done.outcome.resend === true) this.#count('resend')
    if (done.foundAgain === true) await this.#storage.changeDocument<StoredLost>('fragment-lost', key, () => null)
    return done.outcome
  }

  /** This node's view of what is held, after one step from `before`. */
  #follow (before: PendingChunk | undefined, step: FragmentStep): void {
    const was = step.expired === undefined ? before : undefined
    if (step.expired !== undefined) this.#held = { chunks: this.#held.chunks - 1, bytes: this.#held.bytes - step.expired.bytes }
    if (step.pending === null && was !== undefined) this.#held = { chunks: this.#held.chunks - 1, bytes: this.#held.bytes - was.bytes }
    else if (step.pending !== null && step.pending !== undefined) {
      this.#held = { chunks: this.#held.chunks + (was === undefined ? 1 : 0), bytes: this.#held.bytes + step.pending.bytes - (was?.bytes ?? 0) }
    }
  }

  /** Drop the chunks older than the age limit (remembered as lost), forget old lost ones, and count what is held; how many were dropped. */
  async expire (now: number): Promise<number> {
    let dropped = 0
    const held = { chunks: 0, bytes: 0 }
    for (const stored of await this.#storage.documents<StoredFragments>('fragment')) {
      if (now - stored.first_at <= this.#limits.ttlMs) {
        held.chunks++
        held.bytes += stored.bytes
        continue
      }
      // Removed under its lock unless a fragment came meanwhile and made it young again.
      const removed = await this.#storage.changeDocument<StoredFragments>('fragment', stored.key, current => current !== undefined && now - current.first_at > this.#limits.ttlMs ? null : undefined)
      if (removed !== undefined) continue
      await this.#storage.changeDocument<StoredLost>('fragment-lost', stored.key, () => ({ key: stored.key, lost_at: now, received: stored.parts.filter(p => p !== null).length, count: stored.count }))
      this.#count('dropped')
      dropped++
    }
    for (const lost of await this.#storage.documents<StoredLost>('fragment-lost')) {
      if (now - lost.lost_at > LOST_KEPT_MS) await this.#storage.changeDocument<StoredLost>('fragment-lost', lost.key, () => null)
    }
    this.#held = held
    return dropped
  }
}
