// Codec benchmark: WASM vs the pure-TypeScript reference (and Node's OpenSSL for CCM) on framing+CRC,
// RLE and AES-CCM; prints a markdown table of medians (recorded in docs/benchmarks.md).
// Run: npm run build && node dist/bench/codecs.js   (BENCH_RUNS, BENCH_RUN_MS bound the work)
import { performance } from 'node:perf_hooks'
import { createCodecs, encodeFrame, nodeCcm, FrameType } from '../wasm/index.js'
import type { CcmCodec, Codecs } from '../wasm/index.js'
import { envInt, markdownTable, median } from './stats.js'

const SIZES = [64, 512, 16384]
const RUNS = envInt('BENCH_RUNS', 7)
const RUN_MS = envInt('BENCH_RUN_MS', 40)
const MAX_ITERATIONS = 200_000
const FRAMING_BODY_BYTES = 256 * 1024

interface Row {
  readonly operation: string
  readonly size: number
  readonly implementation: string
  readonly mbPerSecond: number
  readonly opsPerSecond: number
  readonly unit: string
}

/** Deterministic PRNG (mulberry32) so every run sees the same data. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), seed | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

function randomBytes(n: number, rand: () => number): Uint8Array {
  return Uint8Array.from({ length: n }, () => Math.floor(rand() * 256))
}

/** Firmware-like telemetry: zero/0xFF padding runs and repeated samples between short literal stretches. */
function firmwareLike(n: number, rand: () => number): Uint8Array {
  const out = new Uint8Array(n)
  for (let at = 0; at < n; ) {
    if (rand() < 0.45) {
      const length = 3 + Math.floor(rand() * 40)
      out.fill(rand() < 0.7 ? 0x00 : 0xff, at, at + length)
      at += length
    } else {
      const length = 1 + Math.floor(rand() * 24)
      for (let k = 0; k < length && at < n; k++) out[at++] = Math.floor(rand() * 48)
    }
  }
  return out
}

/** Iterations per run: doubled until one batch takes RUN_MS (which also warms the code up). */
function calibrate(fn: () => void): number {
  for (let iterations = 1; ; iterations *= 2) {
    const started = performance.now()
    for (let i = 0; i < iterations; i++) fn()
    if (performance.now() - started >= RUN_MS || iterations >= MAX_ITERATIONS) return iterations
  }
}

/** Median ops/s of `fn` over RUNS timed runs. */
function opsPerSecond(fn: () => void): number {
  const iterations = calibrate(fn)
  const rates: number[] = []
  for (let run = 0; run < RUNS; run++) {
    const started = performance.now()
    for (let i = 0; i < iterations; i++) fn()
    rates.push((iterations * 1000) / (performance.now() - started))
  }
  return median(rates)
}

function row(operation: string, size: number, implementation: string, bytesPerOp: number, unitsPerOp: number, unit: string, fn: () => void): Row {
  const ops = opsPerSecond(fn)
  return { operation, size, implementation, mbPerSecond: (ops * bytesPerOp) / 1e6, opsPerSecond: ops * unitsPerOp, unit }
}

function framingRows(impls: readonly Codecs[], size: number, rand: () => number): Row[] {
  const frameBytes = 26 + size
  const count = Math.ceil(FRAMING_BODY_BYTES / frameBytes)
  const frames = Array.from({ length: count }, (_, i) => encodeFrame({
    type: FrameType.Metrics, deviceId: '00112233aabbccdd', sequence: i, payload: randomBytes(size, rand),
  }))
  const body = new Uint8Array(count * frameBytes)
  frames.forEach((frame, i) => body.set(frame, i * frameBytes))
  return impls.map((codecs) => row('parseFrames + read records', size, codecs.backend, body.length, count, 'frames/s', () => {
    const index = codecs.parseFrames(body)
    let ok = 0
    for (const record of index) if (record.status === 'ok') ok++
    if (ok !== count) throw new Error(`${codecs.backend}: ${ok} of ${count} frames parsed`)
  }))
}

function rleRows(impls: readonly Codecs[], size: number, rand: () => number): Row[] {
  const data = firmwareLike(size, rand)
  const encoded = impls[0].rleEncode(data)
  const ratio = `${size} B → ${encoded.length} B`
  return [
    ...impls.map((codecs) => row(`rleEncode (${ratio})`, size, codecs.backend, size, 1, 'ops/s', () => codecs.rleEncode(data))),
    ...impls.map((codecs) => row(`rleDecode (${ratio})`, size, codecs.backend, size, 1, 'ops/s', () => {
      if (!codecs.rleDecode(encoded, size).ok) throw new Error(`${codecs.backend}: decode failed`)
    })),
  ]
}

function ccmRows(impls: ReadonlyArray<readonly [string, CcmCodec]>, size: number, rand: () => number): Row[] {
  const key = randomBytes(16, rand)
  const nonce = randomBytes(13, rand)
  const aad = randomBytes(22, rand)
  const plaintext = randomBytes(size, rand)
  const sealed = impls[0][1].ccmSeal(key, nonce, aad, plaintext)
  return [
    ...impls.map(([name, ccm]) => row('ccmSeal', size, name, size, 1, 'ops/s', () => ccm.ccmSeal(key, nonce, aad, plaintext))),
    ...impls.map(([name, ccm]) => row('ccmOpen', size, name, size, 1, 'ops/s', () => {
      if (!ccm.ccmOpen(key, nonce, aad, sealed).ok) throw new Error(`${name}: open failed`)
    })),
  ]
}

function table(rows: readonly Row[]): string {
  const reference = new Map(rows.filter((r) => r.implementation === 'reference').map((r) => [`${r.operation}|${r.size}`, r.mbPerSecond]))
  return markdownTable(['Operation', 'Payload', 'Implementation', 'MB/s', 'Rate', 'vs reference'], rows.map((r) => {
    const base = reference.get(`${r.operation}|${r.size}`)
    return [
      r.operation,
      `${r.size} B`,
      r.implementation,
      r.mbPerSecond.toFixed(1),
      `${Math.round(r.opsPerSecond).toLocaleString('en-US')} ${r.unit}`,
      base === undefined ? '' : `${(r.mbPerSecond / base).toFixed(1)}×`,
    ]
  }))
}

function main(): void {
  const wasm = createCodecs({ backend: 'wasm' })
  const reference = createCodecs({ backend: 'reference' })
  const impls = [wasm, reference]
  const ccmImpls = [['wasm', wasm], ['reference', reference], ['node', nodeCcm]] as const
  const rand = random(0x5eed)
  const rows = SIZES.flatMap((size) => [
    ...framingRows(impls, size, rand),
    ...rleRows(impls, size, rand),
    ...ccmRows(ccmImpls, size, rand),
  ])
  console.log(`Node ${process.version}, ${process.arch}; median of ${RUNS} runs of ~${RUN_MS} ms each\n`)
  console.log(table(rows))
}

main()
