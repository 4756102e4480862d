// What the dashboard reads: the devices list's filters (group, firmware, state, search) with cursor
// pagination and its refusals, groups and OTA targets by pages, a metric downsampled into buckets for
// a chart, and the fleet overview.
import t from 'tap'
import { encodeChunk } from '../../../plugins/ingest/wire/encoder.js'
import type { ChunkPayload } from '../../../plugins/ingest/wire/payloads.js'
import { telemetryServer } from './harness.js'

const id = (n: number): string => `d${n.toString(16).padStart(15, '0')}`
const info = (n: number, version: string): ChunkPayload => ({ type: 'DeviceInfo', record: { serial: `SN-${n}`, hardware_version: 'evt-2', software_type: 'main', software_version: version, build_id: '' } })

t.test('the devices list filters and pages; bad cursors and filters are 400s', async t => {
  const server = await telemetryServer(t)
  const body = Buffer.concat(Array.from({ length: 12 }, (_, n) => encodeChunk({ device: id(n), sequence: 1, payload: info(n, n < 4 ? '2.0.0' : '1.9.0') })))
  t.equal((await server.ingest(body)).json.accepted, 12)
  t.equal((await server.api('POST', '/devices/register', 'provisioner', { id: id(20), name: 'Pump house' })).status, 201)
  t.equal((await server.api('POST', '/groups', 'provisioner', { name: 'north' })).status, 201)
  for (const n of [1, 2, 5]) t.equal((await server.api('POST', '/devices/register', 'provisioner', { id: id(n), group: 'north' })).status, 200)
  const list = async (query: string): Promise<{ devices: Array<{ id: string }>, next_cursor: string | null }> => {
    const response = await server.api('GET', `/devices?${query}`, 'viewer')
    t.equal(response.status, 200, query)
    return await response.json() as { devices: Array<{ id: string }>, next_cursor: string | null }
  }
  t.same((await list('software_version=2.0.0')).devices.map(d => d.id), [0, 1, 2, 3].map(id), 'by firmware version')
  t.same((await list('group=north&software_version=1.9.0')).devices.map(d => d.id), [id(5)], 'filters combine')
  t.same((await list('state=online')).devices.length, 12, 'online: seen and not marked offline')
  t.same((await list('state=offline')).devices.length, 0)
  t.same((await list('state=never_seen')).devices.map(d => d.id), [id(20)], 'registered, no chunk yet')
  t.same((await list('q=PUMP')).devices.map(d => d.id), [id(20)], 'search by name, any case')
  t.same((await list('q=sn-11')).devices.map(d => d.id), [id(11)], 'search by serial')
  const pages: string[][] = []
  let cursor = ''
  for (;;) {
    const page = await list(`software_version=1.9.0&limit=3${cursor === '' ? '' : `&cursor=${cursor}`}`)
    pages.push(page.devices.map(d => d.id))
    if (page.next_cursor === null) break
    cursor = page.next_cursor
  }
  t.same(pages, [[4, 5, 6], [7, 8, 9], [10, 11]].map(p => p.map(id)), 'cursor pages over a filter, none lost or repeated')
  for (const [query, error] of [
    ['cursor=not-a-device', 'cursor is not one this server issued (a device id from next_cursor)'],
    ['state=sleeping', 'state must be online, offline or never_seen, got "sleeping"'],
    ['limit=0', 'limit must be an integer from 1 to 1000, got "0"'],
    ['q=a&q=b', 'invalid querystring: q is given more than once']
  ]) {
    const response = await server.api('GET', `/devices?${query}`, 'viewer')
    t.same([response.status, await response.json()], [400, { error, code: 'BERTH_BAD_REQUEST' }], query)
  }
})

t.test('groups and OTA targets page with limit and cursor as devices do; bad cursors are 400s', async t => {
  const server = await telemetryServer(t)
  for (let n = 0; n < 7; n++) t.equal((await server.api('POST', '/groups', 'provisioner', { name: `g${n}` })).status, 201)
  const ids: string[] = []
  for (let n = 0; n < 5; n++) ids.push((await (await server.api('POST', '/ota/targets', 'provisioner', { software_type: 'main', version: `1.${n}` })).json() as { id: string }).id)
  const pages = async (path: string, field: string, key: string, limit: number): Promise<string[][]> => {
    const found: string[][] = []
    let cursor: string | null = null
    do {
      const response = await server.api('GET', `${path}?limit=${limit}${cursor === null ? '' : `&cursor=${cursor}`}`, 'viewer')
      t.equal(response.status, 200)
      const page = await response.json() as Record<string, unknown> & { next_cursor: string | null }
      found.push((page[field] as Array<Record<string, string>>).map(item => item[key]))
      cursor = page.next_cursor
    } while (cursor !== null)
    return found
  }
  t.same(await pages('/groups', 'groups', 'name', 3), [['g0', 'g1', 'g2'], ['g3', 'g4', 'g5'], ['g6']], 'groups in name order, none lost or repeated')
  t.same(await pages('/ota/targets', 'targets', 'id', 2), [ids.sort().slice(0, 2), ids.slice(2, 4), ids.slice(4)], 'targets in id order')
  t.match(await (await server.api('GET', '/groups', 'viewer')).json(), { groups: { length: 7 }, next_cursor: null }, 'a page of 100 by default')
  for (const [path, error] of [
    ['/groups?cursor=north%20pole', 'cursor is not one this server issued (a group name from next_cursor)'],
    ['/ota/targets?cursor=1.0', 'cursor is not one this server issued (an OTA target id from next_cursor)'],
    ['/groups?limit=1001', 'limit must be an integer from 1 to 1000, got "1001"']
  ]) {
    const response = await server.api('GET', path, 'viewer')
    t.same([response.status, await response.json()], [400, { error, code: 'BERTH_BAD_REQUEST' }], path)
  }
})

t.test('a metric over a time range, downsampled into buckets for a chart', async t => {
  const server = await telemetryServer(t)
  const device = id(1)
  // Recent, so within retention (which also runs as the server starts): from 160 to 61 minutes ago.
  const start = Date.now() - 160 * 60_000
  // 100 chunks, one per minute, each with battery_mv = 3000 + minute and a second key.
  for (let minute = 0; minute < 100; minute++) {
    const payload: ChunkPayload = { type: 'Metrics', record: { uptime_ms: minute, entries: [{ key: 'battery_mv', kind: 'gauge', value: 3000 + minute, uptime_ms: minute }, { key: 'rssi', kind: 'gauge', value: -60, uptime_ms: minute }] } }
    const outcome = await server.service.telemetry.ingestor.ingest(encodeChunk({ device, sequence: minute, payload }), start + minute * 60_000)
    t.equal(outcome.summary.accepted, 1)
  }
  const points = async (query: string): Promise<{ status: number, body: { bucket_ms: number, points: Array<{ t: number, min: number, max: number, avg: number, count: number }>, error?: string } }> => {
    const response = await server.api('GET', `/devices/${device}/metrics/points?${query}`, 'viewer')
    return { status: response.status, body: await response.json() as never }
  }
  const ten = await points(`key=battery_mv&from=${start}&to=${start + 100 * 60_000 - 1}&points=10`)
  t.equal(ten.status, 200)
  t.equal(ten.body.bucket_ms, 600_000, 'ten buckets of ten minutes')
  t.same(ten.body.points.map(p => [p.min, p.max, p.avg, p.count]), Array.from({ length: 10 }, (_, b) => [3000 + 10 * b, 3009 + 10 * b, 3004.5 + 10 * b, 10]))
  const all = await points(`key=battery_mv&to=${start + 100 * 60_000}&points=1000`)
  t.equal(all.body.points.length, 100, 'more buckets than samples: one point per sample, from the first sample on')
  t.same((await points(`key=rssi&from=${start + 50 * 60_000}&to=${start + 60 * 60_000 - 1}&points=1`)).body.points, [{ t: start + 50 * 60_000, min: -60, max: -60, avg: -60, count: 10 }], 'a range is a range')
  for (const [query, error] of [
    ['points=5', 'key is required (the metric\'s name)'],
    ['key=battery_mv&points=5000', 'points must be an integer from 1 to 1000, got "5000"'],
    [`key=battery_mv&from=${start + 1}&to=${start}`, 'from must not be after to']
  ]) t.same(await points(query), { status: 400, body: { error, code: 'BERTH_BAD_REQUEST' } }, query)
})

t.test('the fleet overview counts devices, the last day\'s faults by function, and firmware versions', async t => {
  const server = await telemetryServer(t)
  const fault = (pc: number): ChunkPayload => ({ type: 'FaultRecord', record: { pc, lr: 0, sp: 0, psr: 0, cfsr: 0, hfsr: 0, mmfar: 0, bfar: 0, uptime_ms: 1 } })
  const body = Buffer.concat([
    encodeChunk({ device: id(1), sequence: 1, payload: info(1, '2.0.0') }),
    encodeChunk({ device: id(2), sequence: 1, payload: info(2, '2.0.0') }),
    encodeChunk({ device: id(3), sequence: 1, payload: info(3, '1.9.0') }),
    encodeChunk({ device: id(1), sequence: 2, payload: fault(0x0800abcd) }),
    encodeChunk({ device: id(2), sequence: 2, payload: fault(0x0800abcd) }),
    encodeChunk({ device: id(3), sequence: 2, payload: fault(0x08001000) })
  ])
  t.equal((await server.ingest(body)).json.accepted, 6)
  t.equal((await server.api('POST', '/devices/register', 'provisioner', { id: id(9) })).status, 201)
  const response = await server.api('GET', '/fleet/overview', 'viewer')
  t.equal(response.status, 200)
  t.match(await response.json(), {
    devices: { total: 4, online: 3, offline: 0, never_seen: 1 },
    faults_24h: 3,
    top_functions: [{ function: 'unsymbolicated 0x0800abcc', faults: 2 }, { function: 'unsymbolicated 0x08001000', faults: 1 }],
    software_versions: [{ software_type: 'main', software_version: '2.0.0', devices: 2 }, { software_version: '1.9.0', devices: 1 }, { software_version: null, devices: 1 }]
  })
  t.equal((await server.api('GET', '/fleet/overview', null)).status, 401, 'not without signing in')
})

t.test('who is signed in, and no browser credentials dialog for scripts that ask', async t => {
  const server = await telemetryServer(t)
  t.same(await (await server.api('GET', '/auth/me', 'provisioner')).json(), { name: 'provisioner', role: 'provisioner' })
  const plain = await server.api('GET', '/auth/me', null)
  t.same([plain.status, plain.headers.get('www-authenticate')], [401, 'Basic realm="berth telemetry", charset="UTF-8"'])
  const scripted = await server.api('GET', '/auth/me', null, undefined, { 'x-requested-with': 'XMLHttpRequest' })
  t.same([scripted.status, scripted.headers.get('www-authenticate')], [401, null], 'X-Requested-With: the 401 carries no challenge')
})

t.test('an OTA target is replaced whole by a provisioner; unknown ids and groups are refused', async t => {
  const server = await telemetryServer(t)
  const created = await (await server.api('POST', '/ota/targets', 'provisioner', { software_type: 'main', version: '1.0.0', url: 'https://fw.example/1.0.0.bin' })).json() as { id: string }
  const put = await server.api('PUT', `/ota/targets/${created.id}`, 'provisioner', { software_type: 'main', version: '1.0.1' })
  t.match([put.status, await put.json()], [200, { id: created.id, version: '1.0.1', url: null }])
  t.equal((await server.api('PUT', `/ota/targets/${created.id}`, 'viewer', { software_type: 'main', version: '9' })).status, 403)
  const unknown = '00000000-0000-4000-8000-000000000000'
  t.same(await (await server.api('PUT', `/ota/targets/${unknown}`, 'provisioner', { software_type: 'main', version: '9' })).json(), { error: `OTA target ${unknown} does not exist`, code: 'BERTH_NOT_FOUND' })
  const badGroup = await server.api('PUT', `/ota/targets/${created.id}`, 'provisioner', { software_type: 'main', version: '9', group: 'ghost' })
  t.same([badGroup.status, await badGroup.json()], [400, { error: 'group "ghost" does not exist', code: 'BERTH_BAD_REQUEST' }])
})
