// Per-IP token buckets: optional on /ingest and /auth paths, and always for Basic password checks.
// An empty bucket is a 429 with Retry-After; buckets that have been full and idle are removed every 60 s.
import type { FastifyInstance } from 'fastify'
import { BerthError } from '../../kernel/index.js'

export interface BucketSettings {
  /** Requests allowed at once. */
  burst: number
  /** Tokens added per second. */
  per_second: number
}

interface Bucket {
  tokens: number
  updated: number
}

export class TooManyRequests extends BerthError {
  readonly retryAfterSeconds: number
  constructor (retryAfterSeconds: number, message = `too many requests; retry in ${retryAfterSeconds} s`) {
    super(message, 429, 'BERTH_TOO_MANY_REQUESTS')
    this.retryAfterSeconds = retryAfterSeconds
  }
}

export class RateLimiter {
  readonly #buckets = new Map<string, Bucket>()
  readonly #settings: BucketSettings

  constructor (settings: BucketSettings) {
    this.#settings = settings
  }

  get size (): number {
    return this.#buckets.size
  }

  /** Take one token for `ip`; returns 0 when allowed, else the seconds until a token is available. */
  take (ip: string, now = Date.now()): number {
    const { burst, per_second: rate } = this.#settings
    const bucket = this.#buckets.get(ip) ?? { tokens: burst, updated: now }
    bucket.tokens = Math.min(burst, bucket.tokens + (now - bucket.updated) / 1000 * rate)
    bucket.updated = now
    this.#buckets.set(ip, bucket)
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1
      return 0
    }
    return Math.ceil((1 - bucket.tokens) / rate)
  }

  /** Return a token taken for `ip` (a check that turned out well), up to the bucket size. */
  giveBack (ip: string): void {
    const bucket = this.#buckets.get(ip)
    if (bucket !== undefined) bucket.tokens = Math.min(this.#settings.burst, bucket.tokens + 1)
  }

  /** Remove buckets that would be full again by now; returns how many. */
  sweep (now = Date.now()): number {
    const refillMs = this.#settings.burst / this.#settings.per_second * 1000
    let removed = 0
    for (const [ip, bucket] of this.#buckets) {
      if (now - bucket.updated >= refillMs) {
        this.#buckets.delete(ip)
        removed++
      }
    }
    return removed
  }

  install (app: FastifyInstance, prefixes: readonly string[]): void {
    app.addHook('onRequest', async request => {
      if (!prefixes.some(p => request.url === p || request.url.startsWith(`${p}/`) || request.url.startsWith(`${p}?`))) return
      const wait = this.take(request.ip)
      if (wait > 0) throw new TooManyRequests(wait)
    })
  }
}

/** Every 429 of a scope tells the client when to retry. */
export function sendRetryAfter (app: FastifyInstance): void {
  app.addHook('onError', async (_request, reply, error) => {
    if (error instanceof TooManyRequests) reply.header('retry-after', String(error.retryAfterSeconds))
  })
}
