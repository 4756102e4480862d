// Telemetry API latency at fleet size: a state directory with DEVICES devices, POINTS metric samples
// each and FAULTS faults at ISSUES program counters (written straight into the ingest plugin's
// databases, or with BENCH_INGEST_BACKEND=postgres into a PostgreSQL database in SQL: bench/postgres.ts;
// the server counts the faults into their crash issues when it starts, as it does with older data),
// served by `berth server` with the ingest plugin alone; then, one request at a time, a page of the
// devices list (first page, pages from random cursors, a search), a page of one device's metrics over
// a time range, a metric downsampled to 200 points, the crash issues list (by last seen, open ones by
// count, one version's) and a random issue's page. Reports p50 and p99 per query and backend
// (medians over BENCH_RUNS rounds). Then, with the server stopped, the work the server does each
// minute on that fleet, in this process on the same storage: the offline check (the first one finds
// SILENT devices silent and marks them offline; the next finds none) and the evaluation of a metric
// rule over the fleet and a crash-rate rule, each as CPU time of this process and of PostgreSQL,
// beside the reference of reading the metric rule's values device by device.
// Run: npm run build && node dist/bench/telemetry-api.js   (BENCH_DEVICES, BENCH_POINTS, BENCH_FAULTS, BENCH_ISSUES, BENCH_SILENT, BENCH_REQUESTS, BENCH_RUNS, BENCH_INGEST_BACKEND=lmdb,postgres)
import { rmSync } from 'node:fs'
import { cpus } from 'node:os'
import pg from 'pg'
import { pino } from 'pino'
import { Store } from '../kernel/store.js'
import { OutboundClient } from '../kernel/outbound.js'
import { Alerting } from '../plugins/ingest/alerting.js'
import type { AlertRule } from '../plugins/ingest/alert-rules.js'
import { findOfflineDevices, WebhookNotifier } from '../plugins/ingest/alerts.js'
import { newDevice } from '../plugins/ingest/apply.js'
import { pcIssue } from '../plugins/ingest/crash-issues.js'
import { hashPassword } from '../plugins/ingest/auth/passwords.js'
import { TelemetryStore } from '../plugins/ingest/store.js'
import type { TelemetryStorage } from '../plugins/ingest/storage/contract.js'
import { LmdbStorage } from '../plugins/ingest/storage/lmdb.js'
import { PostgresStorage, SCHEMA } from '../plugins/ingest/storage/postgres.js'
import { postgresCpuSeconds } from './process-cpu.js'
import { serverDir, startServer, stopServer } from './berth-server.js'
import { BACKEND_NAMES, benchBackends, startBenchPostgres, superuserQuery, type Backend, type BenchPostgres } from './postgres.js'
import { envInt, markdownTable, median } from './stats.js'

const DEVICES = envInt('BENCH_DEVICES', 10_000)
const POINTS = envInt('BENCH_POINTS', 1000)
const FAULTS = envInt('BENCH_FAULTS', 100_000)
const ISSUES = envInt('BENCH_ISSUES', 500)
/** Devices last seen before the offline limit (the rest reported a minute ago). */
const SILENT = envInt('BENCH_SILENT', 1000)
const OFFLINE_AFTER_MS = 3_600_000
const BUILD = 'be0c0be0c0be0c0b'
const REQUESTS = envInt('BENCH_REQUESTS', 500)
const RUNS = envInt('BENCH_RUNS', 1)
const DAY_MS = 86_400_000
const KEYS = ['battery_mv', 'rssi', 'loop_us', 'tx_packets']
const PASSWORD = 'bench-viewer-password'

const deviceId = (n: number): string => `bd${n.toString(16).padStart(14, '0')}`
/** The program counter of fault `i` (Thumb bit set): ISSUES distinct ones. */
const faultPc = (i: number): number => 0x08000001 + (i % ISSUES) * 16
/** Fault `i`'s device, receive time (over the day from `start`) and software version. */
const faultOf = (i: number, start: number): { device: string, at: number, version: string } =>
  ({ device: deviceId(i % DEVICES), at: start + Math.floor(i * (DAY_MS / FAULTS)), version: i % 3 === 0 ? '2.0.0' : '1.9.0' })

/** When device `n` was last seen: SILENT devices spread over the fleet before the offline limit, the others a minute ago. */
const lastSeen = (n: number, now: number): number => n % Math.max(1, Math.floor(DEVICES / SILENT)) === 1 ? now - 2 * OFFLINE_AFTER_MS : now - 60_000

/** Fill the ingest plugin's databases: devices, and POINTS samples per device over the last day. */
async function populate (stateDir: string): Promise<number> {
  const root = Store.open(stateDir)
  const store = new TelemetryStore(root.forPlugin('ingest'))
  const now = Date.now()
  const start = now - 86_400_000
  const step = Math.floor(86_400_000 / POINTS)
  for (let n = 0; n < DEVICES; n++) {
    const id = deviceId(n)
    void store.devices.put(id, { ...newDevice(id, start), name: `sensor ${n}`, serial: `SN-${n}`, software_type: 'main', software_version: n % 3 === 0 ? '2.0.0' : '1.9.0', last_seen: lastSeen(n, now) })
    let last: Promise<boolean> | undefined
    for (let p = 0; p < POINTS; p++) {
      const at = start + p * step
      last = store.metrics.put([id, at, p, 0], { device: id, sequence: p, received_at: at, key: KEYS[p % KEYS.length], kind: 'gauge', value: 3000 + (p % 700), uptime_ms: p * step })
    }
    if (n % 50 === 49) await last // keep the write queue bounded
  }
  await store.devices.put(deviceId(0), { ...newDevice(deviceId(0), start), last_seen: now })
  let last: Promise<boolean> | undefined
  for (let i = 0; i < FAULTS; i++) {
    const { device, at, version } = faultOf(i, start)
    last = store.faults.put([device, at, 1_000_000 + i], {
      device, sequence: 1_000_000 + i, received_at: at, pc: faultPc(i), lr: 0x08000101, sp: 0x20001000, psr: 0x61000000, cfsr: 1 << 17, hfsr: 0, mmfar: 0, bfar: 0,
      uptime_ms: 1000, software_version: version, build_id: BUILD, symbol: null, issue: null
    })
    if (i % 5000 === 4999) await last
  }
  await last
  // Counted into their crash issues here, as the server would at its first start.
  await new LmdbStorage(store).open()
  await root.close()
  return start
}

/** The same fleet in a PostgreSQL database (its schema migrated by the storage, as a node does at start), in SQL. */
async function populatePostgres (url: string): Promise<number> {
  const storage = new PostgresStorage(url)
  await storage.open()
  await storage.close()
  const now = Date.now()
  const start = now - DAY_MS
  const step = Math.floor(DAY_MS / POINTS)
  const id = "'bd' || lpad(to_hex(n), 14, '0')"
  const keys = `array[${KEYS.map(key => `'${key}'`).join(', ')}]`
  const statements: Array<[string, unknown[]]> = []
  for (let day = Math.floor(start / DAY_MS); day <= Math.floor(now / DAY_MS); day++) {
    statements.push([`create table if not exists metrics_d${day} partition of metrics for values from (${day * DAY_MS}) to (${(day + 1) * DAY_MS})`, []])
  }
  statements.push([`insert into devices (id, name, serial, software_type, software_version, registered, encrypted, created_at, last_seen, offline)
    select ${id}, case when n = 0 then ${id} else 'sensor ' || n end, case when n = 0 then null else 'SN-' || n end, case when n = 0 then null else 'main' end,
      case when n = 0 then null when n % 3 = 0 then '2.0.0' else '1.9.0' end, false, false, $1::bigint,
      case when n % $4::int = 1 then $2::bigint - $5::bigint else $2::bigint - 60000 end, false
    from generate_series(0, $3::int) n`, [start, now, DEVICES - 1, Math.max(1, Math.floor(DEVICES / SILENT)), 2 * OFFLINE_AFTER_MS]])
  // In time order, as devices' chunks arrive, about a million rows a statement.
  const pointsAtOnce = Math.max(1, Math.floor(1_000_000 / DEVICES))
  for (let first = 0; first < POINTS; first += pointsAtOnce) {
    statements.push([`insert into metrics (device, received_at, sequence, entry, key, kind, value, uptime_ms)
      select ${id}, $1::bigint + p * $2::bigint, p, 0, (${keys})[p % ${KEYS.length} + 1], 'gauge', (3000 + p % 700)::float8, p * $2::bigint
      from generate_series($3::int, $4::int) p, generate_series(0, $5::int) n order by p, n`, [start, step, first, Math.min(POINTS, first + pointsAtOnce) - 1, DEVICES - 1]])
  }
  statements.push([`insert into faults (device, received_at, sequence, pc, lr, sp, psr, cfsr, hfsr, mmfar, bfar, uptime_ms, software_version, build_id, pending)
    select 'bd' || lpad(to_hex(i % $1::int), 14, '0'), $2::bigint + floor(i * ($3::float8 / $4::int))::bigint, 1000000 + i, 134217729 + (i % $5::int) * 16,
      134217985, 536875008, 1627389952, 131072, 0, 0, 0, 1000, case when i % 3 = 0 then '2.0.0' else '1.9.0' end, $6, false
    from generate_series(0, $4::int - 1) i`, [DEVICES, start, DAY_MS, FAULTS, ISSUES, BUILD]])
  const client = new pg.Client({ connectionString: url, options: `-c search_path=${SCHEMA}` })
  await client.connect()
  try {
    for (const [text, params] of statements) await client.query(text, params)
  } finally {
    await client.end()
  }
  // Counted into their crash issues here, as the server would at its first start.
  const grouping = new PostgresStorage(url)
  await grouping.open()
  await grouping.close()
  await superuserQuery(url, 'vacuum analyze')
  return start
}

function percentile (sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]
}

interface Served {
  base: string
  start: number
  /** The fleet's storage, opened in this process (once the server is stopped). */
  storage: () => Promise<TelemetryStorage>
  /** Stop the server. */
  stop: () => Promise<void>
  /** Remove the state directory's fleet (on PostgreSQL, drop its database). */
  drop: () => Promise<void>
}

/** A state directory (and on PostgreSQL a database) with the fleet, and `berth server` on it with a viewer. */
async function serve (backend: Backend, postgres: BenchPostgres | undefined): Promise<Served> {
  const { dir, stateDir } = serverDir('berth-bench-api-')
  const database = backend === 'postgres' ? await postgres?.database() : undefined
  const began = performance.now()
  const start = database !== undefined ? await populatePostgres(database) : await populate(stateDir)
  console.error(`${BACKEND_NAMES[backend]}: populated ${DEVICES} devices × ${POINTS} points and ${FAULTS} faults in ${((performance.now() - began) / 1000).toFixed(0)} s`)
  const server = await startServer({
    plugins: 'ingest',
    dir,
    env: database !== undefined ? { INGEST_DATABASE_URL: database } : {},
    // The server's own offline check leaves the silent devices to the measurement of it below.
    toml: ['[ingest]', `offline_after_seconds = ${365 * 86_400}`, '[[ingest.users]]', 'name = "viewer"', 'role = "viewer"', `password = "${hashPassword(PASSWORD)}"`]
  })
  return {
    base: server.url.origin,
    start,
    storage: async () => {
      if (database !== undefined) {
        const storage = new PostgresStorage(database)
        await storage.open()
        return storage
      }
      const root = Store.open(stateDir)
      const storage = new LmdbStorage(new TelemetryStore(root.forPlugin('ingest')))
      return Object.assign(storage, { close: async () => { await root.close() } })
    },
    stop: async () => { await stopServer(server, true) },
    drop: async () => {
      rmSync(dir, { recursive: true, force: true })
      if (database !== undefined) await postgres?.drop(database)
    }
  }
}

/** CPU milliseconds of this process and of the PostgreSQL server on `port` (when given) that `work` took. */
async function cpuOf (port: number | undefined, work: () => Promise<unknown>): Promise<{ node: number, database: number }> {
  const database = port !== undefined ? postgresCpuSeconds(port) : 0
  const own = process.cpuUsage()
  await work()
  const used = process.cpuUsage(own)
  return { node: (used.user + used.system) / 1000, database: port !== undefined ? (postgresCpuSeconds(port) - database) * 1000 : 0 }
}

/** The rules evaluated each minute: a metric over the whole fleet, and the crash rate of all faults. */
function benchRules (now: number): AlertRule[] {
  const rule = { cooldown_minutes: 60, enabled: true, destinations: [], created_at: now, created_by: 'bench', updated_at: now }
  return [
    { ...rule, id: 'bench-battery', name: 'battery low', condition: { kind: 'metric', key: 'battery_mv', op: '<', value: 3100, group: null, min_percent: 10, for_minutes: 0 } },
    { ...rule, id: 'bench-crashes', name: 'crashes', condition: { kind: 'crash_rate', issue: null, per_hour: 100 } }
  ]
}

/** CPU ms of the work done each minute on the fleet: the offline checks (the first finds SILENT devices, the next none) and one evaluation of the rules. */
async function measureScheduled (storage: TelemetryStorage, port: number | undefined, now: number): Promise<Array<[string, { node: number, database: number }]>> {
  const log = pino({ level: 'silent' })
  const alerting = new Alerting(storage, new WebhookNotifier([], log, new OutboundClient({ allow: [] })), log)
  for (const rule of benchRules(now)) await storage.changeDocument<AlertRule>('alert-rule', rule.id, () => rule)
  let marked = 0
  const first = await cpuOf(port, async () => { marked = (await findOfflineDevices(storage, OFFLINE_AFTER_MS, now)).length })
  if (marked !== SILENT) throw new Error(`the offline check marked ${marked} devices offline, not ${SILENT}`)
  const rounds = Math.max(3, RUNS)
  const steady: Array<{ node: number, database: number }> = []
  const evaluations: Array<{ node: number, database: number }> = []
  for (let round = 0; round < rounds; round++) {
    steady.push(await cpuOf(port, async () => {
      const again = await findOfflineDevices(storage, OFFLINE_AFTER_MS, now)
      if (again.length !== 0) throw new Error(`the second offline check marked ${again.length} devices`)
    }))
    evaluations.push(await cpuOf(port, async () => await alerting.evaluate(now)))
  }
  // The reference: the same metric rule read device by device, a series read each, as evaluations did before.
  const latest = new Map<string, number>()
  const byDevice = await cpuOf(port, async () => {
    for await (const device of storage.devices()) {
      for await (const { value } of storage.series('metrics', [device.id, now - 3_600_000], now + 1)) if (value.key === 'battery_mv') latest.set(device.id, value.value)
    }
  })
  const one = await storage.latestMetrics('battery_mv', now - 3_600_000, now + 1, null)
  if (one.size !== latest.size) throw new Error(`the metric rule's one read found ${one.size} devices, device by device ${latest.size}`)
  const middle = (samples: Array<{ node: number, database: number }>): { node: number, database: number } =>
    ({ node: median(samples.map(s => s.node)), database: median(samples.map(s => s.database)) })
  return [
    [`offline check, ${SILENT} of ${DEVICES} devices gone silent (marked offline)`, first],
    ['offline check, none gone silent', middle(steady)],
    ['evaluation of a metric rule over the fleet (latest battery_mv of each device in the last hour) and a crash-rate rule', middle(evaluations)],
    ['reference: the metric rule\'s values read device by device (one series read a device, as before)', byDevice]
  ]
}

/** p50 and p99 (ms) of each query, REQUESTS one at a time after 20 of warm-up. */
async function measure (base: string, start: number): Promise<Array<[string, number, number]>> {
  const authorization = `Basic ${Buffer.from(`viewer:${PASSWORD}`).toString('base64')}`
  const random = (): number => Math.floor(Math.random() * DEVICES)
  const queries: Array<[string, () => string]> = [
    ['devices, first page (100)', () => '/devices?limit=100'],
    ['devices, a page from a random cursor', () => `/devices?limit=100&cursor=${deviceId(random())}`],
    ['devices, firmware 2.0.0 from a random cursor', () => `/devices?limit=100&software_version=2.0.0&cursor=${deviceId(random())}`],
    ['devices, search "sensor 99" (scans on)', () => '/devices?limit=100&q=sensor%2099'],
    ['metrics of one device, a page of 100 in a 6 h range', () => `/devices/${deviceId(random())}/metrics?limit=100&from=${start + 6 * 3_600_000}&to=${start + 12 * 3_600_000}`],
    ['one metric over 24 h, downsampled to 200 points', () => `/devices/${deviceId(random())}/metrics/points?key=battery_mv&points=200&from=${start}`],
    [`crash issues (${ISSUES} of ${FAULTS} faults), first page (100) by last seen`, () => '/issues?limit=100'],
    ['crash issues, open ones by count (50)', () => '/issues?status=open&sort=count&limit=50'],
    ['crash issues of version 2.0.0 (100)', () => '/issues?software_version=2.0.0&limit=100'],
    ['a random crash issue\'s page (versions, top devices, a week by hour, latest faults)', () => `/issues/${pcIssue({ pc: faultPc(Math.floor(Math.random() * ISSUES)), build_id: BUILD, cfsr: 0, hfsr: 0, mmfar: 0, bfar: 0 }).id}`]
  ]
  const results: Array<[string, number, number]> = []
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
    results.push([name, percentile(times, 0.5), percentile(times, 0.99)])
  }
  return results
}

async function main (): Promise<void> {
  const backends = benchBackends()
  const postgres = backends.includes('postgres') ? await startBenchPostgres() : undefined
  /** By backend, by query: the p50s and p99s of the runs. */
  const samples = new Map<string, { p50: number[], p99: number[] }>()
  const names: string[] = []
  /** By backend, by scheduled work: its CPU ms. */
  const scheduled = new Map<string, { node: number, database: number }>()
  const work: string[] = []
  try {
    for (const backend of backends) {
      const served = await serve(backend, postgres)
      try {
        try {
          for (let run = 0; run < RUNS; run++) {
            for (const [name, p50, p99] of await measure(served.base, served.start)) {
              if (!names.includes(name)) names.push(name)
              const entry = samples.get(`${backend} ${name}`) ?? { p50: [], p99: [] }
              entry.p50.push(p50)
              entry.p99.push(p99)
              samples.set(`${backend} ${name}`, entry)
            }
          }
        } finally {
          await served.stop()
        }
        const storage = await served.storage()
        try {
          for (const [name, cpu] of await measureScheduled(storage, backend === 'postgres' ? postgres?.server.port : undefined, served.start + DAY_MS)) {
            if (!work.includes(name)) work.push(name)
            scheduled.set(`${backend} ${name}`, cpu)
          }
        } finally {
          await storage.close()
        }
      } finally {
        await served.drop()
      }
    }
  } finally {
    await postgres?.close()
  }
  const rows = names.map(name => [name, ...backends.flatMap(backend => {
    const entry = samples.get(`${backend} ${name}`) ?? { p50: [], p99: [] }
    return [median(entry.p50).toFixed(1), median(entry.p99).toFixed(1)]
  })])
  console.log(`${DEVICES} devices × ${POINTS} metric points, ${FAULTS} faults in ${ISSUES} crash issues; ${REQUESTS} requests per query, one at a time, after 20 of warm-up; ` +
    `${RUNS > 1 ? `median of ${RUNS} rounds; ` : ''}${postgres !== undefined ? 'PostgreSQL 15 on this machine, fsync on; ' : ''}Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}.\n`)
  const single = backends.length === 1
  console.log(markdownTable(['query', ...backends.flatMap(backend => single ? ['p50 (ms)', 'p99 (ms)'] : [`${BACKEND_NAMES[backend]} p50 (ms)`, `${BACKEND_NAMES[backend]} p99 (ms)`])], rows))
  console.log('\nCPU time of the work done each minute (ms; this process, which runs it as the server would, and PostgreSQL)\n')
  console.log(markdownTable(['work', ...backends.flatMap(backend => backend === 'postgres' ? [`${BACKEND_NAMES[backend]}: node (ms)`, `${BACKEND_NAMES[backend]}: database (ms)`] : [`${BACKEND_NAMES[backend]} (ms)`])],
    work.map(name => [name, ...backends.flatMap(backend => {
      const cpu = scheduled.get(`${backend} ${name}`) ?? { node: NaN, database: NaN }
      return backend === 'postgres' ? [cpu.node.toFixed(0), cpu.database.toFixed(0)] : [cpu.node.toFixed(0)]
    })])))
}

await main()
