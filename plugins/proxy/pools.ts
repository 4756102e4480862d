// One undici connection pool per replica address, kept while the replica exists: connections to
// upstreams are reused across requests (keep-alive), and closed once a replica is gone.
import { Pool } from 'undici'

export interface PoolSettings {
  connectTimeoutMs: number
  /** Longest wait for an upstream's response headers. */
  headersTimeoutMs: number
  /** Longest silence inside an upstream's response body; 0: none (server-sent events). */
  bodyTimeoutMs: number
}

export class Pools {
  readonly #pools = new Map<string, Pool>()
  readonly #settings: PoolSettings

  constructor (settings: PoolSettings) {
    this.#settings = settings
  }

  get (origin: string): Pool {
    let pool = this.#pools.get(origin)
    if (pool === undefined) {
      const { connectTimeoutMs, headersTimeoutMs, bodyTimeoutMs } = this.#settings
      pool = new Pool(origin, { connect: { timeout: connectTimeoutMs }, headersTimeout: headersTimeoutMs, bodyTimeout: bodyTimeoutMs, keepAliveTimeout: 30_000 })
      this.#pools.set(origin, pool)
    }
    return pool
  }

  /** Close the pool of a replica that is gone (its requests in flight have ended). */
  async close (origin: string): Promise<void> {
    const pool = this.#pools.get(origin)
    if (pool === undefined) return
    this.#pools.delete(origin)
    await pool.close()
  }

  async closeAll (): Promise<void> {
    const pools = [...this.#pools.values()]
    this.#pools.clear()
    await Promise.all(pools.map(async pool => { await pool.destroy() }))
  }
}
