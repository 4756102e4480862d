// The identity provider's userinfo endpoint, as SSO mode's fallback asks it: each answer is kept per
// token (by its SHA-256; 1024 tokens at most, 30 s at most, never past the token's expiry), and calls
// draw on one token bucket for all clients together, so a flood of bad tokens reaches the provider a
// few times at most: beyond the bucket a token is refused without a call.
import { createHash } from 'node:crypto'
import type { JWTPayload } from 'jose'
import { RateLimiter, type BucketSettings } from '../rate-limit.js'

const TIMEOUT_MS = 5_000
const KEEP_MS = 30_000
const KEEP_ENTRIES = 1024
/** Calls to the endpoint: 10 at once, then one a second. */
const CALLS: BucketSettings = { burst: 10, per_second: 1 }

/** The provider's claims, its refusal, or no answer (unreachable, timed out, 5xx): the last is not kept. */
type Answer = JWTPayload | 'refused' | 'unanswered'

interface Kept {
  answer: Promise<Answer>
  until: number
}

export class Userinfo {
  readonly #url: string
  readonly #kept = new Map<string, Kept>()
  readonly #calls = new RateLimiter(CALLS)

  constructor (url: string) {
    this.#url = url
  }

  /**
   * The claims the provider gives for `token`, or undefined when it refuses, does not answer, or the
   * budget of calls is spent. `expiresAt` (seconds since the epoch: a JWT's `exp`) bounds how long
   * the answer is kept; a token already expired is refused without a call.
   */
  async claims (token: string, expiresAt = Infinity, now = Date.now()): Promise<JWTPayload | undefined> {
    const until = Math.min(now + KEEP_MS, expiresAt * 1000)
    if (until <= now) return undefined
    const key = createHash('sha256').update(token).digest('base64')
    let kept = this.#kept.get(key)
    if (kept === undefined || kept.until <= now) {
      this.#kept.delete(key)
      if (this.#calls.take('userinfo', now) > 0) return undefined
      kept = { answer: this.#ask(token), until }
      this.#keep(key, kept)
    }
    const answer = await kept.answer
    return typeof answer === 'string' ? undefined : answer
  }

  /** Keep an answer (the oldest one goes when full); forget it once it turns out to be no answer. */
  #keep (key: string, kept: Kept): void {
    const oldest = this.#kept.keys().next()
    if (this.#kept.size >= KEEP_ENTRIES && oldest.done !== true) this.#kept.delete(oldest.value)
    this.#kept.set(key, kept)
    void kept.answer.then(answer => {
      if (answer === 'unanswered' && this.#kept.get(key) === kept) this.#kept.delete(key)
    })
  }

  async #ask (token: string): Promise<Answer> {
    try {
      const response = await fetch(this.#url, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(TIMEOUT_MS) })
      if (response.status >= 500) return 'unanswered'
      const body: unknown = await response.json().catch(() => undefined)
      return response.ok && typeof body === 'object' && body !== null ? body as JWTPayload : 'refused'
    } catch {
      return 'unanswered'
    }
  }
}
