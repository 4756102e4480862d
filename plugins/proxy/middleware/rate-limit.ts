// A request rate limit per client address: a token bucket of `burst` requests refilled at
// `requests / per_seconds` a second. Buckets are plain entries of a map; once it holds many, the full
// ones (clients quiet long enough to be back at `burst`) are dropped, so a flood of addresses cannot
// grow it without end.
export interface RateLimitSettings {
  requests: number
  per_seconds: number
  burst: number
}

interface Bucket {
  tokens: number
  /** performance.now() of the last refill. */
  at: number
}

/** Buckets kept before the full ones are swept. */
const SWEEP_AT = 10_000

export class RateLimiter {
  readonly #burst: number
  /** Tokens per millisecond. */
  readonly #rate: number
  readonly #buckets = new Map<string, Bucket>()

  constructor (settings: RateLimitSettings) {
    this.#burst = settings.burst
    this.#rate = settings.requests / (settings.per_seconds * 1000)
  }

  /** Take a token for `client`: 0 when the request may go, else the seconds until one is free. */
  take (client: string, now = performance.now()): number {
    let bucket = this.#buckets.get(client)
    if (bucket === undefined) {
      if (this.#buckets.size >= SWEEP_AT) this.#sweep(now)
      bucket = { tokens: this.#burst, at: now }
      this.#buckets.set(client, bucket)
    } else {
      bucket.tokens = Math.min(this.#burst, bucket.tokens + (now - bucket.at) * this.#rate)
      bucket.at = now
    }
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1
      return 0
    }
    return Math.max(1, Math.ceil((1 - bucket.tokens) / this.#rate / 1000))
  }

  #sweep (now: number): void {
    for (const [client, bucket] of this.#buckets) {
      if (bucket.tokens + (now - bucket.at) * this.#rate >= this.#burst) this.#buckets.delete(client)
    }
  }
}
