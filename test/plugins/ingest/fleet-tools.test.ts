// The fleet engineer's tools beside the lists: the symbol files uploaded and the builds the fleet runs
// without one; the devices sorted by fault count, firmware or a metric (with its column); a metric
// across the fleet as min/median/max bands; a device's timeline of reboots, faults, trace lines and heartbeats in order, paged; and the
// exports of devices, crash issues, faults and metric samples as CSV and NDJSON with the lists'
// filters, streamed. Bad input answers 400 (404 for an unknown device) with an error.
import t from 'tap'
import { parse } from 'csv-parse/sync'
import type { ChunkPayload } from '../../../plugins/ingest/wire/payloads.js'
import { encodeChunk } from '../../../plugins/ingest/wire/encoder.js'
import { headerOnlyElf } from '../../support/elf.js'
import { API_KEY, telemetryServer, type TelemetryServer } from './harness.js'
import { SAMPLES } from './samples.js'

const A = 'a100000000000001'
const B = 'b200000000000002'
const C = 'c300000000000003'

const battery = (mv: number): ChunkPayload => ({ type: 'Metrics', record: { uptime_ms: 1, entries: [{ key: 'battery_mv', kind: 'gauge', value: mv, uptime_ms: 1 }] } })
const info = (version: string, buildId: string): ChunkPayload => ({ type: 'DeviceInfo', record: { serial: 'SN-9, "quoted"', hardware_version: 'evt', software_type: 'main', software_version: version, build_id: buildId } })

async function send (server: TelemetryServer, device: string, chunks: ChunkPayload[]): Promise<void> {
  const { json } = await server.ingest(Buffer.concat(chunks.map((payload, sequence) => encodeChunk({ device, sequence: sequence + 1, payload }))))
  if (json.accepted !== chunks.length) throw new Error(`not all accepted: ${JSON.stringify(json)}`)
}

t.test('symbol files, a device\'s timeline, and exports', async t => {
  const server = await telemetryServer(t)
  const elf = headerOnlyElf('fleet-tools')
  const upload = await fetch(new URL('/ingest/elf?software_type=main&software_version=1.0.0', server.base), { method: 'POST', headers: { 'x-api-key': API_KEY, 'content-type': 'application/octet-stream' }, body: elf.bytes })
  t.equal(upload.status, 201)
  // A runs the build with symbols; B a build without; C reported no build id.
  await send(server, A, [info('1.0.0', elf.id), SAMPLES[1], SAMPLES[2], SAMPLES[4], SAMPLES[3], SAMPLES[2], SAMPLES[5]])
  await send(server, B, [info('1.1.0', 'ffffffffffffffff'), SAMPLES[2], battery(3500)])
  await send(server, C, [SAMPLES[5]])

  const symbols = await (await server.api('GET', '/symbols', 'viewer')).json() as { files: Array<Record<string, unknown>>, missing: Array<Record<string, unknown>> }
  t.same(symbols.files.map(f => [f.build_id, f.software_version]), [[elf.id, '1.0.0']], 'the uploaded ELF, by version')
  t.notOk('file' in symbols.files[0], 'the server\'s file path is not shown')
  t.same(symbols.missing, [{ software_type: 'main', software_version: '1.1.0', build_id: 'ffffffffffffffff', devices: 1 }], 'the build B runs has no symbols; C reported none at all')
  t.equal((await server.api('GET', '/symbols', null)).status, 401)

  const sorted = async (query: string): Promise<Array<[string, unknown]>> => {
    const { devices } = await (await server.api('GET', `/devices?${query}`, 'viewer')).json() as { devices: Array<{ id: string, fault_count: number, metric_value: number | null, software_version: string | null }> }
    return devices.map(d => [d.id, query.includes('metric') ? d.metric_value : query.includes('fault') ? d.fault_count : d.software_version])
  }
  t.same(await sorted('sort=fault_count'), [[A, 2], [B, 1], [C, 0]], 'sorted by fault count, most first')
  t.same(await sorted('sort=software_version&order=asc'), [[A, '1.0.0'], [B, '1.1.0'], [C, null]], 'by firmware version, devices without one last')
  t.same(await sorted('sort=metric&metric=battery_mv'), [[A, 3712], [B, 3500], [C, null]], 'by a metric\'s latest value, shown as a column')
  t.same(await sorted('sort=last_seen&metric=battery_mv&limit=1&order=asc'), [[A, 3712]], 'the column beside another sort')
  const second = await (await server.api('GET', `/devices?sort=fault_count&limit=1&cursor=${A}`, 'viewer')).json() as { devices: Array<{ id: string }>, next_cursor: string }
  t.same([second.devices.map(d => d.id), second.next_cursor], [[B], B], 'pages of the sorted list follow the cursor')
  for (const query of ['sort=name', 'sort=metric', 'sort=last_seen&order=up', `sort=last_seen&cursor=${'d'.repeat(16)}`]) t.equal((await server.api('GET', `/devices?${query}`, 'viewer')).status, 400, `GET /devices?${query}`)
  const { bands } = await (await server.api('GET', '/fleet/metrics/bands?key=battery_mv&points=1', 'viewer')).json() as { bands: Array<Record<string, number>> }
  t.match(bands, [{ devices: 2, min: 3500, median: 3606, max: 3712 }], 'a metric across the fleet: min, median and max of the devices\' averages')
  t.equal((await server.api('GET', '/fleet/metrics/bands', 'viewer')).status, 400, 'bands need a key')

  const timeline = await (await server.api('GET', `/devices/${A}/timeline`, 'viewer')).json() as { entries: Array<{ kind: string, sequence: number, summary: string }>, next_cursor: string | null }
  t.same(timeline.entries.map(e => [e.kind, e.sequence]), [['reboot', 2], ['fault', 3], ['fault', 6], ['trace', 4], ['heartbeat', 7]], 'one request: reboots, faults, traces, heartbeats of the same moment in that order')
  t.match(timeline.entries[0].summary, /^reboot: watchdog \(boot 17\)$/)
  t.match(timeline.entries[1].summary, /^fault: PRECISERR at 0x0800abcc$/)
  t.match(timeline.entries[3].summary, /radio up$/)
  t.equal(timeline.entries[4].summary, 'heartbeat: up 1m 2s (boot 17)')
  t.match(await (await server.api('GET', `/devices/${A}/heartbeats`, 'viewer')).json(), { items: [{ sequence: 7, uptime_ms: 62000, boot_count: 17 }] }, 'heartbeats are a series of their own')
  const first = await (await server.api('GET', `/devices/${A}/timeline?limit=3`, 'viewer')).json() as typeof timeline
  const rest = await (await server.api('GET', `/devices/${A}/timeline?limit=3&cursor=${first.next_cursor ?? ''}`, 'viewer')).json() as typeof timeline
  t.same([...first.entries, ...rest.entries].map(e => e.kind), ['reboot', 'fault', 'fault', 'trace', 'heartbeat'], 'pages continue where the last ended')
  t.equal(rest.next_cursor, null)
  t.equal((await server.api('GET', `/devices/${A}/timeline?cursor=WzEsOSwxXQ`, 'viewer')).status, 400, 'a cursor this server did not issue')
  t.equal((await server.api('GET', '/devices/dddddddddddddddd/timeline', 'viewer')).status, 404)

  const csv = await server.api('GET', '/export/devices', 'viewer')
  t.equal(csv.status, 200)
  t.match(csv.headers.get('content-type'), /^text\/csv/)
  t.match(csv.headers.get('content-disposition'), /^attachment; filename="berth-devices-.*\.csv"$/)
  const devices = parse(await csv.text(), { columns: true }) as Array<Record<string, string>>
  t.same(devices.map(d => d.id), [A, B, C], 'every device, in id order')
  t.equal(devices[0].serial, 'SN-9, "quoted"', 'a comma and quotes survive the round trip')
  t.equal((await server.api('POST', '/devices/register', 'provisioner', { id: C, name: '=HYPERLINK("http://x")' })).status, 200)
  const named = parse(await (await server.api('GET', '/export/devices?q=hyperlink', 'viewer')).text(), { columns: true }) as Array<Record<string, string>>
  t.equal(named[0]?.name, '\'=HYPERLINK("http://x")', 'a name a spreadsheet would run as a formula is defused')
  const filtered = await (await server.api('GET', '/export/devices?format=ndjson&software_version=1.1.0', 'viewer')).text()
  t.same(filtered.trim().split('\n').map(line => (JSON.parse(line) as { id: string }).id), [B], 'NDJSON with the list\'s filters')
  const issues = parse(await (await server.api('GET', '/export/issues?sort=count', 'viewer')).text(), { columns: true }) as Array<Record<string, string>>
  t.same(issues.map(i => [i.count, i.device_count, i.status]), [['2', '1', 'open'], ['1', '1', 'open']], 'the crash issues (one PC in two builds), one line each')
  const faults = parse(await (await server.api('GET', `/export/faults?device=${B}`, 'viewer')).text(), { columns: true }) as Array<Record<string, string>>
  t.same(faults.map(f => [f.device, f.causes]), [[B, 'PRECISERR FORCED']], 'a device\'s faults with their causes')
  t.ok(issues.some(i => i.id === faults[0].issue && i.title.endsWith('(build ffffffffffff)')), 'and their issue')
  t.equal(parse(await (await server.api('GET', '/export/faults', 'viewer')).text(), { columns: true }).length, 3, 'without a device: the fleet\'s')
  const metrics = (await (await server.api('GET', `/export/metrics?device=${A}&format=ndjson&kind=gauge`, 'viewer')).text()).trim().split('\n').map(line => JSON.parse(line) as { key: string })
  t.same(metrics.map(m => m.key), ['battery_mv'], 'metric samples of one device, filtered by kind')
  for (const [path, status] of [
    ['/export/devices?format=xml', 400], ['/export/devices?state=gone', 400], ['/export/issues?sort=name', 400], ['/export/metrics', 400],
    ['/export/metrics?device=nope', 400], ['/export/faults?device=dddddddddddddddd', 404], ['/export/faults?from=yesterday', 400]
  ] as const) {
    const response = await server.api('GET', path, 'viewer')
    t.equal(response.status, status, `GET ${path}`)
    t.type((await response.json() as { error?: unknown }).error, 'string')
  }
  t.equal((await server.api('GET', '/export/devices', null)).status, 401)
})
