// Symbolication benchmark: faults/s symbolicated by `berth server` (ingest and symbolication, in a
// child, with the real arm-none-eabi-addr2line) for 20 builds of the firmware's qemu-demo (each its own
// build id), 100 devices, in state directories already holding 0 to 100,000 faults. "live": the ELFs
// are uploaded first and the faults posted as fast as the server takes them, timed from the first post
// to the last fault's symbol; "backlog": the faults are stored first, waiting for their ELFs, timed
// from the first upload to the last symbol. BENCH_BASELINE (another build's berth script, dist/kernel/cli/cli.js) runs
// the same beside it with BENCH_BASELINE_FAULTS faults ("live" only: it scans every stored fault for
// each new one, so its figure is per fault at that store size).
// Run: npm run build && node dist/bench/symbolication.js   (BENCH_RUNS, BENCH_FAULTS, BENCH_SIZES, BENCH_BASELINE, BENCH_BASELINE_FAULTS)
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { Store } from '../kernel/store.js'
import { newDevice } from '../plugins/ingest/apply.js'
import { inspectElf } from '../plugins/ingest/elf.js'
import { TelemetryStore } from '../plugins/ingest/store.js'
import { encodeChunk } from '../plugins/ingest/wire/encoder.js'
import type { ChunkPayload } from '../plugins/ingest/wire/payloads.js'
import { serverDir, startServer, stopServer, type BenchServer } from './berth-server.js'
import { envInt, markdownTable, median } from './stats.js'
import { deviceIds } from './telemetry-load.js'

const run = promisify(execFile)
const RUNS = envInt('BENCH_RUNS', 3)
const FAULTS = envInt('BENCH_FAULTS', 10_000)
const SIZES = (process.env.BENCH_SIZES ?? '0,25000,50000,100000').split(',').map(Number)
const BASELINE = process.env.BENCH_BASELINE
const BASELINE_FAULTS = envInt('BENCH_BASELINE_FAULTS', 30)
const BUILDS = 20
const DEVICES = 100
/** Requests of one device's faults in flight at once. */
const CONCURRENCY = 4
const API_KEY = randomBytes(16).toString('hex')
const FIRMWARE = fileURLToPath(new URL('../../firmware/', import.meta.url))

const devices = deviceIds(DEVICES, 'bf000000')

interface Build {
  id: string
  bytes: Buffer
  /** Functions of the image: start address and size in bytes. */
  functions: Array<{ address: number, size: number }>
}

/** BUILDS builds of qemu-demo, each with another trace buffer size (so another image and build id). */
async function buildImages (dir: string): Promise<Build[]> {
  const builds: Build[] = []
  for (let b = 0; b < BUILDS; b++) {
    const out = join(dir, `build-${b}`)
    await run('make', ['-C', FIRMWARE, 'qemu-demo', `OUT=${out}`, `CFLAGS_EXTRA=-DBERTH_TRACE_CAPACITY=${512 + 4 * b}`])
    const elf = join(out, 'qemu-demo.elf')
    const bytes = readFileSync(elf)
    const inspected = inspectElf(bytes)
    if (!inspected.ok || inspected.info.buildId === undefined) throw new Error(`${elf}: no GNU build id`)
    const { stdout } = await run('arm-none-eabi-nm', ['-S', '--defined-only', elf])
    const all = stdout.split('\n').map(line => line.split(' ')).filter(f => f.length === 4 && /^[tT]$/.test(f[2]) && Number.parseInt(f[1], 16) >= 4)
      .map(([address, size]) => ({ address: Number.parseInt(address, 16) & ~1, size: Number.parseInt(size, 16) }))
    // Only functions with line information (the C library's have none): every fault then resolves.
    const { stdout: lines } = await run('arm-none-eabi-addr2line', ['-e', elf, ...all.map(f => `0x${f.address.toString(16)}`)])
    const functions = all.filter((_f, i) => !lines.split('\n')[i].startsWith('??'))
    builds.push({ id: inspected.info.buildId, bytes, functions })
  }
  if (new Set(builds.map(b => b.id)).size !== BUILDS) throw new Error('two builds share a build id')
  return builds
}

/** A deterministic generator of numbers in [0, 1) (mulberry32), so every run posts the same faults. */
function random (seed: number): () => number {
  let state = seed
  return () => {
    state = (state + 0x6d2b79f5) | 0
    let x = Math.imul(state ^ (state >>> 15), 1 | state)
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296
  }
}

/** An address inside a random function of the build (Thumb: even), and an LR after a call in another. */
function faultIn (build: Build, next: () => number): ChunkPayload {
  const at = (): number => {
    const fn = build.functions[Math.floor(next() * build.functions.length)]
    return fn.address + 2 * Math.floor(next() * (fn.size / 2))
  }
  return { type: 'FaultRecord', record: { pc: at(), lr: (at() + 4) | 1, sp: 0x20001ff0, psr: 0x61000000, cfsr: 0x20000, hfsr: 0x40000000, mmfar: 0, bfar: 0, uptime_ms: 1000 } }
}

const buildOf = (builds: Build[], device: number): Build => builds[device % BUILDS]

/** Faults already stored, symbolicated, spread over the devices and the last day (the store as a server left it). */
async function preload (stateDir: string, builds: Build[], size: number): Promise<void> {
  const root = Store.open(stateDir)
  const store = new TelemetryStore(root.forPlugin('ingest'))
  const start = Date.now() - 86_400_000
  const next = random(size)
  for (const [d, id] of devices.entries()) void store.devices.put(id, { ...newDevice(id, start), build_id: buildOf(builds, d).id })
  let last: Promise<boolean> | undefined
  for (let n = 0; n < size; n++) {
    const d = n % DEVICES
    const { record } = faultIn(buildOf(builds, d), next) as Extract<ChunkPayload, { type: 'FaultRecord' }>
    const at = start + n
    last = store.faults.put([devices[d], at, n], { ...record, stack: '', coredump: undefined, device: devices[d], sequence: n, received_at: at, software_version: null, build_id: buildOf(builds, d).id, symbol: 'preloaded at main.c:1', issue: null })
    if (n % 5000 === 4999) await last // keep the write queue bounded
  }
  await last
  await store.indexPendingFaults()
  await root.close()
}

/** Faults stored with a symbol so far, by outcome, from the metrics of whichever listener shows them. */
async function counted (server: BenchServer): Promise<{ resolved: number, unresolved: number }> {
  for (const url of [new URL('/metrics/prometheus', server.url), new URL('/metrics', server.control)]) {
    const text = await (await fetch(url)).text()
    const value = (outcome: string): number | undefined => {
      const match = new RegExp(`^berth_symbolication_faults_total\\{outcome="${outcome}"\\} (\\d+)$`, 'm').exec(text)
      return match === null ? undefined : Number(match[1])
    }
    if (value('resolved') !== undefined || value('unresolved') !== undefined) return { resolved: value('resolved') ?? 0, unresolved: value('unresolved') ?? 0 }
  }
  return { resolved: 0, unresolved: 0 }
}

/** Poll the counts every 50 ms until `done` (a scrape costs the server about a millisecond; a figure may be late by up to 50 ms). */
async function until (server: BenchServer, done: (counts: { resolved: number, unresolved: number }) => boolean): Promise<void> {
  const deadline = Date.now() + 300_000
  while (!done(await counted(server))) {
    if (Date.now() > deadline) throw new Error(`not done after 300 s: ${JSON.stringify(await counted(server))}`)
    await new Promise(resolve => setTimeout(resolve, 50))
  }
}

async function post (server: BenchServer, frames: Uint8Array): Promise<void> {
  const answer = await fetch(new URL('/ingest/chunks', server.url), { method: 'POST', headers: { 'x-api-key': API_KEY, 'content-type': 'application/octet-stream' }, body: frames })
  const text = await answer.text()
  const summary = answer.ok ? JSON.parse(text) as { accepted: number, frames: unknown[] } : undefined
  if (summary === undefined || summary.accepted !== summary.frames.length) throw new Error(`frames refused (${answer.status}): ${text.slice(0, 300)}`)
}

async function upload (server: BenchServer, builds: Build[]): Promise<void> {
  for (const build of builds) {
    const answer = await fetch(new URL('/ingest/elf?software_type=qemu-demo', server.url), { method: 'POST', headers: { 'x-api-key': API_KEY, 'content-type': 'application/octet-stream' }, body: build.bytes })
    if (answer.status !== 201) throw new Error(`ELF upload: ${answer.status} ${await answer.text()}`)
  }
}

/** Each device's DeviceInfo (its build), then `faults` faults over the devices, one request per device, CONCURRENCY in flight. */
async function postFaults (server: BenchServer, builds: Build[], faults: number): Promise<void> {
  await Promise.all(devices.map(async (id, d) => { await post(server, encodeChunk({ device: id, sequence: 0, payload: { type: 'DeviceInfo', record: { serial: id, hardware_version: 'mps2-an385', software_type: 'qemu-demo', software_version: '1.0.0', build_id: buildOf(builds, d).id } } })) }))
  const next = random(faults)
  const bodies = devices.map((id, d) => Buffer.concat(Array.from({ length: Math.ceil((faults - d) / DEVICES) }, (_, i) => encodeChunk({ device: id, sequence: 1 + i, payload: faultIn(buildOf(builds, d), next) }))))
    .filter(body => body.length > 0)
  let taken = 0
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (taken < bodies.length) await post(server, bodies[taken++])
  }))
}

interface Figure {
  /** Faults symbolicated per second. */
  rate: number
  /** Faults posted per second (live: the ingest side of the same time). */
  posted?: number
}

/** One run of a scenario against a server of `cli` with `size` faults already stored. */
async function measure (builds: Build[], scenario: 'live' | 'backlog', size: number, faults: number, cli?: string): Promise<Figure> {
  const { dir, stateDir } = serverDir('berth-bench-symbolication-')
  await preload(stateDir, builds, size)
  const server = await startServer({ plugins: 'ingest,symbolication', env: { INGEST_API_KEY: API_KEY }, toml: ['[ingest]', 'metrics_public = true'], dir, cli })
  try {
    if (scenario === 'live') {
      await upload(server, builds)
      const started = performance.now()
      await postFaults(server, builds, faults)
      const posted = performance.now()
      await until(server, ({ resolved }) => resolved >= faults)
      return { rate: faults / ((performance.now() - started) / 1000), posted: faults / ((posted - started) / 1000) }
    }
    await postFaults(server, builds, faults)
    await until(server, ({ unresolved }) => unresolved >= faults)
    const started = performance.now()
    await upload(server, builds)
    await until(server, ({ resolved }) => resolved >= faults)
    return { rate: faults / ((performance.now() - started) / 1000) }
  } finally {
    await stopServer(server)
  }
}

async function main (): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'berth-bench-elves-'))
  try {
    const builds = await buildImages(dir)
    const samples = new Map<string, Figure[]>()
    const record = (name: string, figure: Figure): void => { samples.set(name, [...(samples.get(name) ?? []), figure]) }
    for (let r = 0; r < RUNS; r++) {
      for (const size of SIZES) {
        for (const scenario of ['live', 'backlog'] as const) record(`${scenario} ${size}`, await measure(builds, scenario, size, FAULTS))
        if (BASELINE !== undefined) record(`baseline ${size}`, await measure(builds, 'live', size, BASELINE_FAULTS, BASELINE))
        console.error(`run ${r + 1}/${RUNS}, store of ${size} faults: done`)
      }
    }
    const rates = (name: string): number[] => (samples.get(name) ?? []).map(f => f.rate)
    const cell = (name: string): string => samples.has(name) ? `${median(rates(name)).toFixed(0)} (${Math.min(...rates(name)).toFixed(0)}–${Math.max(...rates(name)).toFixed(0)})` : ''
    const rows = SIZES.map(size => [String(size), cell(`live ${size}`), median((samples.get(`live ${size}`) ?? []).map(f => f.posted ?? 0)).toFixed(0), cell(`backlog ${size}`), cell(`baseline ${size}`)])
    console.log(`Median (min–max) of ${RUNS} runs; ${FAULTS} faults of ${DEVICES} devices across ${BUILDS} builds of qemu-demo` +
      `${BASELINE !== undefined ? `; baseline: ${BASELINE_FAULTS} faults, live` : ''}; Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}.\n`)
    console.log(markdownTable(['faults stored before', 'live: faults/s symbolicated', 'live: faults/s posted', 'backlog: faults/s once the ELFs arrive', 'baseline, live: faults/s'], rows))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

await main()
