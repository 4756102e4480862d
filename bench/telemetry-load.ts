// Simulated devices speaking the chunk format to POST /ingest/chunks: varied records of every type,
// keys obtained through the API, and a load run bounded in chunks and time (device-sim, ingest bench).
import { performance } from 'node:perf_hooks'
import { Agent, request } from 'undici'
import { ApiClient } from '../kernel/index.js'
import { encodeChunk } from '../plugins/ingest/wire/encoder.js'
import { CHUNK_TYPES, type ChunkPayload } from '../plugins/ingest/wire/payloads.js'
import { codecs } from '../wasm/index.js'

export interface SimDevice {
  /** 16 lowercase hex characters. */
  id: string
  /** AES-128-CCM key, for encrypted devices. */
  key?: Uint8Array
}

/** `count` device ids: `prefix` (8 hex characters) followed by the index as 8 hex characters. */
export function deviceIds (count: number, prefix: string): string[] {
  return Array.from({ length: count }, (_, i) => `${prefix}${i.toString(16).padStart(8, '0')}`)
}

/** The record device `index` reports as chunk `sequence`: the six types in turn, values that change. */
export function simulatedPayload (index: number, sequence: number): ChunkPayload {
  const uptime = 1000 * sequence + index
  switch (CHUNK_TYPES[sequence % CHUNK_TYPES.length]) {
    case 'DeviceInfo':
      return { type: 'DeviceInfo', record: { serial: `SIM-${index}`, hardware_version: 'evt-2', software_type: 'main', software_version: '2.1.0', build_id: 'a1b2c3d4e5f60718' } }
    case 'RebootReason':
      return { type: 'RebootReason', record: { reason: 'software_reset', boot_count: sequence, pc: 0x08001234, lr: 0x08000f01 } }
    case 'FaultRecord':
      return { type: 'FaultRecord', record: { pc: 0x0800abcd + index, lr: 0x08000123, sp: 0x20001ff0, psr: 0x61000000, cfsr: 0x8200, hfsr: 0x40000000, mmfar: 0, bfar: 0xe000ed38, uptime_ms: uptime } }
    case 'Metrics':
      return {
        type: 'Metrics',
        record: {
          uptime_ms: uptime,
          entries: [
            { key: 'battery_mv', kind: 'gauge', value: 3700 + (sequence % 50), uptime_ms: uptime - 900 },
            { key: 'tx_packets', kind: 'increment', value: sequence % 7, uptime_ms: uptime - 500 },
            { key: 'loop_us', kind: 'observe', value: 800 + (sequence % 113), uptime_ms: uptime - 100 }
          ]
        }
      }
    case 'Trace':
      return { type: 'Trace', record: { uptime_ms: uptime, dropped: 0, data: Buffer.from(`t=${uptime} sensor ok\nradio tx ${sequence}\n`) } }
    case 'Heartbeat':
      return { type: 'Heartbeat', record: { uptime_ms: uptime, boot_count: 1 } }
  }
}

/** Register every device with a new key through the telemetry API (a provisioner's Basic credentials). */
export async function registerEncrypted (url: URL, user: string, password: string, ids: readonly string[]): Promise<SimDevice[]> {
  const client = new ApiClient(url, `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`, `user ${user}`)
  const devices: SimDevice[] = []
  for (const id of ids) {
    const { key } = await client.json<{ key: string }>('POST', '/devices/register', { id, encrypted: true })
    devices.push({ id, key: Buffer.from(key, 'hex') })
  }
  return devices
}

export interface LoadOptions {
  /** Base URL of the telemetry listener. */
  url: URL
  apiKey: string
  devices: readonly SimDevice[]
  chunksPerDevice: number
  framesPerRequest: number
  /** Requests in flight at once (a device has at most one). */
  concurrency: number
  /** Stop sending new requests after this long. */
  seconds: number
  firstSequence: number
  compress?: boolean
  cbor?: boolean
  mtu?: number
  /** Encode every chunk before the clock starts, so that the client's encoding is not measured. */
  preEncode?: boolean
}

export interface LoadTotals {
  requests: number
  frames: number
  accepted: number
  duplicate: number
  partial: number
  rejected: number
  seconds: number
  /** Distinct rejection reasons, the first few. */
  reasons: string[]
}

interface DeviceState {
  device: SimDevice
  index: number
  sent: number
  frames: Uint8Array[]
}

interface IngestAnswer {
  accepted: number
  duplicate: number
  partial: number
  rejected: number
  frames: Array<{ reason?: string }>
}

const MAX_REASONS = 5

/** Each device sends its chunks in order, `framesPerRequest` frames per request, devices taking turns. */
export async function runLoad (options: LoadOptions): Promise<LoadTotals> {
  const totals: LoadTotals = { requests: 0, frames: 0, accepted: 0, duplicate: 0, partial: 0, rejected: 0, seconds: 0, reasons: [] }
  const endpoint = new URL('/ingest/chunks', options.url)
  const ready: DeviceState[] = options.devices.map((device, index) => ({ device, index, sent: 0, frames: [] }))

  /** Queue the frames of the device's next chunk. */
  const encodeNext = (state: DeviceState): void => {
    const sequence = options.firstSequence + state.sent++
    const chunk = encodeChunk({
      device: state.device.id, sequence, payload: simulatedPayload(state.index, sequence),
      key: state.device.key, compress: options.compress, cbor: options.cbor, mtu: options.mtu
    })
    const index = codecs.parseFrames(chunk)
    for (const record of index) state.frames.push(chunk.subarray(record.start, record.end))
  }
  if (options.preEncode === true) for (const state of ready) while (state.sent < options.chunksPerDevice) encodeNext(state)

  /** The next request of a device: whole chunks until it has enough frames (fragments may wait for the next one). */
  const nextBody = (state: DeviceState): Uint8Array => {
    while (state.frames.length < options.framesPerRequest && state.sent < options.chunksPerDevice) encodeNext(state)
    return Buffer.concat(state.frames.splice(0, options.framesPerRequest))
  }

  const dispatcher = new Agent({ connections: options.concurrency, keepAliveTimeout: 10_000 })
  const post = async (body: Uint8Array): Promise<void> => {
    const response = await request(endpoint, {
      method: 'POST', dispatcher, body, headers: { 'content-type': 'application/octet-stream', 'x-api-key': options.apiKey }
    })
    const text = await response.body.text()
    if (response.statusCode !== 200) throw new Error(`POST /ingest/chunks answered ${response.statusCode}: ${text}`)
    const answer = JSON.parse(text) as IngestAnswer
    totals.requests++
    totals.frames += answer.frames.length
    totals.accepted += answer.accepted
    totals.duplicate += answer.duplicate
    totals.partial += answer.partial
    totals.rejected += answer.rejected
    for (const { reason } of answer.frames) {
      if (reason !== undefined && totals.reasons.length < MAX_REASONS && !totals.reasons.includes(reason)) totals.reasons.push(reason)
    }
  }

  const started = performance.now()
  const deadline = started + options.seconds * 1000
  const worker = async (): Promise<void> => {
    for (let state = ready.shift(); state !== undefined && performance.now() < deadline; state = ready.shift()) {
      await post(nextBody(state))
      if (state.frames.length > 0 || state.sent < options.chunksPerDevice) ready.push(state)
    }
  }

  try {
    await Promise.all(Array.from({ length: Math.min(options.concurrency, ready.length) }, worker))
  } finally {
    await dispatcher.close()
  }
  totals.seconds = (performance.now() - started) / 1000
  return totals
}
