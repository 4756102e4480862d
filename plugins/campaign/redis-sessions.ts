// Sessions, pending logins and the session cookie's key in Redis, shared by every instance of the
// app (client: ioredis). A session is one key `<prefix>session:<id>` whose TTL is the idle time, slid
// by GETEX on each request; logout deletes it for every instance. A pending login is a key
// `<prefix>login:<state>` with the login timeout as TTL, taken once by GETDEL on whichever instance
// receives the callback. The cookie key `<prefix>cookie-key` is made once (SET NX) and read by each
// instance at start, and again when a cookie's signature does not hold. Commands are not queued
// while Redis is away: they fail at once, and the caller answers 503.
import { randomBytes } from 'node:crypto'
import { Redis } from 'ioredis'
import { StartupError, Unavailable } from '../../kernel/index.js'
import { CAMPAIGN_CODES } from './errors.js'
import type { PendingLogin, PendingLoginStore } from './pending-logins.js'
import { newSessionId, type SessionRecord, type SessionStore } from './sessions.js'

/** Longest wait for one Redis command before the request is answered 503. */
const COMMAND_TIMEOUT_MS = 2_000
/** Most often the cookie key is fetched again after a signature failed. */
const KEY_REFRESH_MS = 1_000
/** Keys counted per SCAN round trip (for the admin panel's counts). */
const SCAN_BATCH = 1_000

/** A client of the Redis at `url` (redis:// or rediss://), connected; a StartupError when it does not answer. */
export async function connectRedis (url: string, setting: string): Promise<Redis> {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new StartupError(`${setting} is not a URL: expected redis://[user:password@]host:port[/db]`)
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') throw new StartupError(`${setting} must be a redis:// or rediss:// URL, got ${parsed.protocol}`)
  const redis = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: COMMAND_TIMEOUT_MS,
    connectTimeout: COMMAND_TIMEOUT_MS,
    // Reconnect for ever, at most every 2 s: the stores work again as soon as Redis is back.
    retryStrategy: times => Math.min(times * 100, 2_000)
  })
  // Errors while disconnected reach the callers of each command; the client's own are noise.
  redis.on('error', () => {})
  try {
    await redis.connect()
    await redis.ping()
  } catch (err) {
    redis.disconnect()
    throw new StartupError(`the session store at ${parsed.host} (${setting}) does not answer: ${(err as Error).message}`)
  }
  return redis
}

/** Run a Redis command; 503 naming the store when Redis does not answer. */
async function command<T> (run: () => Promise<T>): Promise<T> {
  try {
    return await run()
  } catch (err) {
    throw new Unavailable(`the session store (Redis) does not answer: ${(err as Error).message}`, { code: CAMPAIGN_CODES.SESSION_STORE_UNAVAILABLE, cause: err })
  }
}

/** How many keys match `pattern` (SCAN, so Redis is never blocked). */
async function countKeys (redis: Redis, pattern: string): Promise<number> {
  let cursor = '0'
  let count = 0
  do {
    const [next, keys] = await command(async () => await redis.scan(cursor, 'MATCH', pattern, 'COUNT', SCAN_BATCH))
    cursor = next
    count += keys.length
  } while (cursor !== '0')
  return count
}

/** Redis glob characters in a prefix matched literally. */
const globSafe = (text: string): string => text.replace(/[*?[\]\\]/g, '\\$&')

/** JSON values under `<prefix><key>`, each expiring `ttlMs` after it was written or slid. */
class ExpiringEntries<V> {
  readonly #redis: Redis
  readonly #prefix: string
  readonly #ttlMs: number

  constructor (redis: Redis, prefix: string, ttlMs: number) {
    this.#redis = redis
    this.#prefix = prefix
    this.#ttlMs = Math.round(ttlMs)
  }

  async set (key: string, value: V): Promise<void> {
    await command(async () => await this.#redis.set(this.#prefix + key, JSON.stringify(value), 'PX', this.#ttlMs))
  }

  /** The value, its expiry pushed back (GETEX). */
  async slide (key: string): Promise<V | undefined> {
    return parsed(await command(async () => await this.#redis.getex(this.#prefix + key, 'PX', this.#ttlMs)))
  }

  /** The value, removed (GETDEL): only one caller, on any instance, gets it. */
  async take (key: string): Promise<V | undefined> {
    return parsed(await command(async () => await this.#redis.getdel(this.#prefix + key)))
  }

  async delete (key: string): Promise<void> {
    await command(async () => await this.#redis.del(this.#prefix + key))
  }

  async count (): Promise<number> {
    return await countKeys(this.#redis, `${globSafe(this.#prefix)}*`)
  }
}

const parsed = <V>(value: string | null): V | undefined => value === null ? undefined : JSON.parse(value) as V

export class RedisSessions implements SessionStore {
  readonly #entries: ExpiringEntries<SessionRecord>

  constructor (redis: Redis, options: { prefix: string, idleMs: number }) {
    this.#entries = new ExpiringEntries(redis, `${options.prefix}session:`, options.idleMs)
  }

  async create (record: SessionRecord): Promise<string> {
    const id = newSessionId()
    await this.#entries.set(id, record)
    return id
  }

  async touch (id: string): Promise<SessionRecord | undefined> {
    return await this.#entries.slide(id)
  }

  async delete (id: string): Promise<void> {
    await this.#entries.delete(id)
  }

  async count (): Promise<number> {
    return await this.#entries.count()
  }
}

export class RedisPendingLogins implements PendingLoginStore {
  readonly #entries: ExpiringEntries<PendingLogin>

  constructor (redis: Redis, options: { prefix: string, ttlMs: number }) {
    this.#entries = new ExpiringEntries(redis, `${options.prefix}login:`, options.ttlMs)
  }

  async add (state: string, login: PendingLogin): Promise<void> {
    await this.#entries.set(state, login)
  }

  async take (state: string): Promise<PendingLogin | undefined> {
    return await this.#entries.take(state)
  }

  async count (): Promise<number> {
    return await this.#entries.count()
  }
}

/**
 * The session cookie's key shared through Redis: made by the first instance (SET NX), read by the
 * others. `refresh()` reads it again (at most once a second) and says whether it changed, as it does
 * when Redis lost its data and an instance made a new one.
 */
export class SharedCookieKey {
  readonly #redis: Redis
  readonly #name: string
  #key: Buffer = Buffer.alloc(0)
  #fetchedAt = 0

  constructor (redis: Redis, prefix: string) {
    this.#redis = redis
    this.#name = `${prefix}cookie-key`
  }

  get key (): Buffer {
    return this.#key
  }

  async refresh (): Promise<boolean> {
    if (Date.now() - this.#fetchedAt < KEY_REFRESH_MS) return false
    this.#fetchedAt = Date.now()
    const made = randomBytes(32).toString('base64')
    await command(async () => await this.#redis.set(this.#name, made, 'NX'))
    const stored = await command(async () => await this.#redis.get(this.#name))
    const key = Buffer.from(stored ?? made, 'base64')
    if (key.equals(this.#key)) return false
    this.#key = key
    return true
  }
}
