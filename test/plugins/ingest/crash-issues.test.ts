// Crash issues in the ingest storage, the same scenarios on LMDB and on PostgreSQL: faults grouped by
// PC within a build, counts that add up when many devices store faults at once, a symbolicated fault
// moved into its function's issue (the PC issue emptied and gone, later faults at that PC joining the
// function's issue at once), resolution and regression by version, and faults stored before crash
// issues existed counted at the next start. The status registers in words are checked too.
import t from 'tap'
import { Store } from '../../../kernel/store.js'
import { chunkDigest, markWith } from '../../../plugins/ingest/chunk-marks.js'
import { newDevice } from '../../../plugins/ingest/apply.js'
import { compareVersions, pcIssue, withStatus, type IssueEvent } from '../../../plugins/ingest/crash-issues.js'
import { decodeFault } from '../../../plugins/ingest/fault-status.js'
import { TelemetryStore, seenKey } from '../../../plugins/ingest/store.js'
import { emptyWrites, pendingKey, type StoredFault, type TelemetryStorage } from '../../../plugins/ingest/storage/contract.js'
import { LmdbStorage } from '../../../plugins/ingest/storage/lmdb.js'
import { PostgresStorage } from '../../../plugins/ingest/storage/postgres.js'
import { requirePostgres } from '../../support/postgres.js'
import { tempDir } from '../../support/tmp.js'
import { STORAGE_BACKENDS } from './storages.js'

const BUILD = 'b0b0b0b0b0b0b0b0'
const PC_A = 0x08001001
const PC_B = 0x08002001


const deviceId = (n: number): string => n.toString(16).padStart(16, '0')

function fault (device: string, at: number, sequence: number, pc: number, version = '1.0.0'): StoredFault {
  return {
    device, sequence, received_at: at, pc, lr: 0x08000101, sp: 0x20001000, psr: 0, cfsr: 1 << 17, hfsr: 1 << 30, mmfar: 0, bfar: 0,
    uptime_ms: 5, software_version: version, build_id: BUILD, symbol: null, issue: null
  }
}

/** Store `faults` of one device as one accepted chunk would; returns what the issues told. */
async function storeFaults (storage: TelemetryStorage, device: string, faults: StoredFault[]): Promise<IssueEvent[]> {
  return await storage.ingest([device], async session => {
    const sequence = faults[0].sequence
    const reads = await session.read([device], [[device, sequence]], [])
    const digest = chunkDigest(3, 0, Uint8Array.of(sequence & 0xff, faults.length))
    const at = faults[0].received_at
    return await session.write({
      ...emptyWrites(), faults, devices: [{ ...(reads.devices.get(device) ?? newDevice(device, at)), last_seen: at }],
      marks: [{ device, sequence, mark: markWith(reads.marks.get(seenKey(device, sequence)), digest, at), digest }]
    })
  })
}

t.test('the status registers in words', async t => {
  const invstate = decodeFault({ cfsr: 1 << 17, hfsr: 1 << 30, mmfar: 0, bfar: 0 })
  t.same(invstate.causes.map(c => c.name), ['INVSTATE', 'FORCED'], 'the CFSR cause first, then the escalation')
  t.match(invstate.summary[0], /^INVSTATE: invalid state — branch to an address without the Thumb bit/)
  t.equal(invstate.address, null)
  const bus = decodeFault({ cfsr: 0x8200, hfsr: 0, mmfar: 0, bfar: 0xe000ed38 })
  t.same(bus.causes.map(c => c.name), ['PRECISERR'], 'BFARVALID is a flag, not a cause')
  t.same(bus.address, { register: 'BFAR', value: 0xe000ed38 })
  t.same(decodeFault({ cfsr: 0x82, hfsr: 0, mmfar: 0x10, bfar: 0 }).address, { register: 'MMFAR', value: 0x10 })
  t.equal(decodeFault({ cfsr: 0, hfsr: 0, mmfar: 0, bfar: 0 }).kind, 'fault', 'no bit set: a plain fault')
  t.ok(compareVersions('1.10.0', '1.9.2') > 0 && compareVersions('2.0.0-rc1', '2.0.0-rc2') < 0, 'versions compare by their numbers')
})

for (const [backend, open] of STORAGE_BACKENDS) {
  t.test(`${backend}: faults grouped by PC within their build; counts add up across devices storing at once`, async t => {
    const storage = await open(t)
    if (storage === undefined) return
    const start = Date.now() - 3_600_000
    // 20 devices store 5 faults each at once: 4 at PC A, 1 at PC B.
    const events = (await Promise.all(Array.from({ length: 20 }, async (_, d) => await storeFaults(storage, deviceId(d + 1),
      [0, 1, 2, 3, 4].map(i => fault(deviceId(d + 1), start + d * 1000 + i, 10 + i, i < 4 ? PC_A : PC_B)))))).flat()
    const issues = (await storage.issues()).sort((a, b) => b.count - a.count)
    t.same(issues.map(i => [i.count, i.device_count, i.grouping, i.status]), [[80, 20, 'pc', 'open'], [20, 20, 'pc', 'open']], 'two issues, every fault counted once')
    t.equal(issues[0].id, pcIssue(fault(deviceId(1), 0, 0, PC_A)).id)
    t.match(issues[0].title, /^INVSTATE at 0x08001000 \(build b0b0b0b0b0b0\)$/, 'titled by the first cause and the PC without its Thumb bit')
    t.equal(issues[0].first_seen, start, 'first seen')
    t.equal(issues[0].last_seen, start + 19 * 1000 + 3, 'last seen')
    t.same(events.filter(e => e.kind === 'issue.new').map(e => e.issue).sort(), issues.map(i => i.id).sort(), 'each issue announced new once')
    t.same((await storage.issueMembers(issues[0].id, 'version')).map(m => [m.member, m.count]), [['1.0.0', 80]])
    t.equal((await storage.issueMembers(issues[0].id, 'device')).length, 20)
    t.equal((await storage.issueMembers(issues[0].id, 'hour')).reduce((sum, m) => sum + m.count, 0), 80, 'the hours add up to the count')
    t.same((await storage.issuesWith('device', deviceId(3))).sort(), issues.map(i => i.id).sort())
    const page = await storage.issueFaults(issues[1].id, undefined, 15)
    const rest = await storage.issueFaults(issues[1].id, [page[14].received_at, page[14].device, page[14].sequence], 15)
    t.same([page.length, rest.length], [15, 5], 'an issue\'s faults page newest first')
    t.ok(page.every((f, i) => i === 0 || f.received_at <= page[i - 1].received_at) && rest[0].received_at <= page[14].received_at)
    t.ok([...page, ...rest].every(f => f.issue === issues[1].id && f.pc === PC_B))
  })

  t.test(`${backend}: a symbolicated fault moves into its function's issue; later faults at that PC join it at once`, async t => {
    const storage = await open(t)
    if (storage === undefined) return
    const at = Date.now() - 60_000
    await storeFaults(storage, deviceId(1), [fault(deviceId(1), at, 1, PC_A), fault(deviceId(1), at, 2, PC_A), fault(deviceId(1), at, 3, PC_B)])
    const stored = await storage.issueFaults(pcIssue(fault(deviceId(1), 0, 0, PC_A)).id, undefined, 10)
    const moved = await storage.setSymbols([
      ...stored.map(f => ({ key: pendingKey(f), symbol: 'sensor_read at src/sensor.c:42', final: true })),
      { key: pendingKey(fault(deviceId(1), at, 3, PC_B)), symbol: 'unsymbolicated: no ELF uploaded for build b0b0', final: false }
    ])
    t.equal(moved.symbols.length, 3)
    t.same(moved.events.map(e => e.kind), ['issue.new'], 'the function\'s issue is new')
    const issues = await storage.issues()
    const byFunction = issues.find(i => i.grouping === 'symbol')
    t.same(issues.map(i => i.grouping).sort(), ['pc', 'symbol'], 'the emptied PC issue is gone; PC B stays grouped by PC')
    t.equal(byFunction?.title, 'INVSTATE in sensor_read')
    t.equal(byFunction?.count, 2)
    t.same((await storage.issueFaults(byFunction?.id ?? '', undefined, 10)).map(f => f.sequence).sort(), [1, 2])
    const later = await storeFaults(storage, deviceId(2), [fault(deviceId(2), at + 1000, 1, PC_A, '1.0.1')])
    t.same(later, [], 'a later fault at that PC makes no new issue')
    const after = await storage.issue(byFunction?.id ?? '')
    t.same([after?.count, after?.device_count, after?.latest_version], [3, 2, '1.0.1'], 'it joins the function\'s issue before it is symbolicated')
  })

  t.test(`${backend}: a fault keeps its stack snapshot and backtrace; its top two frames name its issue`, async t => {
    const storage = await open(t)
    if (storage === undefined) return
    const at = Date.now() - 60_000
    const withStack = (sequence: number, stack: string): StoredFault => ({ ...fault(deviceId(1), at, sequence, PC_A), stack })
    await storeFaults(storage, deviceId(1), [withStack(1, '5b0a0008'), withStack(2, '11030008'), withStack(3, '')])
    t.same((await Promise.all([1, 2, 3].map(async sequence => (await storage.fault([deviceId(1), at, sequence]))?.stack))), ['5b0a0008', '11030008', ''], 'each snapshot as sent')
    const frame = (address: number, symbol: string): { address: number, symbol: string } => ({ address, symbol })
    const top = frame(0x08001000, 'sensor_read at src/sensor.c:42')
    const backtraces = [[top, frame(0x08000a5a, 'poll_loop at src/main.c:12')], [top, frame(0x08000310, 'self_test at src/main.c:30')], [top, frame(0x08000a5a, 'poll_loop at src/main.c:12')]]
    await storage.setSymbols([1, 2, 3].map((sequence, i) => ({ key: pendingKey(withStack(sequence, '')), symbol: top.symbol, backtrace: backtraces[i], final: true })))
    t.same((await storage.fault([deviceId(1), at, 2]))?.backtrace, backtraces[1], 'the backtrace is stored with the fault')
    const issues = (await storage.issues()).sort((a, b) => b.count - a.count)
    t.same(issues.map(i => [i.title, i.count]), [['INVSTATE in sensor_read (from poll_loop)', 2], ['INVSTATE in sensor_read (from self_test)', 1]],
      'the same function reached from two callers: two issues')
  })

  t.test(`${backend}: resolved, then seen in a newer version: reopened as a regression; ignored stays ignored`, async t => {
    const storage = await open(t)
    if (storage === undefined) return
    const at = Date.now() - 60_000
    await storeFaults(storage, deviceId(1), [fault(deviceId(1), at, 1, PC_A, '1.2.0'), fault(deviceId(1), at, 2, PC_B, '1.2.0')])
    const [a, b] = [pcIssue(fault('', 0, 0, PC_A)).id, pcIssue(fault('', 0, 0, PC_B)).id]
    const resolved = await storage.changeIssue(a, issue => withStatus(issue, 'resolved', 'eng', at))
    t.same([resolved?.status, resolved?.resolved_version, resolved?.status_changed_by], ['resolved', '1.2.0', 'eng'])
    await storage.changeIssue(b, issue => withStatus(issue, 'ignored', 'eng', at))
    t.same(await storeFaults(storage, deviceId(2), [fault(deviceId(2), at + 1, 1, PC_A, '1.1.9')]), [], 'an older version still crashing does not reopen it')
    t.equal((await storage.issue(a))?.status, 'resolved')
    const events = await storeFaults(storage, deviceId(3), [fault(deviceId(3), at + 2, 1, PC_A, '1.10.0'), fault(deviceId(3), at + 2, 2, PC_B, '1.10.0')])
    t.same(events.map(e => [e.kind, e.issue]), [['issue.regressed', a]], 'a newer version reopens the resolved issue, not the ignored one')
    const reopened = await storage.issue(a)
    t.same([reopened?.status, reopened?.regression, reopened?.regressed_at, reopened?.count], ['open', true, at + 2, 3])
    t.equal((await storage.issue(b))?.status, 'ignored')
    t.equal(await storage.changeIssue('0000000000000000', issue => issue), undefined, 'an unknown issue is not changed')
  })
}

t.test('lmdb: faults stored before crash issues existed are counted at the next start, once', async t => {
  const dir = tempDir(t)
  const root = Store.open(dir)
  t.teardown(async () => { await root.close() })
  const store = new TelemetryStore(root.forPlugin('ingest'))
  const at = Date.now() - 60_000
  // As an older version stored them: no issue field at all, one of them symbolicated.
  for (const [i, symbol] of [null, null, 'main_loop at src/main.c:9'].entries()) {
    const { issue: _, ...older } = { ...fault(deviceId(1), at + i, i, i === 2 ? PC_B : PC_A), symbol }
    await store.faults.put([deviceId(1), at + i, i], older as StoredFault)
  }
  const storage = new LmdbStorage(store)
  await storage.open()
  t.same((await storage.issues()).map(i => [i.grouping, i.count]).sort(), [['pc', 2], ['symbol', 1]], 'grouped at start')
  await storage.open()
  t.same((await storage.issues()).map(i => i.count).sort(), [1, 2], 'and not counted twice')
})

t.test('postgres: faults without an issue (copied in, or from before) are counted at the next start', async t => {
  const url = await requirePostgres(t)
  if (url === undefined) return
  const first = new PostgresStorage(url)
  t.teardown(async () => { await first.close() })
  await first.open()
  const at = Date.now() - 60_000
  await first.importRows('faults', ['device', 'sequence', 'received_at', 'pc', 'lr', 'sp', 'psr', 'cfsr', 'hfsr', 'mmfar', 'bfar', 'uptime_ms', 'software_version', 'build_id', 'symbol', 'issue'],
    [0, 1, 2].map(i => ({ ...fault(deviceId(1), at + i, i, PC_A) })))
  t.same(await first.issues(), [], 'rows copied in are not counted yet')
  const second = new PostgresStorage(url)
  t.teardown(async () => { await second.close() })
  await second.open()
  t.same((await second.issues()).map(i => i.count), [3], 'counted when a node starts')
})
