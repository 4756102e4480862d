// Ingest benchmark: chunks/s end to end over HTTP (1, 10, 100 frames per request, with and without
// AES-CCM, 8 and 64 requests in flight) against `berth server` in a child, beside the ceilings of the
// same chunks: decode only; the server's writes (one device per transaction, as a request carries
// one device, issued as the server issues them, and the same without faults, which need a transaction
// callback); and plain async puts (2 of ~100 bytes per chunk).
// With BENCH_INGEST_BACKEND=lmdb,postgres it compares the storage backends instead: HTTP end to end at 1,
// 10 and 100 frames per request, 64 in flight, on LMDB and on PostgreSQL (bench/postgres.ts), side by side.
// Run: npm run build && node dist/bench/ingest.js   (BENCH_RUNS, BENCH_SECONDS bound the work; BENCH_BATCHES,
// BENCH_CONCURRENCIES (comma-separated) and BENCH_CCM=yes|no choose the measurements)
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { Store } from '../kernel/store.js'
import { applyChunk, newDevice, type TelemetryEvent } from '../plugins/ingest/apply.js'
import { emptyWrites } from '../plugins/ingest/storage/contract.js'
import { LmdbStorage } from '../plugins/ingest/storage/lmdb.js'
import { PostgresStorage, SCHEMA } from '../plugins/ingest/storage/postgres.js'
import { ADMIN_PASSWORD_FILE } from '../plugins/ingest/commands.js'
import { seenKey, TelemetryStore } from '../plugins/ingest/store.js'
import { decodeChunk } from '../plugins/ingest/wire/decoder.js'
import { encodeChunk } from '../plugins/ingest/wire/encoder.js'
import type { ChunkPayload } from '../plugins/ingest/wire/payloads.js'
import { codecs } from '../wasm/index.js'
import { startServer, stopServer } from './berth-server.js'
import { BACKEND_NAMES, benchBackends, startBenchPostgres, type Backend, type BenchPostgres } from './postgres.js'
import { cpuSeconds, postgresCpuSeconds } from './process-cpu.js'
import { envInt, markdownTable, median } from './stats.js'
import { deviceIds, registerEncrypted, runLoad, simulatedPayload, type SimDevice } from './telemetry-load.js'

const RUNS = envInt('BENCH_RUNS', 5)
const SECONDS = envInt('BENCH_SECONDS', 3)
const WARMUP_SECONDS = 1
/** A comma-separated list of numbers from the environment, or `fallback`. */
const envList = (name: string, fallback: number[]): number[] => process.env[name]?.split(',').map(Number).filter(n => Number.isInteger(n) && n > 0) ?? fallback
const BATCHES = envList('BENCH_BATCHES', [1, 10, 100])
const DEVICES = 64
/** Requests in flight (HTTP), or transactions in flight (the ceilings: the larger one). */
const CONCURRENCIES = envList('BENCH_CONCURRENCIES', [8, 64])
/** With and without AES-CCM, or one of them (BENCH_CCM=yes or no). */
const CCM_MODES = process.env.BENCH_CCM === 'yes' ? [true] : process.env.BENCH_CCM === 'no' ? [false] : [false, true]
const CEILING_CONCURRENCY = 64
/** Distinct chunks the in-process ceilings cycle through. */
const POOL = 600
/** Chunks/s the measured window has chunks for (encoded beforehand), by frames per request; a faster server ends the window early. */
const BUDGET_RATE: Record<number, number> = { 1: 20_000, 10: 60_000, 100: 150_000 }
/** Sequence of the first measured chunk (the warm-up sends from 0). */
const MEASURED_FROM = 1_000_000_000
const ID_PREFIX = 'be000000'
const API_KEY = randomBytes(16).toString('hex')

const ids = deviceIds(DEVICES, ID_PREFIX)
const payloads = Array.from({ length: POOL }, (_, n) => simulatedPayload(n % DEVICES, n))

/** CPU milliseconds per 1,000 accepted chunks, by process. */
interface CpuCost { load: number, server: number, database: number }

/**
 * Accepted chunks/s through POST /ingest/chunks, after a warm-up, and the CPU each process used for
 * them (this load generator, the server, PostgreSQL); on a fresh database of `postgres` when given.
 */
async function httpRate (batch: number, ccm: boolean, concurrency: number, postgres?: BenchPostgres, stored?: (database: string) => Promise<void>): Promise<{ rate: number, cpu: CpuCost }> {
  const database = await postgres?.database()
  const server = await startServer({ plugins: 'ingest', env: { INGEST_API_KEY: API_KEY, ...(database !== undefined ? { INGEST_DATABASE_URL: database } : {}) } })
  try {
    const devices: SimDevice[] = ccm
      ? await registerEncrypted(server.url, 'admin', readFileSync(join(server.dir, '.berth', ADMIN_PASSWORD_FILE), 'utf8').trim(), ids)
      : ids.map(id => ({ id }))
    const load = { url: server.url, apiKey: API_KEY, devices, framesPerRequest: batch, concurrency }
    await runLoad({ ...load, chunksPerDevice: Number.MAX_SAFE_INTEGER, seconds: WARMUP_SECONDS, firstSequence: 0 })
    const chunksPerDevice = Math.ceil(BUDGET_RATE[batch] * SECONDS / DEVICES)
    const databaseCpu = (): number => postgres === undefined ? 0 : postgresCpuSeconds(postgres.server.port)
    const before = { own: process.cpuUsage(), server: cpuSeconds(server.child.pid ?? 0), database: databaseCpu() }
    const totals = await runLoad({ ...load, chunksPerDevice, seconds: SECONDS, firstSequence: MEASURED_FROM, preEncode: true })
    const own = process.cpuUsage(before.own)
    const perThousand = (seconds: number): number => seconds * 1e6 / totals.accepted
    const cpu = { load: perThousand((own.user + own.system) / 1e6), server: perThousand(cpuSeconds(server.child.pid ?? 0) - before.server), database: perThousand(databaseCpu() - before.database) }
    if (totals.accepted !== totals.frames) throw new Error(`${totals.frames - totals.accepted} frame(s) not accepted: ${totals.reasons.join('; ')}`)
    return { rate: totals.accepted / totals.seconds, cpu }
  } finally {
    await stopServer(server)
    if (database !== undefined) {
      await stored?.(database)
      await postgres?.drop(database)
    }
  }
}

/** Chunks/s of `step` (which returns the chunks it handled), called until SECONDS have passed. */
function timed (step: () => number): number {
  const started = performance.now()
  const deadline = started + SECONDS * 1000
  let chunks = 0
  while (performance.now() < deadline) chunks += step()
  return chunks / ((performance.now() - started) / 1000)
}

/** Frame parsing + AES-CCM open + RLE/Avro decode of request bodies in this process: no HTTP, no LMDB. */
function decodeRate (batch: number, ccm: boolean): number {
  const keys = new Map(ids.map(id => [id, ccm ? randomBytes(16) : undefined]))
  const bodies = Array.from({ length: Math.ceil(POOL / batch) }, (_, b) => Buffer.concat(Array.from({ length: batch }, (_, i) => {
    const n = (b * batch + i) % POOL
    return encodeChunk({ device: ids[n % DEVICES], sequence: n, payload: payloads[n], key: keys.get(ids[n % DEVICES]) })
  })))
  let next = 0
  const step = (): number => {
    const index = codecs.parseFrames(bodies[next++ % bodies.length])
    for (const record of index) {
      const identity = { type: record.type, flags: record.flags, device: Buffer.from(record.deviceId, 'hex'), sequence: record.sequence }
      const decoded = decodeChunk(identity, index.payload(record), keys.get(record.deviceId))
      if (!decoded.ok) throw new Error(decoded.reason)
    }
    return index.count
  }
  for (let i = 0; i < bodies.length; i++) step()
  return timed(step)
}

/** Transactions of `batch` chunks, CEILING_CONCURRENCY in flight, until SECONDS have passed; chunks/s. */
async function writeRate (batch: number, write: (first: number) => Promise<unknown>): Promise<number> {
  let next = 0
  let chunks = 0
  const started = performance.now()
  const deadline = started + SECONDS * 1000
  const writer = async (): Promise<void> => {
    while (performance.now() < deadline) {
      const first = next
      next += batch
      await write(first)
      chunks += batch
    }
  }
  await Promise.all(Array.from({ length: CEILING_CONCURRENCY }, writer))
  return chunks / ((performance.now() - started) / 1000)
}

/** A fresh store in a temporary directory for `fn`. */
async function withStore (fn: (store: TelemetryStore) => Promise<number>): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'berth-bench-lmdb-'))
  const root = Store.open(dir)
  try {
    return await fn(new TelemetryStore(root.forPlugin('ingest')))
  } finally {
    await root.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

/** The payload of chunk `sequence`; without faults, a fault's turn carries the next type's record instead. */
const payloadOf = (sequence: number, faults: boolean): ChunkPayload => {
  const payload = payloads[sequence % POOL]
  return faults || payload.type !== 'FaultRecord' ? payload : payloads[(sequence + 1) % POOL]
}

/**
 * The server's writes of decoded chunks, as it issues them: `batch` chunks of ONE device per
 * transaction (a request carries one device), its idempotency check and mark, the device record
 * and the series, built into a batch and issued as puts of one event turn (the LMDB storage's session;
 * a batch with faults runs in a transaction callback, where the faults join their crash issues).
 * Without `faults`, no chunk is a fault, so no batch needs the callback.
 */
const DIGEST = new Uint8Array(8)
async function lmdbRate (batch: number, faults = true): Promise<number> {
  return await withStore(async store => {
    const storage = new LmdbStorage(store)
    return await writeRate(batch, async first => {
      const id = ids[(first / batch) % DEVICES]
      const at = Date.now()
      const sequences = Array.from({ length: batch }, (_, i) => first + i)
      await storage.ingest([id], async session => {
        const reads = await session.read([id], sequences.map(sequence => [id, sequence]), [])
        const writes = emptyWrites()
        const stored = reads.devices.get(id)
        const device = stored !== undefined ? { ...stored } : newDevice(id, at)
        const events: TelemetryEvent[] = []
        for (const sequence of sequences) {
          if (reads.marks.has(seenKey(id, sequence))) throw new Error(`${seenKey(id, sequence)} written twice`)
          applyChunk(writes, events, device, stored === undefined && sequence === first, { device: id, sequence, at }, payloadOf(sequence, faults))
          writes.marks.push({ device: id, sequence, mark: { at, digests: DIGEST }, digest: DIGEST })
        }
        writes.devices.push(device)
        await session.write(writes)
      })
    })
  })
}

/** What the storage allows: two async puts of ~100 bytes per chunk, acknowledged after their commit. */
async function asyncPutRate (batch: number): Promise<number> {
  const value = randomBytes(100)
  return await withStore(async store => await writeRate(batch, async first => {
    let last: Promise<boolean> | undefined
    for (let sequence = first; sequence < first + batch; sequence++) {
      void store.seen.put(`plain:${sequence}`, sequence)
      last = store.keys.put(`plain:${sequence}`, value)
    }
    await last
  }))
}

const machine = (): string => `Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}`

/** HTTP end to end on each backend, 64 requests in flight, no CCM; each run measures every batch size on every backend, the backends' order turning each run. */
async function compareBackends (backends: readonly Backend[]): Promise<void> {
  const postgres = backends.includes('postgres') ? await startBenchPostgres() : undefined
  const samples = new Map<string, number[]>()
  const costs = new Map<string, CpuCost[]>()
  /** Bytes a stored chunk takes in the database: its size over that of an empty one with the schema, by the chunks marked. */
  const bytesPerChunk: number[] = []
  let emptySize = 0
  if (postgres !== undefined) {
    const empty = await postgres.database()
    const storage = new PostgresStorage(empty)
    await storage.open()
    await storage.close()
    emptySize = (await databaseFigures(empty)).bytes
    await postgres.drop(empty)
  }
  const measureSize = async (database: string): Promise<void> => {
    const { bytes, chunks } = await databaseFigures(database)
    if (chunks > 0) bytesPerChunk.push((bytes - emptySize) / chunks)
  }
  try {
    for (let run = 0; run < RUNS; run++) {
      const order = backends.map((_, i) => backends[(i + run) % backends.length])
      for (const batch of BATCHES) {
        for (const backend of order) {
          const name = `${backend} ${batch}`
          const { rate, cpu } = await httpRate(batch, false, CEILING_CONCURRENCY, backend === 'postgres' ? postgres : undefined, measureSize)
          samples.set(name, [...(samples.get(name) ?? []), rate])
          costs.set(name, [...(costs.get(name) ?? []), cpu])
        }
      }
      console.error(`run ${run + 1}/${RUNS} done`)
    }
  } finally {
    await postgres?.close()
  }
  const cells = (name: string): string[] => {
    const all = samples.get(name) ?? []
    return [median(all).toFixed(0), `${Math.min(...all).toFixed(0)}–${Math.max(...all).toFixed(0)}`]
  }
  const rows = BATCHES.map(batch => [String(batch), ...backends.flatMap(backend => cells(`${backend} ${batch}`)),
    ...(backends.length > 1 ? [(median(samples.get(`${backends[1]} ${batch}`) ?? []) / median(samples.get(`${backends[0]} ${batch}`) ?? [])).toFixed(2)] : [])])
  console.log(`Median of ${RUNS} runs of ${SECONDS} s; ${DEVICES} devices, ${CEILING_CONCURRENCY} requests in flight, no AES-CCM; a fresh server (and database) per measurement; ` +
    `PostgreSQL 15 on this machine with fsync, full-page writes and synchronous_commit on; codecs: ${codecs.backend}; ${machine()}.\n`)
  console.log(markdownTable(['frames/request', ...backends.flatMap(backend => [`${BACKEND_NAMES[backend]} (chunks/s)`, `${BACKEND_NAMES[backend]} min–max`]),
    ...(backends.length > 1 ? [`${BACKEND_NAMES[backends[1]]} ÷ ${BACKEND_NAMES[backends[0]]}`] : [])], rows))
  console.log(`\nCPU milliseconds per 1,000 chunks (median; /proc, user and system), by process:\n`)
  const costRows = BATCHES.flatMap(batch => backends.map(backend => {
    const list = costs.get(`${backend} ${batch}`) ?? []
    const of = (part: keyof CpuCost): number => median(list.map(cost => cost[part]))
    return [String(batch), BACKEND_NAMES[backend], of('load').toFixed(1), of('server').toFixed(1), backend === 'postgres' ? of('database').toFixed(1) : '–', (of('load') + of('server') + of('database')).toFixed(1)]
  }))
  console.log(markdownTable(['frames/request', 'backend', 'load generator (its encoding too)', 'berth server', 'PostgreSQL', 'total'], costRows))
  if (bytesPerChunk.length > 0) {
    console.log(`\nPostgreSQL: ${median(bytesPerChunk).toFixed(0)} bytes of database per stored chunk (median of ${bytesPerChunk.length} measurements: the database's size ` +
      `less that of a fresh one with the schema, ${(emptySize / 1e6).toFixed(1)} MB, WAL not counted; the six record types in turn, a Metrics chunk of 3 entries).`)
  }
}

/** A database's size in bytes and the chunks marked in it. */
async function databaseFigures (url: string): Promise<{ bytes: number, chunks: number }> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const [{ bytes, chunks }] = (await client.query<{ bytes: string, chunks: string }>(
      `select pg_database_size(current_database()) as bytes, (select count(*) from ${SCHEMA}.chunk_marks) as chunks`)).rows
    return { bytes: Number(bytes), chunks: Number(chunks) }
  } finally {
    await client.end()
  }
}

async function main (): Promise<void> {
  const backends = benchBackends()
  if (backends.length !== 1 || backends[0] !== 'lmdb') {
    await compareBackends(backends)
    return
  }
  const samples = new Map<string, number[]>()
  const record = (name: string, value: number): void => { samples.set(name, [...(samples.get(name) ?? []), value]) }
  for (let run = 0; run < RUNS; run++) {
    for (const batch of BATCHES) {
      record(`lmdb ${batch}`, await lmdbRate(batch))
      record(`lmdb ${batch} no faults`, await lmdbRate(batch, false))
      record(`puts ${batch}`, await asyncPutRate(batch))
      for (const ccm of CCM_MODES) {
        record(`decode ${batch} ${ccm}`, decodeRate(batch, ccm))
        for (const concurrency of CONCURRENCIES) {
          const { rate, cpu } = await httpRate(batch, ccm, concurrency)
          record(`http ${batch} ${ccm} ${concurrency}`, rate)
          record(`server cpu ${batch} ${ccm} ${concurrency}`, cpu.server)
        }
      }
    }
    console.error(`run ${run + 1}/${RUNS} done`)
  }
  const rate = (name: string): number => median(samples.get(name) ?? [])
  const range = (name: string): string => { const all = samples.get(name) ?? []; return `${Math.min(...all).toFixed(0)}–${Math.max(...all).toFixed(0)}` }
  const rows = BATCHES.flatMap(batch => CCM_MODES.flatMap(ccm => CONCURRENCIES.map(concurrency => {
    const name = `http ${batch} ${ccm} ${concurrency}`
    const [http, decode, lmdb] = [rate(name), rate(`decode ${batch} ${ccm}`), rate(`lmdb ${batch}`)]
    return [String(batch), ccm ? 'yes' : 'no', String(concurrency), http.toFixed(0), range(name), rate(`server cpu ${batch} ${ccm} ${concurrency}`).toFixed(1), decode.toFixed(0), lmdb.toFixed(0), rate(`lmdb ${batch} no faults`).toFixed(0), rate(`puts ${batch}`).toFixed(0), `${(100 * http / Math.min(decode, lmdb)).toFixed(0)}%`]
  })))
  console.log(`Median of ${RUNS} runs of ${SECONDS} s; ${DEVICES} devices; the write ceilings run ${CEILING_CONCURRENCY} transactions in flight; ` +
    `codecs: ${codecs.backend}; ${machine()}.\n`)
  console.log(markdownTable(['frames/request', 'AES-CCM', 'requests in flight', 'HTTP end to end (chunks/s)', 'HTTP min–max', 'server CPU ms per 1,000 chunks', 'decode-only ceiling', 'server-writes ceiling', 'server-writes ceiling without faults', 'async-put ceiling', 'end to end / lower of decode and server-writes'], rows))
}

await main()
