// The gateway's sending side: frames from the spool, in order, posted to POST /ingest/chunks with the
// device key; acknowledged once the server answered each frame. An unreachable server or a 5xx/429
// answer is retried with backoff (1 s doubling to 30 s), the batch unchanged.
import { request } from 'undici'
import type { Spool } from './spool.js'

export interface ForwarderEvents {
  delivered(counts: Record<string, number>, rejected: Array<{ reason?: string }>): void
  waiting(reason: string, retryMs: number, pending: number): void
}

const BATCH_BYTES = 256 * 1024
const RETRY_MIN_MS = 1000
const RETRY_MAX_MS = 30_000

interface Answer { accepted: number, duplicate: number, partial: number, rejected: number, frames: Array<{ status: string, reason?: string }> }

export class Forwarder {
  readonly #url: URL
  readonly #apiKey: string
  readonly #spool: Spool
  readonly #events: ForwarderEvents
  #running = false
  #wake: (() => void) | undefined
  #loop: Promise<void> | undefined

  constructor (url: URL, apiKey: string, spool: Spool, events: ForwarderEvents) {
    this.#url = new URL('/ingest/chunks', url)
    this.#apiKey = apiKey
    this.#spool = spool
    this.#events = events
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

  async #run (): Promise<void> {
    let retryMs = RETRY_MIN_MS
    while (this.#running) {
      const batch = this.#spool.next(BATCH_BYTES)
      if (batch.frames.length === 0) {
        await this.#sleep(undefined)
        continue
      }
      try {
        const answer = await this.#post(Buffer.concat(batch.frames))
        this.#spool.acknowledge(batch.end)
        retryMs = RETRY_MIN_MS
        this.#events.delivered({ accepted: answer.accepted, duplicate: answer.duplicate, partial: answer.partial, rejected: answer.rejected }, answer.frames.filter(f => f.status === 'rejected'))
      } catch (err) {
        this.#events.waiting((err as Error).message, retryMs, this.#spool.pending)
        await this.#sleep(retryMs)
        retryMs = Math.min(retryMs * 2, RETRY_MAX_MS)
      }
    }
  }

  async #post (body: Buffer): Promise<Answer> {
    let response
    try {
      response = await request(this.#url, { method: 'POST', body, headers: { 'content-type': 'application/octet-stream', 'x-api-key': this.#apiKey } })
    } catch (err) {
      throw new Error(`${this.#url.origin} unreachable (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`)
    }
    const text = await response.body.text()
    if (response.statusCode !== 200) throw new Error(`${this.#url.origin} answered ${response.statusCode}: ${text.slice(0, 200)}`)
    return JSON.parse(text) as Answer
  }
}
