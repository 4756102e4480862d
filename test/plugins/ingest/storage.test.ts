// The ingest plugin's storage contract, the same scenarios on LMDB and on PostgreSQL: ingest reads and
// writes, the idempotency marks, series ranges and cursors, device changes, retention (PostgreSQL: whole
// metrics partitions dropped), groups, OTA targets, ELF records, pending faults; and on PostgreSQL the
// faults two nodes can meet (migrations applied by two nodes at once, the same chunk stored by two at
// once), a request's reads staying index lookups as the tables grow, and events told only to nodes that listen.
import t, { type Test } from 'tap'
import pg from 'pg'
import { chunkDigest, markWith } from '../../../plugins/ingest/chunk-marks.js'
import { newDevice } from '../../../plugins/ingest/apply.js'
import { pcIssue } from '../../../plugins/ingest/crash-issues.js'
import type { TelemetryEvent } from '../../../plugins/ingest/apply.js'
import { seenKey } from '../../../plugins/ingest/store.js'
import { emptyWrites, type IndexedMetric, type IngestWrites, type StoredFault, type TelemetryStorage } from '../../../plugins/ingest/storage/contract.js'
import { PostgresStorage } from '../../../plugins/ingest/storage/postgres.js'
import { pollUntil } from '../../support/poll.js'
import { requirePostgres } from '../../support/postgres.js'
import { STORAGE_BACKENDS } from './storages.js'

const DEVICE = '00000000000000a1'
const OTHER = '00000000000000b2'
const DAY = 86_400_000


/** A PostgreSQL storage on `url`, opened (migrated), closed when the test ends. */
async function openedPostgres (t: Test, url: string): Promise<PostgresStorage> {
  const storage = new PostgresStorage(url)
  t.teardown(async () => { await storage.close() })
  await storage.open()
  return storage
}

/** A connection of the test's own to the telemetry schema, closed when the test ends. */
async function sqlClient (t: Test, url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url, options: '-c search_path=ingest' })
  await client.connect()
  t.teardown(async () => { await client.end() })
  return client
}

/** Two nodes on one fresh database, opened at once. */
async function twoNodes (t: Test): Promise<[PostgresStorage, PostgresStorage] | undefined> {
  const url = await requirePostgres(t)
  if (url === undefined) return undefined
  const nodes: [PostgresStorage, PostgresStorage] = [new PostgresStorage(url), new PostgresStorage(url)]
  t.teardown(async () => { await Promise.all(nodes.map(async node => { await node.close() })) })
  await Promise.all(nodes.map(async node => await node.open()))
  return nodes
}

function fault (device: string, at: number, sequence: number, buildId: string | null = 'b1'): StoredFault {
  return { device, sequence, received_at: at, pc: 0x1000 + sequence, lr: 0x2000, sp: 0x3000, psr: 0, cfsr: 0, hfsr: 0, mmfar: 0, bfar: 0, uptime_ms: 5, stack: '', software_version: '1.0', build_id: buildId, symbol: null, backtrace: [], issue: null }
}

/** Writes of one accepted chunk of content `content` at `at`, as the ingestor builds them. */
async function storeChunk (storage: TelemetryStorage, device: string, sequence: number, content: number, at: number, extra: Partial<IngestWrites> = {}): Promise<'accepted' | 'duplicate'> {
  return await storage.ingest([device], async session => {
    const reads = await session.read([device], [[device, sequence]], [])
    const digest = chunkDigest(1, 0, Uint8Array.of(content))
    const mark = reads.marks.get(seenKey(device, sequence))
    if (mark !== undefined && typeof mark !== 'number' && Buffer.from(mark.digests).includes(Buffer.from(digest))) return 'duplicate'
    const record = reads.devices.get(device) ?? newDevice(device, at)
    await session.write({ ...emptyWrites(), ...extra, devices: [{ ...record, last_seen: at }], marks: [{ device, sequence, mark: markWith(mark, digest, at), digest }] })
    return 'accepted'
  })
}

async function all<T> (items: AsyncIterable<T>): Promise<T[]> {
  const list: T[] = []
  for await (const item of items) list.push(item)
  return list
}

for (const [backend, open] of STORAGE_BACKENDS) {
  t.test(`${backend}: ingest reads and writes, idempotency marks, series in key order`, async t => {
    const storage = await open(t)
    if (storage === undefined) return
    const now = Date.now()
    t.equal(await storeChunk(storage, DEVICE, 1, 7, now, {
      faults: [fault(DEVICE, now, 1)],
      metrics: [0, 1, 2].map(index => ({ metric: { device: DEVICE, sequence: 1, received_at: now, key: `k${index}`, kind: 'gauge' as const, value: index + 0.5, uptime_ms: 9 }, index })),
      reboots: [{ device: DEVICE, sequence: 1, received_at: now, reason: 'watchdog', boot_count: 3, pc: 1, lr: 2 }],
      traces: [{ device: DEVICE, sequence: 1, received_at: now, uptime_ms: 4, dropped: 0, text: 'hello' }]
    }), 'accepted')
    t.equal(await storeChunk(storage, DEVICE, 1, 7, now + 5), 'duplicate', 'the same content again is a duplicate')
    t.equal(await storeChunk(storage, DEVICE, 1, 8, now + 6), 'accepted', 'other content under the same sequence is stored')
    t.equal(await storage.chunkCount(), 1, 'one (device, sequence) remembered')
    const reads = await storage.ingest([DEVICE], async session => await session.read([DEVICE, OTHER], [[DEVICE, 1], [DEVICE, 2]], []))
    const mark = reads.marks.get(seenKey(DEVICE, 1))
    t.equal(typeof mark === 'object' ? mark.digests.length : 0, 16, 'the mark holds both contents')
    t.equal(typeof mark === 'object' ? mark.at : 0, now + 6, 'and the latest time')
    t.equal(reads.devices.get(DEVICE)?.last_seen, now + 6, 'the device record was written')
    t.notOk(reads.devices.has(OTHER), 'an unknown device reads as absent')

    const metrics = await all(storage.series('metrics', [DEVICE, 0], Number.MAX_SAFE_INTEGER))
    t.same(metrics.map(m => m.key), [0, 1, 2].map(i => [DEVICE, now, 1, i]), 'metric keys in order')
    t.same(metrics[1].value, { device: DEVICE, sequence: 1, received_at: now, key: 'k1', kind: 'gauge', value: 1.5, uptime_ms: 9 })
    const after = await all(storage.series('metrics', metrics[0].key, Number.MAX_SAFE_INTEGER, true))
    t.equal(after.length, 2, 'a cursor starts past its key')
    const stored = { ...fault(DEVICE, now, 1), issue: pcIssue(fault(DEVICE, now, 1)).id }
    t.same((await all(storage.series('faults', [DEVICE, 0], now + 1))).map(f => f.value), [stored], 'stored with its crash issue')
    t.same(await all(storage.series('faults', [DEVICE, 0], now)), [], 'the end is exclusive')
    t.same((await all(storage.series('faults', [DEVICE], now + 1))).map(f => f.value), [stored], 'a start of the device alone takes all its keys')
    t.same((await all(storage.series('reboots', [DEVICE, now], now + 1))).map(r => r.value.reason), ['watchdog'])
    t.same((await all(storage.series('traces', [DEVICE, now], now + 1))).map(r => r.value.text), ['hello'])
    t.same((await all(storage.faultsSince(now))).length, 1)
    t.same(await storage.pendingBuilds(), ['b1'])
    const pending = await storage.pendingFaults('b1', undefined, 10)
    t.same(pending, [['b1', DEVICE, now, 1]])
    t.ok(await storage.isPending(pending[0]))
    t.same((await storage.setSymbols([{ key: pending[0], symbol: 'main at main.c:3', final: true }])).symbols, ['main at main.c:3'])
    t.notOk(await storage.isPending(pending[0]), 'a final symbol is no longer pending')
    t.equal((await storage.fault([DEVICE, now, 1]))?.symbol, 'main at main.c:3')
  })

  t.test(`${backend}: devices, groups, OTA targets, ELF records`, async t => {
    const storage = await open(t)
    if (storage === undefined) return
    const ids = Array.from({ length: 7 }, (_, i) => `00000000000000${(0xf0 - i * 16).toString(16)}`)
    for (const id of ids) await storage.changeDevice(id, () => ({ device: newDevice(id, 1, { registered: true }), key: Uint8Array.of(1, 2, 3) }))
    t.same((await all(storage.devices())).map(d => d.id), [...ids].sort(), 'devices in id order')
    t.same((await all(storage.devices(ids[3]))).map(d => d.id), [...ids].sort().filter(id => id > ids[3]), 'after a key')
    const reads = await storage.ingest([ids[0]], async session => await session.read([ids[0]], [], []))
    t.notOk(reads.keys.has(ids[0]), 'a key is read only when asked for')
    await storage.changeDevice(ids[0], current => current === undefined ? undefined : { device: { ...current, group: 'lab', encrypted: true } })
    t.equal((await storage.device(ids[0]))?.group, 'lab')
    t.equal(await storage.groupMembers('lab'), 1)
    t.same((await storage.ingest([ids[0]], async session => await session.read([ids[0]], [], [ids[0]]))).keys.get(ids[0]), Uint8Array.of(1, 2, 3), 'the key of a device that sent sealed frames')
    const marked = await storage.markOffline([ids[0], ids[1]], d => d.id === ids[1])
    t.same(marked.map(d => [d.id, d.offline]), [[ids[1], true]], 'only those still silent are marked')
    t.ok(await storage.deleteDevice(ids[0]))
    t.notOk(await storage.deleteDevice(ids[0]), 'a device deleted twice')
    t.equal(await storage.device(ids[0]), undefined)

    t.ok(await storage.createGroup({ name: 'lab', description: 'a', created_at: 1, updated_at: 1 }))
    t.notOk(await storage.createGroup({ name: 'lab', description: 'b', created_at: 2, updated_at: 2 }), 'a group is created once')
    await storage.putGroup({ name: 'lab', description: 'c', created_at: 1, updated_at: 3 })
    t.same(await storage.group('lab'), { name: 'lab', description: 'c', created_at: 1, updated_at: 3 })
    t.same((await all(storage.groups())).map(g => g.name), ['lab'])
    await storage.removeGroup('lab')
    t.equal(await storage.group('lab'), undefined)

    const target = { id: 'ota-1', group: null, software_type: 'main', version: '2.0', build_id: null, url: 'https://example.test/fw', created_at: 5 }
    await storage.putOtaTarget(target)
    t.same(await storage.otaTarget('ota-1'), target)
    t.same(await all(storage.otaTargets()), [target])
    await storage.removeOtaTarget('ota-1')
    t.same(await all(storage.otaTargets()), [])

    const elf = { build_id: 'abc', software_type: null, software_version: '1.0', size: 10, file: 'abc.elf', uploaded_at: 6 }
    await storage.putElf({ record: elf, version: 'main@1.0' })
    t.same(await storage.elf('abc'), elf)
    t.same(await storage.elves(), [elf])
  })

  t.test(`${backend}: the fleet-wide reads of the scheduled work: silent devices, each device's latest metric, faults counted`, async t => {
    const storage = await open(t)
    if (storage === undefined) return
    const now = Date.now()
    const [a, b, c, d] = ['00000000000000c1', '00000000000000c2', '00000000000000c3', '00000000000000c4']
    const metric = (device: string, sequence: number, at: number, key: string, value: number, index = 0): IndexedMetric =>
      ({ metric: { device, sequence, received_at: at, key, kind: 'gauge', value, uptime_ms: 1 }, index })
    await storeChunk(storage, a, 1, 1, now - 2 * 3_600_000, { metrics: [metric(a, 1, now - 2 * 3_600_000, 'battery_mv', 3000)] })
    await storeChunk(storage, a, 2, 2, now - 600_000, { metrics: [metric(a, 2, now - 600_000, 'battery_mv', 3400), metric(a, 2, now - 600_000, 'battery_mv', 3450, 1), metric(a, 2, now - 600_000, 'rssi', -70, 2)] })
    await storeChunk(storage, b, 1, 3, now - 300_000, { metrics: [metric(b, 1, now - 300_000, 'battery_mv', 3200)], faults: [fault(b, now - 300_000, 1)] })
    await storeChunk(storage, c, 1, 4, now - 3 * 3_600_000, { metrics: [metric(c, 1, now - 3 * 3_600_000, 'battery_mv', 2900)], faults: [fault(c, now - 3 * 3_600_000, 2)] })
    await storeChunk(storage, d, 1, 5, now, { metrics: [metric(d, 1, now, 'battery_mv', 3100)] })
    await storage.changeDevice(b, current => current === undefined ? undefined : { device: { ...current, group: 'lab' } })

    t.same(await storage.silentDevices(now - 3_600_000), [a, c].filter(id => id !== a), 'only the device silent for an hour (c); a came back 10 minutes ago')
    t.same(await storage.silentDevices(now - 60_000), [a, b, c], 'in id order; the device seen now is not silent')
    await storage.markOffline([c], () => true)
    t.same(await storage.silentDevices(now - 60_000), [a, b], 'a device marked offline is not listed again')

    const latest = await storage.latestMetrics('battery_mv', now - 3_600_000, now, null)
    t.same([...latest].sort(), [[a, 3450], [b, 3200]], 'each device\'s latest value of the key in the range: the last entry of the latest chunk; older and later ones left out')
    t.same([...await storage.latestMetrics('battery_mv', now - 3_600_000, now + 1, 'lab')], [[b, 3200]], 'a group\'s devices only')
    t.same([...await storage.latestMetrics('rssi', now - 3_600_000, now + 1, null)], [[a, -70]], 'another key')
    t.equal((await storage.latestMetrics('battery_mv', now + 1, now + 2, null)).size, 0, 'nothing in an empty range')

    t.equal(await storage.faultCount(now - 3_600_000, null), 1, 'faults of the last hour')
    t.equal(await storage.faultCount(now - 4 * 3_600_000, null), 2)
    t.equal(await storage.faultCount(now - 4 * 3_600_000, pcIssue(fault(b, now, 1)).id), 1, 'of one crash issue')
    t.equal(await storage.faultCount(now - 4 * 3_600_000, 'no-such-issue'), 0)
  })

  t.test(`${backend}: retention deletes series and marks before the cutoff, whatever their day`, async t => {
    const storage = await open(t)
    if (storage === undefined) return
    const now = Date.now()
    const days = [40, 10, 0].map(n => now - n * DAY)
    for (const [i, at] of days.entries()) {
      await storeChunk(storage, DEVICE, i, i, at, {
        faults: [fault(DEVICE, at, i)],
        metrics: [{ metric: { device: DEVICE, sequence: i, received_at: at, key: 'k', kind: 'gauge', value: i, uptime_ms: 1 }, index: 0 }]
      })
    }
    t.equal(await storage.deleteBefore(now - 30 * DAY), 2, 'the fault and the metric of 40 days ago')
    t.same((await all(storage.series('metrics', [DEVICE, 0], Number.MAX_SAFE_INTEGER))).map(m => m.value.sequence), [1, 2])
    t.equal(await storage.chunkCount(), 2, 'the old mark went too')
    t.equal(await storage.deleteBefore(now - 5 * DAY), 2)
    t.same((await all(storage.series('faults', [DEVICE, 0], Number.MAX_SAFE_INTEGER))).map(m => m.value.sequence), [2])
  })
}

t.test('postgres: two nodes starting at once migrate once; the same chunk stored by two nodes at once is stored once', async t => {
  const nodes = await twoNodes(t)
  if (nodes === undefined) return
  t.same(await nodes[0].migrate(), [], 'nothing left to apply')
  const now = Date.now()
  const outcomes = await Promise.all(nodes.map(async node => await storeChunk(node, DEVICE, 9, 1, now, { faults: [fault(DEVICE, now, 9)] }).catch((err: Error) => err.message)))
  t.same(outcomes.sort(), ['accepted', 'duplicate'], 'one node stored it, the other found a duplicate')
  t.equal((await all(nodes[1].series('faults', [DEVICE, 0], Number.MAX_SAFE_INTEGER))).length, 1, 'one fault stored')
})

t.test('postgres: a scheduled job runs on one node of those sharing the database, once per half period at most', async t => {
  const nodes = await twoNodes(t)
  if (nodes === undefined) return
  let runs = 0
  let release = (): void => {}
  let began = (): void => {}
  const held = new Promise<void>(resolve => { release = resolve })
  const running = new Promise<void>(resolve => { began = resolve })
  const first = nodes[0].scheduled('retention', 60_000, async () => {
    runs++
    began()
    await held
  })
  await running
  // The first node holds the job while it runs: the second leaves it.
  t.equal(await nodes[1].scheduled('retention', 60_000, async () => { runs++ }), false, 'left to the node running it')
  release()
  t.equal(await first, true)
  t.equal(await nodes[1].scheduled('retention', 60_000, async () => { runs++ }), false, 'ran less than half a period ago')
  t.equal(await nodes[1].scheduled('retention', 0, async () => { runs++ }), true, 'due again')
  t.equal(runs, 2)
})

t.test('lmdb: a scheduled job always runs (one node)', async t => {
  const storage = await STORAGE_BACKENDS[0][1](t) as TelemetryStorage
  let runs = 0
  t.equal(await storage.scheduled('retention', 60_000, async () => { runs++ }), true)
  t.equal(await storage.scheduled('retention', 60_000, async () => { runs++ }), true)
  t.equal(runs, 2)
})

t.test('postgres: the primary key of the marks refuses a content stored meanwhile outside the device\'s turn: 503, nothing stored', async t => {
  const url = await requirePostgres(t)
  if (url === undefined) return
  const storage = await openedPostgres(t, url)
  const other = await sqlClient(t, url)
  const now = Date.now()
  const digest = chunkDigest(1, 0, Uint8Array.of(5))
  const attempt = storage.ingest([DEVICE], async session => {
    const reads = await session.read([DEVICE], [[DEVICE, 4]], [])
    t.notOk(reads.marks.has(seenKey(DEVICE, 4)), 'no mark when read')
    // Written by a writer that does not take turns, between this request's read and its write.
    await other.query('insert into chunk_marks (device, sequence, digest, at) values ($1, 4, $2, $3)', [DEVICE, Buffer.from(digest), now])
    await session.write({ ...emptyWrites(), faults: [fault(DEVICE, now, 4)], marks: [{ device: DEVICE, sequence: 4, mark: markWith(undefined, digest, now), digest }] })
  })
  await t.rejects(attempt, { statusCode: 503, code: 'BERTH_INGEST_STORAGE_UNAVAILABLE' })
  t.same(await all(storage.series('faults', [DEVICE, 0], Number.MAX_SAFE_INTEGER)), [], 'the request stored nothing')
})

t.test('postgres: a request reads devices, keys and marks by their indexes, whatever the tables held when its plans were made', async t => {
  const url = await requirePostgres(t)
  if (url === undefined) return
  await openedPostgres(t, url)
  const client = await sqlClient(t, url)
  const request = JSON.stringify({ lock: [DEVICE], devices: [DEVICE], keys: [DEVICE], pairs: [{ d: DEVICE, s: 4 }] })
  /** One read as a request makes it, with the scans it made of each table (this transaction's statistics). */
  const read = async (): Promise<Array<{ relname: string, seq_scan: number, idx_scan: number }>> => {
    await client.query('begin')
    try {
      await client.query('select read_request($1::jsonb)', [request])
      return (await client.query(`select relname, seq_scan::int, idx_scan::int from pg_stat_xact_user_tables
        where relname in ('devices', 'device_keys', 'chunk_marks') order by relname`)).rows
    } finally {
      await client.query('commit')
    }
  }
  // A session keeps a statement's generic plan after its fifth call: these are made while the tables are empty.
  for (let call = 0; call < 8; call++) await read()
  // Filled by another session, whose scans are not counted in this one's statistics.
  const filler = await sqlClient(t, url)
  await filler.query(`insert into devices (id, name, registered, encrypted, created_at, offline)
    select lpad(to_hex(n), 16, '0'), 'd', true, false, 0, false from generate_series(1, 20000) n`)
  await filler.query(`insert into chunk_marks (device, sequence, digest, at)
    select lpad(to_hex(n % 20000), 16, '0'), n, decode(md5(n::text), 'hex'), 0 from generate_series(1, 60000) n`)
  await filler.query(`insert into device_keys (device, key) select id, '\\x00' from devices`)
  for (const { relname, seq_scan: scans, idx_scan: lookups } of await read()) {
    t.equal(scans, 0, `${relname}: not read whole`)
    t.ok(lookups >= 1, `${relname}: looked up by its index`)
  }
})

t.test('postgres: a request that stores faults finds them by their key when it counts them into their issues, whatever the table held when its plans were made', async t => {
  const url = await requirePostgres(t)
  if (url === undefined) return
  await openedPostgres(t, url)
  const client = await sqlClient(t, url)
  const request = JSON.stringify({ faults: [{ device: DEVICE, received_at: 1, sequence: 1, issue: 'pc-1' }] })
  /** One count as a request makes it, with the scans it made of the faults table (this transaction's statistics). */
  const apply = async (): Promise<{ seq_scan: number, idx_scan: number }> => {
    await client.query('begin')
    try {
      await client.query('select apply_issues($1::jsonb)', [request])
      return (await client.query("select seq_scan::int, idx_scan::int from pg_stat_xact_user_tables where relname = 'faults'")).rows[0]
    } finally {
      await client.query('rollback')
    }
  }
  // A session keeps a statement's generic plan after its fifth call: these are made while the table is empty.
  for (let call = 0; call < 8; call++) await apply()
  const filler = await sqlClient(t, url)
  await filler.query(`insert into faults (device, received_at, sequence, pc, lr, sp, psr, cfsr, hfsr, mmfar, bfar, uptime_ms)
    select lpad(to_hex(n % 2000), 16, '0'), n, n, 0, 0, 0, 0, 0, 0, 0, 0, 0 from generate_series(1, 20000) n`)
  const { seq_scan: scans, idx_scan: lookups } = await apply()
  t.equal(scans, 0, 'faults: not read whole')
  t.ok(lookups >= 1, 'faults: looked up by its key')
})

t.test('postgres: a node alone tells nobody its events; nodes that share the database tell each other from the start', async t => {
  const url = await requirePostgres(t)
  if (url === undefined) return
  const watcher = new pg.Client({ connectionString: url })
  await watcher.connect()
  t.teardown(async () => { await watcher.end() })
  const payloads: string[] = []
  watcher.on('notification', ({ payload }) => { if (payload !== undefined) payloads.push(payload) })
  await watcher.query('listen berth_ingest_events')
  const node = async (heard: TelemetryEvent[]): Promise<PostgresStorage> => {
    const storage = await openedPostgres(t, url)
    await storage.listen(events => { heard.push(...events) })
    return storage
  }
  const elf = (id: string): TelemetryEvent => ({ kind: 'elf', build_id: id, at: 1 })
  const heardByA: TelemetryEvent[] = []
  const a = await node(heardByA)
  await a.announce([elf('alone')])
  // Notifications arrive in commit order: one sent after the announcement comes after anything it sent.
  await watcher.query("select pg_notify('berth_ingest_events', 'marker')")
  await pollUntil(() => payloads.includes('marker'), { what: 'the marker' })
  t.notOk(payloads.some(payload => payload.includes('"alone"')), 'a node alone sends no events')
  const heardByB: TelemetryEvent[] = []
  const b = await node(heardByB)
  await b.announce([elf('from-b')])
  await pollUntil(() => heardByA.some(event => event.kind === 'elf' && event.build_id === 'from-b'), { what: 'A hearing B' })
  t.pass('a node that starts beside another tells it its events at once')
  let attempt = 0
  await pollUntil(async () => {
    await a.announce([elf(`from-a-${++attempt}`)])
    return heardByB.some(event => event.kind === 'elf' && event.build_id.startsWith('from-a-'))
  }, { what: 'B hearing A' })
  t.pass('and the node that was alone tells the newcomer once it greeted')
})
