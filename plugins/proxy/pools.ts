// Connections to each replica address, kept while the replica exists: an undici pool for the general
// path and the fast lane's own keep-alive connections, both reused across requests and closed once
// a replica is gone.
import { Pool } from 'undici'
import { UpstreamConnections, type ParserFactory } from './fast-lane/index.js'

export interface PoolSettings {
  connectTimeoutMs: number
  /** Longest wait for an upstream's response headers. */
  headersTimeoutMs: number
  /** Longest silence inside an upstream's response body; 0: none (server-sent events). */
  bodyTimeoutMs: number
}

/** Idle connections to a replica are closed after this long. */
const KEEP_ALIVE_MS = 30_000
/** How often the fast lane's connections are checked against their timeouts. */
const SWEEP_MS = 250

export class Pools {
  readonly #pools = new Map<string, Pool>()
  readonly #lanes = new Map<string, UpstreamConnections>()
  /** Lanes of replicas that are gone, swept until their last answer has ended. */
  readonly #retired = new Set<UpstreamConnections>()
  readonly #settings: PoolSettings
  #sweeper: NodeJS.Timeout | undefined

  constructor (settings: PoolSettings) {
    this.#settings = settings
  }

  get (origin: string): Pool {
    let pool = this.#pools.get(origin)
    if (pool === undefined) {
      const { connectTimeoutMs, headersTimeoutMs, bodyTimeoutMs } = this.#settings
      pool = new Pool(origin, { connect: { timeout: connectTimeoutMs }, headersTimeout: headersTimeoutMs, bodyTimeout: bodyTimeoutMs, keepAliveTimeout: KEEP_ALIVE_MS })
      this.#pools.set(origin, pool)
    }
    return pool
  }

  /** The fast lane's connections to the replica at `host:port` (its `origin`). */
  lane (origin: string, host: string, port: number, parser: ParserFactory): UpstreamConnections {
    let lane = this.#lanes.get(origin)
    if (lane === undefined) {
      lane = new UpstreamConnections(host, port, { ...this.#settings, idleTimeoutMs: KEEP_ALIVE_MS }, parser)
      this.#lanes.set(origin, lane)
      this.#sweeper ??= setInterval(() => {
        const now = performance.now()
        for (const each of this.#lanes.values()) each.sweep(now, SWEEP_MS)
        for (const each of this.#retired) {
          each.sweep(now, SWEEP_MS)
          if (each.all.size === 0) this.#retired.delete(each)
        }
      }, SWEEP_MS).unref()
    }
    return lane
  }

  /** Close the connections of a replica that is gone (its requests in flight end first). */
  async close (origin: string): Promise<void> {
    const lane = this.#lanes.get(origin)
    if (lane !== undefined) {
      lane.close()
      this.#lanes.delete(origin)
      this.#retired.add(lane)
    }
    const pool = this.#pools.get(origin)
    if (pool === undefined) return
    this.#pools.delete(origin)
    await pool.close()
  }

  async closeAll (): Promise<void> {
    clearInterval(this.#sweeper)
    this.#sweeper = undefined
    for (const lane of [...this.#lanes.values(), ...this.#retired]) lane.close()
    this.#lanes.clear()
    this.#retired.clear()
    const pools = [...this.#pools.values()]
    this.#pools.clear()
    await Promise.all(pools.map(async pool => { await pool.destroy() }))
  }
}
