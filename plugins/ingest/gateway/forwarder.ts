// The gateway's sending side: frames from the spool, in order, posted to POST /ingest/chunks with the
// device key, and acknowledged once the server answered each one. What the server refused for a
// reason that can change (an unknown device, a missing key, a full reassembly buffer: `retry` in its
// answer) moves to the held spool and is offered again with backoff; only what it can never accept is
// dropped, and counted. An unreachable server or a 429/5xx answer is retried with backoff (1 s doubling
// to 30 s), the batch unchanged. A frame a request may have carried to the server before goes again
// with the retransmission bit (version 2), so a copy is answered `duplicate`.
import { request } from 'undici'
import { asRetransmission } from '../wire/retransmission.js'
import type { Spool } from './spool.js'

const BATCH_BYTES = 256 * 1024
const RETRY_MIN_MS = 1000
const RETRY_MAX_MS = 30_000
/** Held frames are offered again after this, doubling up to HELD_MAX_MS while none is taken. */
const HELD_MIN_MS = 5000
const HELD_MAX_MS = 300_000
const REQUEST_TIMEOUT_MS = 30_000
/** Errors that mean the request never reached the server. */
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT'])

type Outcome = 'accepted' | 'duplicate' | 'partial'

/** What the gateway has done with frames since it started (its output and its metrics show them). */
export interface ForwardCounts {
  forwarded: Record<Outcome, number>
  /** Frames the server refused for a reason that can change, put on hold. */
  held: number
  /** Frames the server can never accept, dropped. */
  rejected: number
  /** Frames sent again with the retransmission bit. */
  retransmitted: number
}

export interface ForwarderEvents {
  /** A batch was answered: its counts, and the reasons of the frames held and dropped. */
  delivered(counts: Record<Outcome | 'rejected', number>, held: string[], dropped: string[], from: 'spool' | 'held'): void
  waiting(reason: string, retryMs: number, pending: number): void
}

interface FrameAnswer { offset: number, status: string, reason?: string, retry?: boolean }
interface Answer { frames: FrameAnswer[] }

/** A request that did not get an answer: `sent` false when it surely never reached the server. */
class NotAnswered extends Error {
  constructor (message: string, readonly sent: boolean) {
    super(message)
  }
}

export class Forwarder {
  readonly #url: URL
  readonly #apiKey: string
  readonly #spool: Spool
  readonly #held: Spool
  readonly #events: ForwarderEvents
  readonly counts: ForwardCounts = { forwarded: { accepted: 0, duplicate: 0, partial: 0 }, held: 0, rejected: 0, retransmitted: 0 }
  #running = false
  #wake: (() => void) | undefined
  #loop: Promise<void> | undefined
  #heldDelayMs = HELD_MIN_MS
  #heldDueAt = 0

  constructor (url: URL, apiKey: string, spool: Spool, held: Spool, events: ForwarderEvents) {
    this.#url = new URL('/ingest/chunks', url)
    this.#apiKey = apiKey
    this.#spool = spool
    this.#held = held
    this.#events = events
    this.#heldDueAt = Date.now() + HELD_MIN_MS
  }

  start (): void {
    this.#running = true
    this.#loop = this.#run()
  }

  /** New frames are in the spool. */
  notify (): void {
    this.#wake?.()
  }

  async stop (): Promise<void> {
    this.#running = false
    this.#wake?.()
    await this.#loop
  }

  async #sleep (ms: number | undefined): Promise<void> {
    await new Promise<void>(resolve => {
      const timer = ms === undefined ? undefined : setTimeout(resolve, ms)
      this.#wake = () => { clearTimeout(timer); resolve() }
    })
    this.#wake = undefined
  }

  /** The spool when it has frames; else the held frames when they are due; else how long to wait. */
  #source (): { spool: Spool, from: 'spool' | 'held' } | { waitMs: number | undefined } {
    if (this.#spool.pending > 0) return { spool: this.#spool, from: 'spool' }
    if (this.#held.pending === 0) return { waitMs: undefined }
    const wait = this.#heldDueAt - Date.now()
    return wait <= 0 ? { spool: this.#held, from: 'held' } : { waitMs: wait }
  }

  async #run (): Promise<void> {
    let retryMs = RETRY_MIN_MS
    while (this.#running) {
      const source = this.#source()
      if ('waitMs' in source) {
        await this.#sleep(source.waitMs)
        continue
      }
      const { spool, from } = source
      const batch = spool.next(BATCH_BYTES)
      const attemptedBefore = spool.attempted
      spool.attempt(batch.end)
      const frames = batch.frames.map(f => f.sentBefore ? asRetransmission(f.bytes) : f.bytes)
      try {
        const answer = await this.#post(Buffer.concat(frames))
        this.#settle(frames, answer, from)
        spool.acknowledge(batch.end)
        this.counts.retransmitted += batch.frames.filter(f => f.sentBefore).length
        retryMs = RETRY_MIN_MS
      } catch (err) {
        if (err instanceof NotAnswered && !err.sent) spool.notSent(attemptedBefore)
        this.#events.waiting((err as Error).message, retryMs, spool.pending)
        await this.#sleep(retryMs)
        retryMs = Math.min(retryMs * 2, RETRY_MAX_MS)
      }
    }
  }

  /** Count the answer; hold what may be taken later, drop what never will. */
  #settle (frames: readonly Buffer[], answer: Answer, from: 'spool' | 'held'): void {
    const byOffset = new Map(answer.frames.map(f => [f.offset, f]))
    const counts = { accepted: 0, duplicate: 0, partial: 0, rejected: 0 }
    const hold: Buffer[] = []
    const heldReasons: string[] = []
    const droppedReasons: string[] = []
    let offset = 0
    for (const frame of frames) {
      const result = byOffset.get(offset)
      offset += frame.length
      const status = result?.status ?? 'rejected'
      if (status === 'accepted' || status === 'duplicate' || status === 'partial') {
        counts[status]++
        this.counts.forwarded[status]++
        continue
      }
      counts.rejected++
      const reason = result?.reason ?? 'the server gave no answer for this frame'
      if (result === undefined || result.retry === true) {
        hold.push(frame)
        heldReasons.push(reason)
      } else {
        droppedReasons.push(reason)
      }
    }
    this.counts.held += hold.length
    this.counts.rejected += droppedReasons.length
    const heldBefore = this.#held.pending
    this.#held.append(hold)
    if (from === 'held') {
      // Backoff while held frames keep being refused; offered again soon once one is taken.
      this.#heldDelayMs = counts.accepted + counts.duplicate + counts.partial > 0 ? HELD_MIN_MS : Math.min(this.#heldDelayMs * 2, HELD_MAX_MS)
      this.#heldDueAt = Date.now() + this.#heldDelayMs
    } else if (heldBefore === 0 && hold.length > 0) {
      this.#heldDelayMs = HELD_MIN_MS
      this.#heldDueAt = Date.now() + HELD_MIN_MS
    }
    this.#events.delivered(counts, heldReasons, droppedReasons, from)
  }

  /** When held frames are next offered, in ms from now (0 when none are held). */
  get heldRetryMs (): number {
    return this.#held.pending === 0 ? 0 : Math.max(0, this.#heldDueAt - Date.now())
  }

  async #post (body: Buffer): Promise<Answer> {
    let response
    try {
      response = await request(this.#url, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/octet-stream', 'x-api-key': this.#apiKey },
        headersTimeout: REQUEST_TIMEOUT_MS,
        bodyTimeout: REQUEST_TIMEOUT_MS
      })
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? ''
      throw new NotAnswered(`${this.#url.origin} unreachable (${code !== '' ? code : (err as Error).message})`, !NOT_SENT.has(code))
    }
    const text = await response.body.text()
    // A 4xx is a refusal before anything was stored; a 5xx may come after a commit.
    if (response.statusCode !== 200) throw new NotAnswered(`${this.#url.origin} answered ${response.statusCode}: ${text.slice(0, 200)}`, response.statusCode >= 500)
    return JSON.parse(text) as Answer
  }
}
