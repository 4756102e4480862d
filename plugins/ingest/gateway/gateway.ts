// `berth gateway`: bridges devices on serial lines and BLE (through BlueZ, where the host has an
// adapter) to the telemetry server. Each line's bytes and each BLE device's notifications are split
// into frames, appended to the spool, and forwarded in order; a line that closes is opened again.
// It runs until SIGINT or SIGTERM.
import type { Readable } from 'node:stream'
import { UsageError } from '../../../kernel/index.js'
import { startBle, type BleBridge } from './ble.js'
import { openSerial, type SerialSpec } from './sources.js'
import { FrameSplitter } from './frames.js'
import { Forwarder } from './forwarder.js'
import { Spool } from './spool.js'

export interface GatewayOptions {
  serials: SerialSpec[]
  url: URL
  apiKey: string
  spoolDir: string
  ble: boolean
  log(line: string): void
}

const REOPEN_MS = 1000

export async function runGateway (options: GatewayOptions, stopped: Promise<void>): Promise<void> {
  const { log } = options
  const spool = new Spool(options.spoolDir)
  const forwarder = new Forwarder(options.url, options.apiKey, spool, {
    delivered: (counts, rejected) => {
      log(`forwarded ${Object.values(counts).reduce((a, b) => a + b, 0)} frames: ${Object.entries(counts).map(([k, v]) => `${v} ${k}`).join(', ')}`)
      for (const frame of rejected) log(`a frame was rejected: ${frame.reason ?? 'no reason given'}`)
    },
    waiting: (reason, retryMs, pending) => { log(`${reason}; ${pending} bytes of frames spooled, retrying in ${retryMs / 1000} s`) }
  })
  if (spool.pending > 0) log(`${spool.pending} bytes of frames were waiting in ${options.spoolDir}`)
  forwarder.start()
  let ble: BleBridge | undefined
  if (options.ble) {
    const splitters = new Map<string, FrameSplitter>()
    ble = await startBle({
      log,
      packet: (address, bytes) => {
        const splitter = splitters.get(address) ?? new FrameSplitter()
        splitters.set(address, splitter)
        const frames = splitter.push(bytes)
        spool.append(frames)
        if (frames.length > 0) forwarder.notify()
      }
    })
  }
  if (ble === undefined && options.serials.length === 0) {
    await forwarder.stop()
    spool.close()
    throw new UsageError('nothing to bridge: BLE cannot be used here and no --serial line was given')
  }
  let running = true
  const open = new Set<Readable>()
  const lines = options.serials.map(async spec => { await readLine(spec, spool, forwarder, log, () => running, open) })
  await stopped
  running = false
  for (const stream of open) stream.destroy()
  await ble?.stop()
  await forwarder.stop()
  spool.close()
  void Promise.allSettled(lines)
}

/** Read one serial line until the gateway stops, opening it again whenever it closes or fails. */
async function readLine (spec: SerialSpec, spool: Spool, forwarder: Forwarder, log: (line: string) => void, running: () => boolean, open: Set<Readable>): Promise<void> {
  let announced = false
  while (running()) {
    const splitter = new FrameSplitter()
    try {
      const stream = await openSerial(spec)
      open.add(stream)
      log(`serial ${spec.label}: open`)
      announced = false
      stream.on('data', (bytes: Buffer) => {
        const frames = splitter.push(bytes)
        spool.append(frames)
        if (frames.length > 0) forwarder.notify()
      })
      await new Promise<void>(resolve => { stream.once('close', resolve); stream.once('error', () => { resolve() }) })
      open.delete(stream)
      if (!running()) return
      log(`serial ${spec.label}: closed${splitter.skipped > 0 ? ` (${splitter.skipped} bytes that were not frames skipped)` : ''}`)
    } catch (err) {
      if (!announced) log(`serial ${spec.label}: cannot open (${(err as Error).message}); trying again every ${REOPEN_MS / 1000} s`)
      announced = true
    }
    if (running()) await new Promise(resolve => setTimeout(resolve, REOPEN_MS))
  }
}
