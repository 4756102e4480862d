// The crash issues API: faults sent as devices send them, grouped; the list with its filters, sorts and
// cursors; an issue's page, faults and devices; the status set by provisioners and admins but not
// viewers (nor anonymous callers); a resolved issue reopened by a newer version; the fault list with
// its status registers in words; and every bad input answered 400/404 with an error.
import t from 'tap'
import type { CrashIssue } from '../../../plugins/ingest/crash-issues.js'
import type { ChunkPayload, FaultRecord } from '../../../plugins/ingest/wire/payloads.js'
import { encodeChunk } from '../../../plugins/ingest/wire/encoder.js'
import { ROLES, telemetryServer, type TelemetryServer } from './harness.js'

const A = 'a000000000000001'
const B = 'b000000000000002'
const BUILD = 'c0ffee00c0ffee00'
const INVSTATE: FaultRecord = { pc: 0x08000a01, lr: 0x08000123, sp: 0x20001ff0, psr: 0x61000000, cfsr: 1 << 17, hfsr: 1 << 30, mmfar: 0, bfar: 0, uptime_ms: 1000 }
const BUS: FaultRecord = { ...INVSTATE, pc: 0x08000b00, cfsr: 0x8200, hfsr: 0, bfar: 0x40000010 }

interface IssuePage { issue: CrashIssue, versions: Array<{ version: string, count: number }>, devices: Array<{ device: string, count: number }>, occurrences: Array<{ hour: number, count: number }>, faults: Array<{ sequence: number, decoded: { summary: string[], address: unknown } }> }

const info = (version: string): ChunkPayload => ({ type: 'DeviceInfo', record: { serial: 'SN-1', hardware_version: 'evt', software_type: 'main', software_version: version, build_id: BUILD } })

async function send (server: TelemetryServer, device: string, sequence: number, payload: ChunkPayload): Promise<void> {
  const { status, json } = await server.ingest(encodeChunk({ device, sequence, payload }))
  if (status !== 200 || json.accepted !== 1) throw new Error(`chunk ${device}/${sequence} not accepted: ${status} ${JSON.stringify(json)}`)
}

async function json<T> (response: Response, status = 200): Promise<T> {
  if (response.status !== status) throw new Error(`expected ${status}, got ${response.status}: ${await response.text()}`)
  return await response.json() as T
}

t.test('crash issues through the API, with each fleet role', async t => {
  const server = await telemetryServer(t)
  const get = async <T>(path: string, role: typeof ROLES[number] = 'viewer'): Promise<T> => await json<T>(await server.api('GET', path, role))
  // A: DeviceInfo, two INVSTATE faults; B: DeviceInfo, one INVSTATE and one bus fault.
  await send(server, A, 1, info('1.0.0'))
  await send(server, A, 2, { type: 'FaultRecord', record: INVSTATE })
  await send(server, A, 3, { type: 'FaultRecord', record: { ...INVSTATE, uptime_ms: 2000 } })
  await send(server, B, 1, info('1.0.0'))
  await send(server, B, 2, { type: 'FaultRecord', record: INVSTATE })
  await send(server, B, 3, { type: 'FaultRecord', record: BUS })

  for (const role of ROLES) t.equal((await server.api('GET', '/issues', role)).status, 200, `${role} lists the issues`)
  t.equal((await server.api('GET', '/issues', null)).status, 401, 'anonymous: 401')
  const { issues, next_cursor: none } = await get<{ issues: CrashIssue[], next_cursor: string | null }>('/issues')
  t.equal(none, null)
  t.same(issues.map(i => [i.title, i.count, i.device_count, i.status]), [
    ['PRECISERR at 0x08000b00 (build c0ffee00c0ff)', 1, 1, 'open'],
    ['INVSTATE at 0x08000a00 (build c0ffee00c0ff)', 3, 2, 'open']
  ], 'grouped by PC, the latest seen first')
  const [bus, invstate] = issues
  t.same((await get<{ issues: CrashIssue[] }>('/issues?sort=count')).issues.map(i => i.id), [invstate.id, bus.id], 'sorted by count')
  t.same((await get<{ issues: CrashIssue[] }>(`/issues?device=${A}`)).issues.map(i => i.id), [invstate.id], 'filtered by device')
  t.same((await get<{ issues: CrashIssue[] }>('/issues?software_version=1.0.0')).issues.length, 2, 'by version')
  t.same((await get<{ issues: CrashIssue[] }>('/issues?software_version=9.9.9')).issues, [])
  t.same((await get<{ issues: CrashIssue[] }>('/issues?q=preciserr')).issues.map(i => i.id), [bus.id], 'searched in titles')
  const first = await get<{ issues: CrashIssue[], next_cursor: string }>('/issues?limit=1&sort=count')
  const second = await get<{ issues: CrashIssue[], next_cursor: string | null }>(`/issues?limit=1&sort=count&cursor=${first.next_cursor}`)
  t.same([first.issues[0].id, second.issues[0].id, second.next_cursor], [invstate.id, bus.id, null], 'pages by cursor')

  const page = await get<IssuePage>(`/issues/${invstate.id}`)
  t.same(page.versions.map(v => [v.version, v.count]), [['1.0.0', 3]], 'the versions it occurred in')
  t.same(page.devices.map(d => [d.device, d.count]), [[A, 2], [B, 1]], 'the devices it hit most first')
  t.equal(page.occurrences.reduce((sum, h) => sum + h.count, 0), 3, 'the chart\'s hours add up to the count')
  t.equal(page.occurrences.length, 7 * 24 + 1, 'a week of hours by default')
  t.match(page.faults[0].decoded.summary, [/^INVSTATE: invalid state — branch to an address without the Thumb bit/, /^FORCED: /])
  const busPage = await get<IssuePage>(`/issues/${bus.id}`)
  t.same(busPage.faults[0].decoded.address, { register: 'BFAR', value: 0x40000010 }, 'the bus fault\'s address')
  const faults1 = await get<{ faults: Array<{ device: string, sequence: number }>, next_cursor: string }>(`/issues/${invstate.id}/faults?limit=2`)
  const faults2 = await get<{ faults: Array<{ device: string, sequence: number }>, next_cursor: string | null }>(`/issues/${invstate.id}/faults?limit=2&cursor=${faults1.next_cursor}`)
  t.same([faults1.faults.length, faults2.faults.length, faults2.next_cursor], [2, 1, null], 'its faults page by cursor')
  t.same(new Set([...faults1.faults, ...faults2.faults].map(f => `${f.device}/${f.sequence}`)), new Set([`${A}/2`, `${A}/3`, `${B}/2`]))
  t.same((await get<{ devices: Array<{ device: string }> }>(`/issues/${invstate.id}/devices?limit=1`)).devices.map(d => d.device), [A])
  const deviceFaults = await get<{ items: Array<{ issue: string, decoded: { summary: string[] } }> }>(`/devices/${B}/faults`)
  t.same(deviceFaults.items.map(f => f.issue), [invstate.id, bus.id], 'a device\'s faults name their issue')
  t.match(deviceFaults.items[1].decoded.summary, [/^PRECISERR: precise data bus error/])

  // Status: provisioners and admins, not viewers.
  t.equal((await server.api('PATCH', `/issues/${bus.id}`, null, { status: 'ignored' })).status, 401)
  const refused = await server.api('PATCH', `/issues/${bus.id}`, 'viewer', { status: 'ignored' })
  t.equal(refused.status, 403, 'a viewer may not change a status')
  t.match(await refused.json(), { error: /^role viewer may not/ })
  t.equal((await json<CrashIssue>(await server.api('PATCH', `/issues/${bus.id}`, 'admin', { status: 'ignored' }))).status, 'ignored', 'an admin may')
  const resolved = await json<CrashIssue>(await server.api('PATCH', `/issues/${invstate.id}`, 'provisioner', { status: 'resolved' }))
  t.same([resolved.status, resolved.resolved_version, resolved.status_changed_by], ['resolved', '1.0.0', 'provisioner'], 'a provisioner resolves, at the newest version seen')
  t.same((await get<{ issues: CrashIssue[] }>('/issues?status=open')).issues, [], 'nothing open')

  // The same fault from 1.0.0 again: still resolved; from 1.1.0: a regression.
  await send(server, B, 4, { type: 'FaultRecord', record: INVSTATE })
  t.equal((await get<IssuePage>(`/issues/${invstate.id}`)).issue.status, 'resolved', 'the fixed version is not out yet: no regression')
  await send(server, A, 4, info('1.1.0'))
  await send(server, A, 5, { type: 'FaultRecord', record: INVSTATE })
  await send(server, A, 6, { type: 'FaultRecord', record: BUS })
  const regressed = (await get<IssuePage>(`/issues/${invstate.id}`)).issue
  t.same([regressed.status, regressed.regression, regressed.count, regressed.latest_version], ['open', true, 5, '1.1.0'], 'reopened as a regression by 1.1.0')
  t.equal((await get<IssuePage>(`/issues/${bus.id}`)).issue.status, 'ignored', 'an ignored issue stays ignored')

  // Bad input: 400 with an error; unknown: 404.
  for (const [path, status] of [
    ['/issues?sort=name', 400], ['/issues?status=closed', 400], ['/issues?limit=0', 400], ['/issues?cursor=bm9wZQ', 400],
    [`/issues?q=${'x'.repeat(129)}`, 400], ['/issues/NOT-AN-ID', 400], ['/issues/0000000000000000', 404],
    [`/issues/${bus.id}?from=2026-01-02&to=2026-01-01`, 400], [`/issues/${bus.id}?from=2025-01-01&to=2026-01-01`, 400],
    [`/issues/${bus.id}/faults?cursor=WzEsIngiLDJd`, 400], ['/issues/0000000000000000/devices', 404]
  ] as const) {
    const response = await server.api('GET', path, 'viewer')
    t.equal(response.status, status, `GET ${path.slice(0, 60)}`)
    t.type((await response.json() as { error?: unknown }).error, 'string', 'with an error')
  }
  for (const body of [{ status: 'closed' }, { status: 'OPEN' }, {}]) t.equal((await server.api('PATCH', `/issues/${bus.id}`, 'admin', body)).status, 400, `PATCH ${JSON.stringify(body)}`)
  t.equal((await server.api('PATCH', '/issues/0000000000000000', 'admin', { status: 'open' })).status, 404)
})
