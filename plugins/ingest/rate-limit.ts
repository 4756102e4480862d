// Token buckets by key: optional on /auth (per client address) and /ingest (per device of the body's
// frames), always for Basic password checks (per client address) and userinfo calls (one bucket).
// An empty bucket is a 429 with Retry-After; buckets that have been full and idle are removed every 60 s.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { BerthError, KERNEL_CODES } from '../../kernel/index.js'
import { StorageUnavailable } from './storage/contract.js'
import { codecs } from '../../wasm/index.js'
import type { ClientAddress } from './client-address.js'

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
    super(message, KERNEL_CODES.TOO_MANY_REQUESTS.status, KERNEL_CODES.TOO_MANY_REQUESTS.code)
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

  /** Take one token for `key`; returns 0 when allowed, else the seconds until a token is available. */
  take (key: string, now = Date.now()): number {
    return this.takeAll([key], now)
  }

  /**
   * Take one token from the bucket of each of `keys` (distinct), only when every one of them has a
   * token: returns 0 then, else the seconds until all have one (and takes nothing).
   */
  takeAll (keys: readonly string[], now = Date.now()): number {
    const { burst, per_second: rate } = this.#settings
    const buckets = keys.map(key => {
      const bucket = this.#buckets.get(key) ?? { tokens: burst, updated: now }
      bucket.tokens = Math.min(burst, bucket.tokens + (now - bucket.updated) / 1000 * rate)
      bucket.updated = now
      this.#buckets.set(key, bucket)
      return bucket
    })
    const wait = Math.max(0, ...buckets.map(bucket => Math.ceil((1 - bucket.tokens) / rate)))
    if (wait === 0) for (const bucket of buckets) bucket.tokens -= 1
    return wait
  }

  /** Return a token taken for `key` (a check that turned out well), up to the bucket size. */
  giveBack (key: string): void {
    const bucket = this.#buckets.get(key)
    if (bucket !== undefined) bucket.tokens = Math.min(this.#settings.burst, bucket.tokens + 1)
  }

  /** Remove buckets that would be full again by now; returns how many. */
  sweep (now = Date.now()): number {
    const refillMs = this.#settings.burst / this.#settings.per_second * 1000
    let removed = 0
    for (const [key, bucket] of this.#buckets) {
      if (now - bucket.updated >= refillMs) {
        this.#buckets.delete(key)
        removed++
      }
    }
    return removed
  }

  /**
   * Answer 429 to a request under `prefix` once one of its keys has no token left, checked at `hook`:
   * onRequest (before the body is read) or preHandler (after, for keys the body holds).
   */
  limit (app: FastifyInstance, prefix: string, hook: 'onRequest' | 'preHandler', keysOf: (request: FastifyRequest) => readonly string[]): void {
    const check = async (request: FastifyRequest): Promise<void> => {
      const { url } = request
      if (url !== prefix && !url.startsWith(`${prefix}/`) && !url.startsWith(`${prefix}?`)) return
      const wait = this.takeAll(keysOf(request))
      if (wait > 0) throw new TooManyRequests(wait)
    }
    if (hook === 'onRequest') app.addHook('onRequest', check)
    else app.addHook('preHandler', check)
  }
}

/**
 * Whom an /ingest request counts against: each device whose frames a chunk upload carries, so the
 * devices behind one gateway have a bucket each; the client address for anything else (an ELF
 * upload, a body without a readable frame).
 */
export function ingestKeys (request: FastifyRequest, clientOf: ClientAddress): string[] {
  const devices = new Set<string>()
  if (request.routeOptions.url === '/ingest/chunks' && Buffer.isBuffer(request.body)) {
    for (const frame of codecs.parseFrames(request.body)) if (frame.status === 'ok') devices.add(frame.deviceId)
  }
  return devices.size > 0 ? [...devices] : [clientOf(request)]
}

/** Every 429 of a scope, and every 503 of a storage out of reach, tells the client when to retry. */
export function sendRetryAfter (app: FastifyInstance): void {
  app.addHook('onError', async (_request, reply, error) => {
    if (error instanceof TooManyRequests || error instanceof StorageUnavailable) reply.header('retry-after', String(error.retryAfterSeconds))
  })
}
