// `berth gateway`: bridges devices on serial lines, USB serial devices (found by themselves) and BLE
// (through BlueZ, where the host has an adapter) to the telemetry server. Each line's bytes and each
// BLE device's notifications are split into frames, appended to the spool, and forwarded in order; a
// line that closes is opened again. What the server refused for now waits in the held spool; every
// count shows in the output and, with --metrics, on a Prometheus endpoint. A serial line's update
// frames are answered by its update session (updates.ts). Runs until SIGINT/SIGTERM.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import type { Readable } from 'node:stream'
import { UsageError } from '../../../kernel/index.js'
import { startBle, type BleBridge } from './ble.js'
import { FrameSplitter } from './frames.js'
import { Forwarder } from './forwarder.js'
import { serveGatewayMetrics, type GatewayStats } from './metrics.js'
import { openSerial, type SerialSpec } from './sources.js'
import { UpdateServer, UpdateSession } from './updates.js'
import { Spool } from './spool.js'
import { usbSerialDevices } from './usb.js'

export interface GatewayOptions {
  serials: SerialSpec[]
  url: URL
  apiKey: string
  spoolDir: string
  /** Most bytes of frames waiting for the server; the held spool gets a quarter of it. */
  spoolMaxBytes: number
  ble: boolean
  /** Where USB serial devices appear, or undefined to bridge none. */
  usbDir: string | undefined
  usbBaud: number
  /** host:port of the Prometheus endpoint, or undefined. */
  metrics: { host: string, port: number } | undefined
  log(line: string): void
}

const REOPEN_MS = 1000
const USB_SCAN_MS = 2000

export async function runGateway (options: GatewayOptions, stopped: Promise<void>): Promise<void> {
  const { log } = options
  const spool = new Spool(options.spoolDir, options.spoolMaxBytes)
  const held = new Spool(join(options.spoolDir, 'held'), Math.max(1, Math.floor(options.spoolMaxBytes / 4)))
  const stats: GatewayStats = { spool, held, skippedBytes: 0, forwarder: undefined }
  const forwarder = new Forwarder(options.url, options.apiKey, spool, held, {
    delivered: (counts, heldReasons, dropped, from) => {
      log(`forwarded ${Object.values(counts).reduce((a, b) => a + b, 0)} ${from === 'held' ? 'held ' : ''}frames: ${Object.entries(counts).map(([k, v]) => `${v} ${k}`).join(', ')}`)
      for (const [reason, n] of tally(heldReasons)) log(`kept ${n} frame(s) the server refused for now (${reason}); offering them again in ${Math.round(forwarder.heldRetryMs / 1000)} s`)
      for (const [reason, n] of tally(dropped)) log(`dropped ${n} frame(s) the server can never accept (${reason})`)
    },
    waiting: (reason, retryMs, pending) => { log(`${reason}; ${pending} bytes of frames spooled, retrying in ${retryMs / 1000} s`) }
  })
  stats.forwarder = forwarder
  if (spool.pending > 0) log(`${spool.pending} bytes of frames were waiting in ${options.spoolDir}`)
  if (held.pending > 0) log(`${held.pending} bytes of frames the server had refused for now were held`)
  const metrics = options.metrics === undefined ? undefined : await serveGatewayMetrics(options.metrics, stats)
  if (metrics !== undefined) log(`metrics on http://${metrics.address}/metrics`)
  forwarder.start()

  /** Frames from one source into the spool; a full spool drops its oldest and says so. */
  const take = (splitter: FrameSplitter, bytes: Buffer): void => {
    const skippedBefore = splitter.skipped
    const frames = splitter.push(bytes)
    stats.skippedBytes += splitter.skipped - skippedBefore
    const overflowedBefore = spool.overflowed
    spool.append(frames)
    if (spool.overflowed > overflowedBefore) log(`spool full (${options.spoolMaxBytes} bytes): dropped the ${spool.overflowed - overflowedBefore} oldest frame(s) (${spool.overflowed} since start)`)
    if (frames.length > 0) forwarder.notify()
  }

  let ble: BleBridge | undefined
  if (options.ble) {
    const splitters = new Map<string, FrameSplitter>()
    ble = await startBle({
      log,
      packet: (address, bytes) => {
        const splitter = splitters.get(address) ?? new FrameSplitter()
        splitters.set(address, splitter)
        take(splitter, bytes)
      }
    })
  }
  if (ble === undefined && options.serials.length === 0 && options.usbDir === undefined) {
    await forwarder.stop()
    await metrics?.close()
    spool.close()
    held.close()
    throw new UsageError('nothing to bridge: BLE cannot be used here, USB is off and no --serial line was given')
  }
  let running = true
  const open = new Set<Readable>()
  const updates = new UpdateServer(options.url, options.apiKey)
  const lines: Array<Promise<void>> = options.serials.map(async spec => { await readLine(spec, take, updates, log, () => running, open) })
  const usbScan = options.usbDir === undefined ? undefined : watchUsb(options.usbDir, options.usbBaud, () => running, spec => {
    lines.push(readLine(spec, take, updates, log, () => running && existsSync(spec.path), open))
  }, log)
  await stopped
  running = false
  if (usbScan !== undefined) clearInterval(usbScan)
  for (const stream of open) stream.destroy()
  await ble?.stop()
  await forwarder.stop()
  await metrics?.close()
  spool.close()
  held.close()
  void Promise.allSettled(lines)
}

/** How many times each reason occurs, in first-seen order. */
function tally (reasons: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>()
  for (const reason of reasons) counts.set(reason, (counts.get(reason) ?? 0) + 1)
  return counts
}

/** Look for USB serial devices now and every few seconds; `found` gets each one not being read. */
function watchUsb (dir: string, baud: number, running: () => boolean, found: (spec: SerialSpec & { kind: 'tty' }) => void, log: (line: string) => void): NodeJS.Timeout {
  const reading = new Set<string>()
  const scan = (): void => {
    if (!running()) return
    for (const path of reading) if (!existsSync(path)) reading.delete(path)
    for (const path of usbSerialDevices(dir)) {
      if (reading.has(path)) continue
      reading.add(path)
      log(`USB: found ${path}`)
      found({ kind: 'tty', path, baud, label: `usb ${path}` })
    }
  }
  scan()
  return setInterval(scan, USB_SCAN_MS)
}

/**
 * Read one serial line until the gateway stops (or `running` says so), opening it again whenever it
 * closes or fails; its update frames go to an update session that writes its answers back to the line.
 */
async function readLine (spec: SerialSpec, take: (splitter: FrameSplitter, bytes: Buffer) => void, updates: UpdateServer, log: (line: string) => void, running: () => boolean, open: Set<Readable>): Promise<void> {
  let announced = false
  while (running()) {
    let splitter = new FrameSplitter()
    try {
      const { input: stream, output } = await openSerial(spec)
      output.on('error', () => {}) // a line that fails is seen closing on its reading side
      const session = new UpdateSession(updates, frame => { output.write(frame) }, line => { log(`serial ${spec.label}: ${line}`) })
      splitter = new FrameSplitter(frame => { session.take(frame) })
      open.add(stream)
      log(`serial ${spec.label}: open`)
      announced = false
      stream.on('data', (bytes: Buffer) => { take(splitter, bytes) })
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
