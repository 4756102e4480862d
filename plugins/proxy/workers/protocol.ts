// The messages between the proxy's main thread, which keeps the routing table, health, drains,
// certificates and ACME, and its worker threads, which serve the listeners' connections on ports they
// bind too (SO_REUSEPORT). The main thread sends the table (routes and each replica's health and
// draining), ACME challenge tokens and certificates; a worker sends back the failures of its
// requests, its counts, and the end of each drain it was told of.
import type { CountsReport } from '../metrics.js'
import type { PoolSettings } from '../pools.js'
import type { RouteRecord } from '../route-table.js'
import type { ServerSettings } from '../runtime.js'

/** A worker's start: what it serves and where. */
export interface WorkerInit {
  /** 1 to workers-1 (the main thread is 0). */
  index: number
  settings: ServerSettings
  pools: PoolSettings
  statics: readonly RouteRecord[]
  http: { host: string, port: number }
  https: { host: string, port: number }
}

/** A replica's state as the main thread holds it: id, in rotation (healthy), draining. */
export type UpstreamState = [id: string, healthy: boolean, draining: boolean]

export type ToWorker =
  | { type: 'table', routes: RouteRecord[], states: UpstreamState[], secure: string[] }
  | { type: 'challenges', tokens: Array<[token: string, authorization: string]> }
  /** Certificates changed: contexts made earlier are made again at their next handshake. */
  | { type: 'certificates' }
  | { type: 'certificate', id: number, pair?: { cert: string, key: string }, error?: string }
  /** Answer `drained` with `seq` once no request of this worker is in flight on replica `upstream`. */
  | { type: 'drain', upstream: string, seq: number, timeoutMs: number }
  /** Stop accepting, let requests in flight finish for up to `graceMs`, then exit. */
  | { type: 'close', graceMs: number }

export type FromWorker =
  | { type: 'listening' }
  | { type: 'certificate', id: number, name: string }
  | { type: 'failed', upstream: string, why: string }
  | { type: 'counts', report?: CountsReport, connections: number }
  | { type: 'drained', seq: number }
