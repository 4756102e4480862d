// Ingest benchmark: chunks/s end to end over HTTP (1, 10, 100 frames per request, with and without AES-CCM)
// against `berth server` in a child, beside the decode-only and LMDB-only ceilings of the same chunks.
// Run: npm run build && node dist/bench/ingest.js   (BENCH_RUNS, BENCH_SECONDS bound the work)
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { Store } from '../kernel/store.js'
import { applyChunk } from '../plugins/ingest/apply.js'
import { ADMIN_PASSWORD_FILE } from '../plugins/ingest/commands.js'
import { seenKey, TelemetryStore, type Device } from '../plugins/ingest/store.js'
import { decodeChunk } from '../plugins/ingest/wire/decoder.js'
import { encodeChunk } from '../plugins/ingest/wire/encoder.js'
import { codecs } from '../wasm/index.js'
import { envInt, markdownTable, median } from './stats.js'
import { deviceIds, registerEncrypted, runLoad, simulatedPayload, type SimDevice } from './telemetry-load.js'
import { freePort } from '../test/support/net.js'

const RUNS = envInt('BENCH_RUNS', 5)
const SECONDS = envInt('BENCH_SECONDS', 3)
const WARMUP_SECONDS = 1
const BATCHES = [1, 10, 100]
const DEVICES = 64
const CONCURRENCY = 8
/** Distinct chunks the in-process ceilings cycle through. */
const POOL = 600
/** Chunks/s the measured window has chunks for (encoded beforehand); a faster server ends the window early. */
const BUDGET_RATE = 40_000
/** Sequence of the first measured chunk (the warm-up sends from 0). */
const MEASURED_FROM = 1_000_000_000
const ID_PREFIX = 'be000000'
const API_KEY = randomBytes(16).toString('hex')
const CLI = fileURLToPath(new URL('../kernel/cli.js', import.meta.url))

const ids = deviceIds(DEVICES, ID_PREFIX)
const payloads = Array.from({ length: POOL }, (_, n) => simulatedPayload(n % DEVICES, n))

interface Server {
  url: URL
  dir: string
  child: ChildProcess
}

/** `berth server` with only the ingest plugin, every listener on 127.0.0.1, a fresh state directory. */
async function startServer (): Promise<Server> {
  const dir = mkdtempSync(join(tmpdir(), 'berth-bench-ingest-'))
  const port = await freePort()
  writeFileSync(join(dir, 'cluster.toml'), ['[server]', 'log_level = "warn"', ...['control', 'telemetry', 'app'].flatMap(name =>
    [`[server.listeners.${name}]`, 'host = "127.0.0.1"', `port = ${name === 'telemetry' ? port : 0}`])].join('\n'))
  const child = spawn(process.execPath, [CLI, 'server'], { cwd: dir, env: { ...process.env, BERTH_PLUGINS: 'ingest', INGEST_API_KEY: API_KEY }, stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr?.on('data', (d: Buffer) => { stderr += d.toString() })
  const url = new URL(`http://127.0.0.1:${port}`)
  const deadline = Date.now() + 30_000
  for (;;) {
    try {
      if ((await fetch(new URL('/auth/mode', url))).ok) return { url, dir, child }
    } catch {
      if (child.exitCode !== null) throw new Error(`berth server exited with ${child.exitCode}: ${stderr}`)
    }
    if (Date.now() > deadline) throw new Error(`berth server did not answer within 30 s: ${stderr}`)
    await new Promise(resolve => setTimeout(resolve, 20))
  }
}

async function stopServer (server: Server): Promise<void> {
  if (server.child.exitCode === null) {
    const exited = new Promise(resolve => server.child.once('exit', resolve))
    server.child.kill('SIGTERM')
    await exited
  }
  rmSync(server.dir, { recursive: true, force: true })
}

/** Accepted chunks/s through POST /ingest/chunks, after a warm-up. */
async function httpRate (batch: number, ccm: boolean): Promise<number> {
  const server = await startServer()
  try {
    const devices: SimDevice[] = ccm
      ? await registerEncrypted(server.url, 'admin', readFileSync(join(server.dir, '.berth', ADMIN_PASSWORD_FILE), 'utf8').trim(), ids)
      : ids.map(id => ({ id }))
    const load = { url: server.url, apiKey: API_KEY, devices, framesPerRequest: batch, concurrency: CONCURRENCY }
    await runLoad({ ...load, chunksPerDevice: Number.MAX_SAFE_INTEGER, seconds: WARMUP_SECONDS, firstSequence: 0 })
    const chunksPerDevice = Math.ceil(BUDGET_RATE * SECONDS / DEVICES)
    const totals = await runLoad({ ...load, chunksPerDevice, seconds: SECONDS, firstSequence: MEASURED_FROM, preEncode: true })
    if (totals.accepted !== totals.frames) throw new Error(`${totals.frames - totals.accepted} frame(s) not accepted: ${totals.reasons.join('; ')}`)
    return totals.accepted / totals.seconds
  } finally {
    await stopServer(server)
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

/** The stores' writes of decoded chunks (idempotency check and mark, device, series), `batch` per transaction. */
async function lmdbRate (batch: number): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'berth-bench-lmdb-'))
  const root = Store.open(dir)
  try {
    const store = new TelemetryStore(root.forPlugin('ingest'))
    let next = 0
    let chunks = 0
    const started = performance.now()
    const deadline = started + SECONDS * 1000
    const writer = async (): Promise<void> => {
      while (performance.now() < deadline) {
        const first = next
        next += batch
        await store.transaction(() => {
          const at = Date.now()
          const devices = new Map<string, Device>()
          for (let sequence = first; sequence < first + batch; sequence++) {
            const id = ids[sequence % DEVICES]
            const key = seenKey(id, sequence)
            if (store.seen.get(key) !== undefined) throw new Error(`${key} written twice`)
            const applied = applyChunk(store, devices.get(id) ?? store.devices.get(id), { device: id, sequence, at }, payloads[sequence % POOL])
            devices.set(id, applied.device)
            store.seen.put(key, at)
          }
          for (const device of devices.values()) store.devices.put(device.id, device)
        })
        chunks += batch
      }
    }
    await Promise.all(Array.from({ length: CONCURRENCY }, writer))
    return chunks / ((performance.now() - started) / 1000)
  } finally {
    await root.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

async function main (): Promise<void> {
  const samples = new Map<string, number[]>()
  const record = (name: string, value: number): void => { samples.set(name, [...(samples.get(name) ?? []), value]) }
  for (let run = 0; run < RUNS; run++) {
    for (const batch of BATCHES) {
      record(`lmdb ${batch}`, await lmdbRate(batch))
      for (const ccm of [false, true]) {
        record(`decode ${batch} ${ccm}`, decodeRate(batch, ccm))
        record(`http ${batch} ${ccm}`, await httpRate(batch, ccm))
      }
    }
    console.error(`run ${run + 1}/${RUNS} done`)
  }
  const rate = (name: string): number => median(samples.get(name) ?? [])
  const range = (name: string): string => { const all = samples.get(name) ?? []; return `${Math.min(...all).toFixed(0)}–${Math.max(...all).toFixed(0)}` }
  const rows = BATCHES.flatMap(batch => [false, true].map(ccm => {
    const [http, decode, lmdb] = [rate(`http ${batch} ${ccm}`), rate(`decode ${batch} ${ccm}`), rate(`lmdb ${batch}`)]
    return [String(batch), ccm ? 'yes' : 'no', http.toFixed(0), range(`http ${batch} ${ccm}`), decode.toFixed(0), lmdb.toFixed(0), `${(100 * http / Math.min(decode, lmdb)).toFixed(0)}%`]
  }))
  console.log(`Median of ${RUNS} runs of ${SECONDS} s; ${DEVICES} devices, ${CONCURRENCY} requests (or transactions) in flight; ` +
    `codecs: ${codecs.backend}; Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}.\n`)
  console.log(markdownTable(['frames/request', 'AES-CCM', 'HTTP end to end (chunks/s)', 'HTTP min–max', 'decode-only ceiling (chunks/s)', 'LMDB-only ceiling (chunks/s)', 'end to end / lower ceiling'], rows))
}

await main()
