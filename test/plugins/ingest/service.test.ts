// The telemetry service around ingest: live events with resume, offline alerts to webhooks (with
// retry), retention, backups while writing (on PostgreSQL refused: that database has tools of its
// own), Prometheus text checked by promtool, ELF uploads, rate limits and CORS. What is stored is read
// through the storage contract, so the same checks hold on both backends.
import t from 'tap'
import { execFile } from 'node:child_process'
import { existsSync, statSync, writeFileSync } from 'node:fs'
import { createServer, type IncomingMessage } from 'node:http'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { open } from 'lmdb'
import pg from 'pg'
import type { AnyPlugin, Kernel } from '../../../kernel/index.js'
import { encodeChunk } from '../../../plugins/ingest/wire/encoder.js'
import ingest from '../../../plugins/ingest/index.js'
import type { TelemetryStorage } from '../../../plugins/ingest/storage/contract.js'
import { seenKey } from '../../../plugins/ingest/store.js'
import { runCli } from '../../support/cli.js'
import { ensureDebianPackages, requireComponent } from '../../support/component.js'
import { armToolchain } from '../../support/firmware.js'
import { testKernel } from '../../support/kernel.js'
import { pollUntil } from '../../support/poll.js'
import { tempDir } from '../../support/tmp.js'
import { API_KEY, backendSettings, basic, onPostgres, readEvents, telemetryServer } from './harness.js'
import { DEVICE, SAMPLES } from './samples.js'

const run = promisify(execFile)
const heartbeat = (sequence: number, device = DEVICE): Uint8Array => encodeChunk({ device, sequence, payload: SAMPLES[5] })

/** Faults waiting for symbolication, of every build. */
async function pendingCount (storage: TelemetryStorage): Promise<number> {
  let count = 0
  for (const build of await storage.pendingBuilds()) count += (await storage.pendingFaults(build, undefined, 10_000)).length
  return count
}

/** The faults kept of `device`. */
async function faultCount (storage: TelemetryStorage, device: string): Promise<number> {
  let count = 0
  for await (const _ of storage.series('faults', [device, 0], Number.MAX_SAFE_INTEGER)) count++
  return count
}

t.test('events stream live and resume from Last-Event-ID', async t => {
  const server = await telemetryServer(t)
  const url = new URL('/events/stream', server.base)
  const live = await fetch(url, { headers: { authorization: basic('viewer') } })
  t.equal(live.headers.get('content-type'), 'text/event-stream; charset=utf-8')
  await server.ingest(heartbeat(1))
  const first = await readEvents(live, 2)
  t.same(first.map(e => e.event), ['device.registered', 'chunk'])
  t.ok(first[1].id > first[0].id, 'ids increase')
  await server.ingest(Buffer.concat([heartbeat(2), heartbeat(3)]))
  const resumed = await fetch(url, { headers: { authorization: basic('viewer'), 'last-event-id': String(first[1].id) } })
  const missed = await readEvents(resumed, 2)
  t.same(missed.map(e => [e.event, e.data.sequence]), [['chunk', 2], ['chunk', 3]])
  t.equal((await fetch(url)).status, 401)
  const head = await fetch(url, { method: 'HEAD', headers: { authorization: basic('viewer') }, signal: AbortSignal.timeout(5000) })
  t.same([head.status, head.headers.get('content-type')], [200, 'text/event-stream; charset=utf-8'], 'HEAD answers the head at once')
})

t.test('an offline device raises one alert, delivered to the webhook with retries', async t => {
  const received: Array<{ alert: string, device: string }> = []
  const hook = createServer((request: IncomingMessage, response) => {
    let body = ''
    request.on('data', chunk => { body += chunk })
    request.on('end', () => {
      received.push(JSON.parse(body))
      response.statusCode = received.length === 1 ? 500 : 204
      response.end()
    })
  })
  await new Promise<void>(resolve => hook.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { hook.close() })
  const port = (hook.address() as { port: number }).port
  const server = await telemetryServer(t, { offline_after_seconds: 60, alert_webhooks: [`http://127.0.0.1:${port}/alerts`] })
  await server.ingest(heartbeat(1))
  t.same(await server.service.checkOffline(Date.now() + 30_000), [], 'seen recently: no alert')
  const alerts = await server.service.checkOffline(Date.now() + 61_000)
  t.match(alerts, [{ kind: 'device.offline', device: DEVICE }])
  t.same(await server.service.checkOffline(Date.now() + 120_000), [], 'one alert per outage')
  await pollUntil(() => received.length >= 2, { what: 'the retried webhook delivery', timeout: 10_000 })
  t.match(received, [{ alert: 'device.offline', device: DEVICE }, { alert: 'device.offline', device: DEVICE }])
  t.match(await (await server.api('GET', `/devices/${DEVICE}`, 'viewer')).json(), { offline: true })
  await server.ingest(heartbeat(2))
  t.match(await (await server.api('GET', `/devices/${DEVICE}`, 'viewer')).json(), { offline: false })
  const metrics = await (await server.api('GET', '/metrics/prometheus', 'viewer')).text()
  t.match(metrics, /^berth_ingest_alerts_total\{kind="device.offline"\} 1$/m)
})

t.test('retention deletes what is older than retention_days, and nothing newer', async t => {
  const server = await telemetryServer(t, { retention_days: 7 })
  await server.ingest(Buffer.concat([2, 3, 4].map(sequence => encodeChunk({ device: DEVICE, sequence, payload: SAMPLES[2] }))))
  const { storage } = server.service.telemetry
  t.equal(await pendingCount(storage), 3, 'each fault is marked pending with it (no symbolication plugin runs here)')
  t.equal(await server.service.applyRetention(Date.now() + 6 * 86_400_000), 0)
  t.equal(await server.service.applyRetention(Date.now() + 8 * 86_400_000), 3)
  const faults = await (await server.api('GET', `/devices/${DEVICE}/faults`, 'viewer')).json() as { items: unknown[] }
  t.equal(faults.items.length, 0)
  t.equal(await pendingCount(storage), 0, 'their pending marks went with them')
})

t.test('retention runs when the plugin starts, not an hour later: a server restarted often still prunes', async t => {
  const stateDir = tempDir(t)
  const backend = await backendSettings(t)
  const start = async (retentionDays: number): Promise<Kernel> => await testKernel(t, { plugins: [ingest], config: { server: { state_dir: stateDir }, ingest: { api_key: API_KEY, retention_days: retentionDays, ...backend } } })
  const faults = async (kernel: Kernel): Promise<number> => await faultCount(kernel.service('ingest').telemetry.storage, DEVICE)
  const fault = (sequence: number): Uint8Array => encodeChunk({ device: DEVICE, sequence, payload: SAMPLES[2] })
  const first = await start(30)
  const { ingestor } = first.service('ingest').telemetry
  t.equal((await ingestor.ingest(Buffer.concat([fault(1), fault(2), fault(3)]), Date.now() - 8 * 86_400_000)).summary.accepted, 3, 'three faults of 8 days ago')
  t.equal((await ingestor.ingest(fault(4))).summary.accepted, 1, 'one of now')
  await first.stop()
  if (typeof backend.database_url === 'string') {
    // Nodes sharing a database run retention once a period: a start within half an hour of the last
    // run (any node's) leaves it to the schedule. This restart comes as one an hour after the last run.
    const client = new pg.Client({ connectionString: backend.database_url })
    await client.connect()
    try {
      const moved = await client.query('update ingest.scheduled_jobs set at = at - 3600000 where name = $1', ['retention'])
      t.equal(moved.rowCount, 1, 'the first start ran retention and recorded it')
    } finally {
      await client.end()
    }
  }
  const second = await start(7)
  await pollUntil(async () => await faults(second) === 1, { what: 'the faults older than 7 days to be deleted at start' })
  t.equal(await faults(second), 1, 'the old faults went at start, the recent one stayed')
})

t.test('a backup taken while chunks keep arriving holds the telemetry data alone, and restores', async t => {
  const server = await telemetryServer(t)
  await server.ingest(heartbeat(0))
  let sequence = 1
  const writer = (async () => {
    for (let i = 0; i < 40; i++) await server.ingest(Buffer.concat([heartbeat(sequence++), heartbeat(sequence++)]))
  })()
  const response = await server.api('GET', '/admin/backup', 'admin')
  if (onPostgres()) {
    // The embedded store holds no telemetry then: the database is backed up with its own tools.
    t.same([response.status, await response.json()], [409, {
      error: 'the telemetry is kept in PostgreSQL ([ingest].database_url): back that database up with its own tools (pg_dump); /admin/backup copies the embedded store only',
      code: 'BERTH_CONFLICT'
    }], 'refused on PostgreSQL, with what to do instead')
    await writer
    t.equal(await server.service.telemetry.storage.chunkCount(), 81, 'and the chunks arriving meanwhile were all stored')
    return
  }
  t.equal(response.status, 200)
  t.match(response.headers.get('content-disposition'), /^attachment; filename="berth-ingest-.*\.mdb"$/)
  const file = join(tempDir(t), 'backup.mdb')
  writeFileSync(file, Buffer.from(await response.arrayBuffer()))
  await writer
  const copy = open({ path: file, readOnly: true })
  const names = [...copy.getKeys()].map(String).filter(name => !name.startsWith('~'))
  t.same(names, [...names].filter(name => !name.includes('/')), `only the ingest plugin's databases, by their own names: ${names.join(', ')}`)
  t.match(copy.openDB({ name: 'devices' }).get(DEVICE), { id: DEVICE })
  const seen = [...copy.openDB({ name: 'seen' }).getKeys()].length
  t.ok(seen >= 1 && seen <= 81, `a point-in-time copy (${seen} chunks)`)
  await copy.close()

  // Restore into the stopped server's state directory: the data is the backup's again.
  const stateDir = server.kernel.config.stateDir
  await server.kernel.stop()
  const restored = await runCli(['--state-dir', stateDir, 'state', 'restore', 'ingest', file])
  t.equal(restored.code, 0, restored.stderr)
  t.match(restored.stdout, new RegExp(`ingest/seen: ${seen} entries`))
  const again = await testKernel(t, { plugins: [ingest], config: { server: { state_dir: stateDir }, ingest: { api_key: API_KEY } } })
  t.equal(again.service('ingest').telemetry.store.seen.getKeysCount(), seen, 'the chunks seen are those of the backup')
})

t.test('Prometheus text passes promtool check metrics', async t => {
  const promtool = await requireComponent(t, 'promtool', async () => {
    await ensureDebianPackages(['prometheus'])
    return 'promtool'
  })
  if (promtool === undefined) return
  const server = await telemetryServer(t)
  await server.ingest(heartbeat(1))
  const text = await (await server.api('GET', '/metrics/prometheus', 'viewer')).text()
  t.match(text, /^berth_ingest_chunks_total\{type="Heartbeat"\} 1$/m)
  t.match(text, /^berth_ingest_devices\{state="online"\} 1$/m)
  const file = join(tempDir(t), 'metrics.txt')
  writeFileSync(file, text)
  const checked = await run('sh', ['-c', `${promtool} check metrics < ${file}`]).then(() => 0, (err: { code?: number, stdout?: string, stderr?: string }) => `${err.code} ${err.stdout ?? ''} ${err.stderr ?? ''}`)
  t.equal(checked, 0, 'promtool found no problem')
})

t.test('ELF uploads are validated (ARM images only), keyed by GNU build id, size-limited and stored 0600', async t => {
  const compiler = await requireComponent(t, 'arm-none-eabi-gcc', armToolchain)
  if (compiler === undefined) return
  const dir = tempDir(t)
  const elfDir = join(dir, 'elves')
  const server = await telemetryServer(t, { elf_dir: elfDir, elf_max_bytes: 200_000 })
  writeFileSync(join(dir, 'fw.c'), 'int main(void) { return 42; }\n')
  await run(compiler, ['-g', '-Wl,--build-id=sha1', '--specs=nosys.specs', '-o', join(dir, 'fw.elf'), join(dir, 'fw.c')])
  await run('cc', ['-o', join(dir, 'host.elf'), join(dir, 'fw.c')])
  const { stdout } = await run('readelf', ['-n', join(dir, 'fw.elf')])
  const expected = /Build ID: ([0-9a-f]+)/.exec(stdout)?.[1]
  t.match(expected, /^[0-9a-f]{40}$/)
  const { readFileSync } = await import('node:fs')
  const upload = async (body: Uint8Array, auth: Record<string, string>): Promise<Response> => await fetch(new URL('/ingest/elf?software_type=main&software_version=1.4.2', server.base), {
    method: 'POST', headers: { 'content-type': 'application/octet-stream', ...auth }, body
  })
  const accepted = await upload(readFileSync(join(dir, 'fw.elf')), { authorization: basic('provisioner') })
  t.equal(accepted.status, 201)
  t.match(await accepted.json(), { build_id: expected, has_build_id: true, software_version: '1.4.2' })
  t.equal(statSync(join(elfDir, `${expected}.elf`)).mode & 0o777, 0o600)
  t.equal((await upload(readFileSync(join(dir, 'fw.elf')), { 'x-api-key': API_KEY })).status, 201, 'devices and CI may upload with the device key')
  t.equal((await upload(readFileSync(join(dir, 'fw.elf')), { authorization: basic('viewer') })).status, 403)
  const notElf = await upload(Buffer.alloc(100, 1), { authorization: basic('admin') })
  t.same([notElf.status, await notElf.json()], [400, { error: 'not an ELF file (no \\x7fELF magic)', code: 'BERTH_BAD_REQUEST' }])
  const notArm = await upload(readFileSync(join(dir, 'host.elf')), { authorization: basic('admin') })
  t.same([notArm.status, await notArm.json()], [400, { error: 'not an ARM image (ELF machine 62; ARM is 40): faults are resolved with arm-none-eabi-addr2line', code: 'BERTH_BAD_REQUEST' }])
  t.equal((await upload(Buffer.alloc(300_000), { authorization: basic('admin') })).status, 413)
})

t.test('ELF upload parameters are checked first: 400 with the reason, and nothing written', async t => {
  const dir = tempDir(t)
  const elfDir = join(dir, 'elves')
  const server = await telemetryServer(t, { elf_dir: elfDir })
  // A 32-bit ARM ELF header alone: the smallest image the upload accepts.
  const image = Buffer.alloc(52)
  image.writeUInt32BE(0x7f454c46, 0)
  image.set([1, 1, 1], 4)
  image.writeUInt16LE(40, 18)
  const upload = async (query: string): Promise<Response> => await fetch(new URL(`/ingest/elf?${query}`, server.base), {
    method: 'POST', headers: { 'content-type': 'application/octet-stream', authorization: basic('provisioner') }, body: image
  })
  const refused: Array<[string, string]> = [
    [`software_type=${'x'.repeat(2000)}`, 'invalid querystring: software_type must NOT have more than 64 characters'],
    [`software_type=main&software_version=${'1'.repeat(65)}`, 'invalid querystring: software_version must NOT have more than 64 characters'],
    ['software_type=', 'invalid querystring: software_type must NOT have fewer than 1 characters'],
    ['software_version=1.0%0A', 'invalid querystring: software_version must match pattern "^[^\\x00-\\x1f\\x7f]*$"'],
    ['software_type=a&software_type=b', 'invalid querystring: software_type is given more than once']
  ]
  for (const [query, error] of refused) {
    const answer = await upload(query)
    t.same([answer.status, await answer.json()], [400, { error, code: 'BERTH_BAD_REQUEST' }], query.slice(0, 40))
  }
  t.notOk(existsSync(elfDir), 'no file written')
  t.equal((await server.service.telemetry.storage.elves()).length, 0, 'no record written')
  const accepted = await upload(`software_type=${'t'.repeat(64)}&software_version=${'v'.repeat(64)}`)
  t.equal(accepted.status, 201, '64 characters each are accepted')
  t.match(await accepted.json(), { software_type: 't'.repeat(64), software_version: 'v'.repeat(64) })
})

t.test('rate limit: 429 with Retry-After on /ingest once the bucket is empty; other paths untouched', async t => {
  const server = await telemetryServer(t, { rate_limit: { enabled: true, burst: 3, per_second: 0.5 } })
  const statuses: number[] = []
  for (let i = 0; i < 4; i++) statuses.push((await server.ingest(heartbeat(i))).status)
  t.same(statuses, [200, 200, 200, 429])
  const limited = await fetch(new URL('/ingest/chunks', server.base), { method: 'POST', headers: { 'x-api-key': API_KEY, 'content-type': 'application/octet-stream' }, body: heartbeat(9) })
  t.equal(limited.status, 429)
  t.equal(limited.headers.get('retry-after'), '2')
  t.match(await limited.json(), { error: /too many requests/ })
  for (let i = 0; i < 5; i++) t.equal((await server.api('GET', '/devices', 'viewer')).status, 200)
})

t.test('CORS: the configured origin, preflights of reads and writes (PUT, DELETE) included; auth mode says basic', async t => {
  const server = await telemetryServer(t, { cors_origin: 'https://dash.example' })
  const preflight = await fetch(new URL('/devices', server.base), {
    method: 'OPTIONS', headers: { origin: 'https://dash.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' }
  })
  t.equal(preflight.status, 204)
  t.equal(preflight.headers.get('access-control-allow-origin'), 'https://dash.example')
  for (const [method, path] of [['PUT', '/groups/north'], ['DELETE', '/groups/north'], ['PUT', '/ota/targets/00000000-0000-4000-8000-000000000000'], ['DELETE', '/ota/targets/00000000-0000-4000-8000-000000000000']]) {
    const writes = await fetch(new URL(path, server.base), {
      method: 'OPTIONS', headers: { origin: 'https://dash.example', 'access-control-request-method': method, 'access-control-request-headers': 'authorization, content-type' }
    })
    t.equal(writes.status, 204, `preflight of ${method} ${path}`)
    const allowed = writes.headers.get('access-control-allow-methods')?.split(/,\s*/) ?? []
    t.ok(allowed.includes(method), `${method} allowed (${allowed.join(', ')})`)
    t.equal(writes.headers.get('access-control-allow-origin'), 'https://dash.example')
  }
  const bare = await fetch(new URL('/auth/me', server.base), { method: 'OPTIONS' })
  t.same([bare.status, await bare.text()], [204, ''], 'an OPTIONS request without the preflight headers is no error')
  const simple = await server.api('GET', '/auth/mode', null, undefined, { origin: 'https://dash.example' })
  t.equal(simple.headers.get('access-control-allow-origin'), 'https://dash.example')
  t.same(await simple.json(), { mode: 'basic' })
})

t.test('the telemetry listener exposes telemetry and process metrics, never the control plane\'s, and the other way round', async t => {
  const [tokens, secrets, reconciler] = await Promise.all(['tokens', 'secrets', 'reconciler'].map(async name => (await import(`../../../plugins/${name}/index.js`) as { default: AnyPlugin }).default))
  const kernel = await testKernel(t, {
    plugins: [tokens, secrets, reconciler, ingest],
    config: { ingest: { api_key: API_KEY, metrics_public: true, ...await backendSettings(t) }, reconciler: { docker_socket: join(tempDir(t), 'no-engine.sock') } }
  })
  const response = await fetch(new URL('/ingest/chunks', kernel.url('telemetry')), { method: 'POST', headers: { 'content-type': 'application/octet-stream', 'x-api-key': API_KEY }, body: heartbeat(1) })
  t.equal(response.status, 200)
  const telemetry = await (await fetch(new URL('/metrics/prometheus', kernel.url('telemetry')))).text()
  const control = await (await fetch(new URL('/metrics', kernel.url('control')))).text()
  t.match(telemetry, /^berth_ingest_chunks_total\{type="Heartbeat"\} 1$/m)
  t.match(telemetry, /^berth_plugin_up\{plugin="ingest"\} 1$/m)
  t.match(telemetry, /^process_resident_memory_bytes \d/m)
  t.notMatch(telemetry, /berth_reconciler_|plugin="(tokens|secrets|reconciler)"|listener="control"/, 'nothing of the control plane')
  t.match(control, /^# HELP berth_reconciler_deploy_seconds /m)
  t.match(control, /^berth_plugin_up\{plugin="reconciler"\} 1$/m)
  t.match(control, /^process_resident_memory_bytes \d/m)
  t.notMatch(control, /berth_ingest_|plugin="ingest"|listener="telemetry"/, 'nothing of telemetry')
})

t.test('a stop during ingest loses no chunk that was acknowledged: commits in flight finish before the store closes', async t => {
  const server = await telemetryServer(t)
  const stateDir = server.kernel.config.stateDir
  const { storage, settings: { database_url: databaseUrl } } = server.service.telemetry
  const sent = Array.from({ length: 40 }, async (_, sequence) => {
    try {
      return { sequence, ...(await server.ingest(heartbeat(sequence))) }
    } catch {
      return { sequence, status: 0 } // the connection was refused or cut: not acknowledged
    }
  })
  await pollUntil(async () => await storage.chunkCount() > 0, { what: 'the first commit', interval: 1 })
  await server.kernel.stop()
  const answers = await Promise.all(sent)
  const acknowledged = answers.filter(a => 'json' in a && a.status === 200 && a.json.accepted === 1).map(a => a.sequence)
  t.ok(acknowledged.length > 0, `${acknowledged.length} of 40 acknowledged before the stop`)
  t.ok(answers.every(a => a.status === 200 || a.status === 503 || a.status === 0), 'the rest were turned away, not failed')
  const again = await testKernel(t, { plugins: [ingest], config: { server: { state_dir: stateDir }, ingest: { api_key: API_KEY, database_url: databaseUrl } } })
  // The idempotency marks, read as a request reads them (and nothing written).
  const { marks } = await again.service('ingest').telemetry.storage.ingest([DEVICE], async session => await session.read([DEVICE], acknowledged.map(sequence => [DEVICE, sequence] as const), []))
  t.same(acknowledged.filter(sequence => !marks.has(seenKey(DEVICE, sequence))), [], 'every acknowledged chunk is stored')
})
