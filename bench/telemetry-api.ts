// Telemetry API latency at fleet size: a state directory with DEVICES devices and POINTS metric
// samples each (written straight into the ingest plugin's databases), served by `berth server` with
// the ingest plugin alone; then, one request at a time, a page of the devices list (first page,
// pages from random cursors, a search), a page of one device's metrics over a time range, and a
// metric downsampled to 200 points. Reports p50 and p99 per query.
// Run: npm run build && node dist/bench/telemetry-api.js   (BENCH_DEVICES, BENCH_POINTS, BENCH_REQUESTS)
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Store } from '../kernel/store.js'
import { newDevice } from '../plugins/ingest/apply.js'
import { hashPassword } from '../plugins/ingest/auth/passwords.js'
import { TelemetryStore } from '../plugins/ingest/store.js'
import { freePort } from '../test/support/net.js'
import { envInt, markdownTable } from './stats.js'

const DEVICES = envInt('BENCH_DEVICES', 10_000)
const POINTS = envInt('BENCH_POINTS', 1000)
const REQUESTS = envInt('BENCH_REQUESTS', 500)
const KEYS = ['battery_mv', 'rssi', 'loop_us', 'tx_packets']
const CLI = fileURLToPath(new URL('../kernel/cli/cli.js', import.meta.url))
const PASSWORD = 'bench-viewer-password'

const deviceId = (n: number): string => `bd${n.toString(16).padStart(14, '0')}`

/** Fill the ingest plugin's databases: devices, and POINTS samples per device over the last day. */
async function populate (stateDir: string): Promise<number> {
  const root = Store.open(stateDir)
  const store = new TelemetryStore(root.forPlugin('ingest'))
  const now = Date.now()
  const start = now - 86_400_000
  const step = Math.floor(86_400_000 / POINTS)
  for (let n = 0; n < DEVICES; n++) {
    const id = deviceId(n)
    void store.devices.put(id, { ...newDevice(id, start), name: `sensor ${n}`, serial: `SN-${n}`, software_type: 'main', software_version: n % 3 === 0 ? '2.0.0' : '1.9.0', last_seen: now })
    let last: Promise<boolean> | undefined
    for (let p = 0; p < POINTS; p++) {
      const at = start + p * step
      last = store.metrics.put([id, at, p, 0], { device: id, sequence: p, received_at: at, key: KEYS[p % KEYS.length], kind: 'gauge', value: 3000 + (p % 700), uptime_ms: p * step })
    }
    if (n % 50 === 49) await last // keep the write queue bounded
  }
  await store.devices.put(deviceId(0), { ...newDevice(deviceId(0), start), last_seen: now })
  await root.close()
  return start
}

function percentile (sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]
}

async function main (): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'berth-bench-api-'))
  const stateDir = join(dir, '.berth')
  try {
    const began = performance.now()
    const start = await populate(stateDir)
    console.error(`populated ${DEVICES} devices × ${POINTS} points in ${((performance.now() - began) / 1000).toFixed(0)} s`)
    const port = await freePort()
    writeFileSync(join(dir, 'cluster.toml'), ['[server]', 'log_level = "warn"', '[server.listeners.control]', 'host = "127.0.0.1"', 'port = 0',
      '[server.listeners.telemetry]', 'host = "127.0.0.1"', `port = ${port}`,
      '[[ingest.users]]', 'name = "viewer"', 'role = "viewer"', `password = "${hashPassword(PASSWORD)}"`].join('\n'))
    const child = spawn(process.execPath, [CLI, 'server'], { cwd: dir, env: { ...process.env, BERTH_PLUGINS: 'ingest' }, stdio: ['ignore', 'ignore', 'inherit'] })
    const base = `http://127.0.0.1:${port}`
    const authorization = `Basic ${Buffer.from(`viewer:${PASSWORD}`).toString('base64')}`
    try {
      for (let tries = 0; ; tries++) {
        if ((await fetch(`${base}/auth/mode`).then(r => r.ok, () => false))) break
        if (tries > 3000) throw new Error('berth server did not start')
        await new Promise(resolve => setTimeout(resolve, 10))
      }
      const random = (): number => Math.floor(Math.random() * DEVICES)
      const queries: Array<[string, () => string]> = [
        ['devices, first page (100)', () => '/devices?limit=100'],
        ['devices, a page from a random cursor', () => `/devices?limit=100&cursor=${deviceId(random())}`],
        ['devices, firmware 2.0.0 from a random cursor', () => `/devices?limit=100&software_version=2.0.0&cursor=${deviceId(random())}`],
        ['devices, search "sensor 99" (scans on)', () => '/devices?limit=100&q=sensor%2099'],
        ['metrics of one device, a page of 100 in a 6 h range', () => `/devices/${deviceId(random())}/metrics?limit=100&from=${start + 6 * 3_600_000}&to=${start + 12 * 3_600_000}`],
        ['one metric over 24 h, downsampled to 200 points', () => `/devices/${deviceId(random())}/metrics/points?key=battery_mv&points=200&from=${start}`]
      ]
      const rows: string[][] = []
      for (const [name, path] of queries) {
        const times: number[] = []
        for (let i = 0; i < REQUESTS + 20; i++) {
          const t0 = performance.now()
          const response = await fetch(base + path(), { headers: { authorization } })
          await response.arrayBuffer()
          if (!response.ok) throw new Error(`${name}: ${response.status}`)
          if (i >= 20) times.push(performance.now() - t0)
        }
        times.sort((a, b) => a - b)
        rows.push([name, percentile(times, 0.5).toFixed(1), percentile(times, 0.99).toFixed(1)])
      }
      console.log(`${DEVICES} devices × ${POINTS} metric points; ${REQUESTS} requests per query, one at a time, after 20 of warm-up; Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}.\n`)
      console.log(markdownTable(['query', 'p50 (ms)', 'p99 (ms)'], rows))
    } finally {
      child.kill('SIGTERM')
      await new Promise(resolve => child.once('exit', resolve))
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

await main()
