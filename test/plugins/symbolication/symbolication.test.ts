// Symbolication: unresolvable faults keep their reason; the faults of a build go to the resolver in one
// run; a resolver that hangs is killed with its whole process group and its faults are tried again
// later, after a doubling wait; the counters are on the telemetry listener only; ELF records are named
// relative to the ELF directory, and a server restored from /admin/backup resolves with the restored ELF.
// (Stand-ins for addr2line, shell scripts with its output format, serve where its timing or its
// answers must be chosen; the real one runs in the restore test here and in test/e2e/device.test.ts.)
import t, { type Test } from 'tap'
import { execFile } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import type { Kernel } from '../../../kernel/index.js'
import { Store } from '../../../kernel/store.js'
import ingest from '../../../plugins/ingest/index.js'
import { TelemetryStore, type StoredFault } from '../../../plugins/ingest/store.js'
import { encodeChunk } from '../../../plugins/ingest/wire/encoder.js'
import type { ChunkPayload, FaultRecord } from '../../../plugins/ingest/wire/payloads.js'
import symbolication from '../../../plugins/symbolication/index.js'
import { Addr2line } from '../../../plugins/symbolication/addr2line.js'
import { runCli } from '../../support/cli.js'
import { requireComponent } from '../../support/component.js'
import { requirePostgres } from '../../support/postgres.js'
import { armToolchain } from '../../support/firmware.js'
import { testKernel } from '../../support/kernel.js'
import { pollUntil } from '../../support/poll.js'
import { headerOnlyElf } from '../../support/elf.js'
import { tempDir } from '../../support/tmp.js'
import { API_KEY, basic, USERS, type TestRole } from '../ingest/harness.js'
import { SAMPLES } from '../ingest/samples.js'

const run = promisify(execFile)

const info = (buildId: string): ChunkPayload => ({ type: 'DeviceInfo', record: { ...(SAMPLES[0].record as object), build_id: buildId } } as ChunkPayload)
const fault = (pc: number, lr = 0x08000123): ChunkPayload => ({ type: 'FaultRecord', record: { ...(SAMPLES[2].record as object), pc, lr } } as ChunkPayload)

/**
 * A stand-in for arm-none-eabi-addr2line with its output format, in `dir`: each run appends
 * `<start ms> <addresses>` to `runs`; while the file `hang` exists it starts a child (its pid appended to
 * `children`) and waits for it, never answering; else it names every address `f<address>` at
 * /src/main.c:7, but 0x20, which is not in the image, and 0x30, in `inlined` (at /src/main.h:3) inlined
 * into `f0x30`.
 */
function standIn (dir: string): { tool: string, runs: () => Array<{ at: number, addresses: number }>, hang: (on: boolean) => void, children: () => number[] } {
  const tool = join(dir, 'addr2line-stand-in')
  const file = (name: string): string => join(dir, name)
  writeFileSync(tool, [
    '#!/bin/sh',
    'shift 6',
    `echo "$(date +%s%3N) $#" >> ${file('runs')}`,
    `if [ -e ${file('hang')} ]; then sleep 600 & echo $! >> ${file('children')}; wait; fi`,
    'for a in "$@"; do echo "$a"; if [ "$a" = 0x20 ]; then echo \'??\'; echo \'??:0\'; else if [ "$a" = 0x30 ]; then echo inlined; echo /src/main.h:3; fi; echo "f$a"; echo /src/main.c:7; fi; done',
    ''
  ].join('\n'), { mode: 0o755 })
  const lines = (name: string): string[] => existsSync(file(name)) ? readFileSync(file(name), 'utf8').trim().split('\n') : []
  return {
    tool,
    runs: () => lines('runs').map(line => { const [at, addresses] = line.split(' ').map(Number); return { at, addresses } }),
    hang: on => { if (on) writeFileSync(file('hang'), ''); else rmSync(file('hang')) },
    children: () => lines('children').map(Number)
  }
}

/** Whether the process `pid` is gone (a zombie nobody reaped runs nothing: gone too). */
function gone (pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch {
    return true
  }
  const stat = existsSync(`/proc/${pid}/stat`) ? readFileSync(`/proc/${pid}/stat`, 'utf8') : ''
  return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')
}

interface Fleet {
  kernel: Kernel
  /** POST frames of `[device, payload]` in one request, each device's sequences counting on. */
  post(frames: Array<[string, ChunkPayload]>): Promise<void>
  /** The symbols of a device's faults. */
  symbols(device: string): Promise<Array<string | null>>
  upload(bytes: Buffer, role?: TestRole): Promise<Response>
  text(listener: 'telemetry' | 'control', path: string): Promise<string>
}

async function fleet (t: Test, config: { symbolication?: Record<string, unknown>, ingest?: Record<string, unknown>, server?: Record<string, unknown> }): Promise<Fleet> {
  const kernel = await testKernel(t, {
    plugins: [ingest, symbolication],
    config: { ingest: { api_key: API_KEY, users: USERS, metrics_public: true, ...config.ingest }, symbolication: config.symbolication ?? {}, ...(config.server !== undefined ? { server: config.server } : {}) }
  })
  const base = kernel.url('telemetry')
  const sequences = new Map<string, number>()
  return {
    kernel,
    async post (frames) {
      const body = Buffer.concat(frames.map(([device, payload]) => {
        const sequence = sequences.get(device) ?? 0
        sequences.set(device, sequence + 1)
        return encodeChunk({ device, sequence, payload })
      }))
      const answer = await fetch(new URL('/ingest/chunks', base), { method: 'POST', headers: { 'x-api-key': API_KEY, 'content-type': 'application/octet-stream' }, body })
      t.match(await answer.json(), { rejected: 0 })
    },
    async symbols (device) {
      const { items } = await (await fetch(new URL(`/devices/${device}/faults`, base), { headers: { authorization: basic('viewer') } })).json() as { items: Array<{ symbol: string | null }> }
      return items.map(item => item.symbol)
    },
    async upload (bytes, role = 'provisioner') {
      return await fetch(new URL('/ingest/elf', base), { method: 'POST', headers: { authorization: basic(role), 'content-type': 'application/octet-stream' }, body: bytes })
    },
    async text (listener, path) {
      return await (await fetch(new URL(path, kernel.url(listener)))).text()
    }
  }
}

t.test('unresolvable faults keep a clear reason; the counters are on the telemetry listener, not on control', async t => {
  const server = await fleet(t, { symbolication: { addr2line: 'no-such-addr2line' } })
  const symbol = async (device: string, expected: string): Promise<string> => await pollUntil(async () => (await server.symbols(device))[0] === expected && expected, { what: `"${expected}" for ${device}` })
  await server.post([['0000000000000001', info('')], ['0000000000000001', SAMPLES[2]]])
  t.ok(await symbol('0000000000000001', 'unsymbolicated: the device reported no build id'))
  const elf = headerOnlyElf('no resolver')
  await server.post([['0000000000000002', info(elf.id)], ['0000000000000002', SAMPLES[2]]])
  t.ok(await symbol('0000000000000002', `unsymbolicated: no ELF uploaded for build ${elf.id}`))
  t.equal((await server.upload(elf.bytes)).status, 201)
  t.ok(await symbol('0000000000000002', 'unsymbolicated: no-such-addr2line is not installed'), 'the upload tries again; a missing resolver is named')

  // Counted once the transaction that stored the symbol has committed: a reader may see the symbol first.
  const telemetry = await pollUntil(async () => {
    const text = await server.text('telemetry', '/metrics/prometheus')
    return /^berth_symbolication_faults_total\{outcome="unresolved"\} 3$/m.test(text) && text
  }, { what: 'three symbols counted on the telemetry listener' })
  t.pass('telemetry: every symbol stored is counted')
  t.match(telemetry, /^berth_plugin_up\{plugin="symbolication"\} 1$/m)
  const control = await server.text('control', '/metrics')
  t.notMatch(control, /berth_symbolication_|plugin="symbolication"/, 'control: nothing of symbolication')
  t.match(control, /^process_cpu_seconds_total \d/m, 'control: its own metrics')
})

t.test('the resolver: several addresses per run (at most 1000), answers cached per build and address; a run past its timeout is killed with its whole process group', async t => {
  const dir = tempDir(t)
  const tool = standIn(dir)
  const resolver = new Addr2line({ tool: tool.tool, timeoutMs: 5000, concurrency: 2, cacheEntries: 5000 })
  t.same(await resolver.resolve('b1', '/x.elf', [0x10, 0x20, 0x30]), [['f0x10 at /src/main.c:7'], undefined, ['inlined at /src/main.h:3', 'f0x30 at /src/main.c:7']],
    'each address\'s function, with the one it was inlined into after it')
  t.same(await resolver.resolve('b1', '/x.elf', [0x10]), [['f0x10 at /src/main.c:7']], 'from the cache')
  t.same(tool.runs().map(r => r.addresses), [3], 'one run of the resolver')
  const many = Array.from({ length: 2500 }, (_, i) => 0x1000 + 2 * i)
  const found = await resolver.resolve('b1', '/x.elf', [0x10, ...many])
  t.same(found[2500], [`f0x${(0x1000 + 2 * 2499).toString(16)} at /src/main.c:7`], 'answers stay with their address across runs')
  t.same(tool.runs().slice(1).map(r => r.addresses).sort(), [1000, 1000, 500], 'the uncached addresses, in runs of at most 1000')
  const small = new Addr2line({ tool: tool.tool, timeoutMs: 5000, concurrency: 2, cacheEntries: 1 })
  t.same(await small.resolve('b2', '/x.elf', [0x10, 0x40, 0x10]), [['f0x10 at /src/main.c:7'], ['f0x40 at /src/main.c:7'], ['f0x10 at /src/main.c:7']], 'answers outlive their eviction from a small cache')
  t.same(await Promise.all([small.resolve('b2', '/x.elf', [0x40, 0x50]), small.resolve('b3', '/x.elf', [0x60])]), [[['f0x40 at /src/main.c:7'], ['f0x50 at /src/main.c:7']], [['f0x60 at /src/main.c:7']]], 'and cached answers outlive an eviction by a run of another build')

  tool.hang(true)
  const slow = new Addr2line({ tool: tool.tool, timeoutMs: 300, concurrency: 1, cacheEntries: 10 })
  await t.rejects(slow.resolve('b', '/x.elf', [1]), { message: `${tool.tool} took longer than 0.3 s` })
  const [child] = tool.children()
  t.ok(child > 0, 'the stand-in had started a child of its own')
  t.ok(await pollUntil(() => gone(child), { what: `the stand-in's child ${child} to be gone` }), 'the hung run\'s child was killed with it')
})

t.test('a build\'s new faults go to the resolver in one run; a fault leaves the pending index once resolved', async t => {
  const tool = standIn(tempDir(t))
  const server = await fleet(t, { symbolication: { addr2line: tool.tool } })
  const elf = headerOnlyElf('batch')
  t.equal((await server.upload(elf.bytes)).status, 201)
  const devices = Array.from({ length: 5 }, (_, d) => `00000000000001${d.toString().padStart(2, '0')}`)
  await server.post(devices.map(device => [device, info(elf.id)]))
  // 50 faults of 5 devices in one request, each with its own PC and LR: 100 addresses.
  await server.post(devices.flatMap((device, d) => Array.from({ length: 10 }, (_, i): [string, ChunkPayload] => [device, fault(0x1000 + 4 * (10 * d + i), 0x2001 + 4 * (10 * d + i))])))
  const resolved = await pollUntil(async () => {
    const all = (await Promise.all(devices.map(async device => await server.symbols(device)))).flat()
    return all.length === 50 && all.every(symbol => symbol?.endsWith('at /src/main.c:7') === true) && all
  }, { what: 'all 50 faults resolved' })
  t.equal(resolved[0], 'f0x1000 at /src/main.c:7')
  t.same(tool.runs().map(r => r.addresses), [100], 'one run for the 100 addresses of the 50 faults')
  t.equal(server.kernel.service('ingest').telemetry.store.pendingFaults.getKeysCount(), 0, 'no fault left pending')
  t.ok(await pollUntil(async () => /^berth_symbolication_faults_total\{outcome="resolved"\} 50$/m.test(await server.text('telemetry', '/metrics/prometheus')), { what: '50 resolved faults counted' }))
})

t.test('on PostgreSQL, a node resolves faults of a build uploaded to another node: it writes the ELF file from the database into its own directory', async t => {
  const url = await requirePostgres(t)
  if (url === undefined) return
  const tool = standIn(tempDir(t))
  const [first, second] = [await fleet(t, { symbolication: { addr2line: tool.tool }, ingest: { database_url: url } }), await fleet(t, { symbolication: { addr2line: tool.tool }, ingest: { database_url: url } })]
  const elf = headerOnlyElf('shared')
  t.equal((await first.upload(elf.bytes)).status, 201)
  const device = '0000000000000301'
  await second.post([[device, info(elf.id)], [device, fault(0x1000)]])
  t.equal(await pollUntil(async () => (await second.symbols(device))[0]?.endsWith('main.c:7') === true && (await second.symbols(device))[0], { what: 'the fault resolved on the second node' }), 'f0x1000 at /src/main.c:7')
  const { elfDir } = second.kernel.service('ingest').telemetry
  t.same(readFileSync(join(elfDir, `${elf.id}.elf`)), elf.bytes, 'the second node wrote the file from the database')
})

t.test('a resolver that times out is killed with its children, and its faults are tried again later, each wait twice the last, without another upload', async t => {
  const tool = standIn(tempDir(t))
  tool.hang(true)
  const server = await fleet(t, { symbolication: { addr2line: tool.tool, timeout_secs: 1, retry_secs: 1 } })
  const elf = headerOnlyElf('retry')
  t.equal((await server.upload(elf.bytes)).status, 201)
  await server.post([['0000000000000003', info(elf.id)], ['0000000000000003', fault(0x4000)]])
  const timedOut = `unsymbolicated: ${tool.tool} took longer than 1 s`
  t.ok(await pollUntil(async () => (await server.symbols('0000000000000003'))[0] === timedOut, { what: 'the timeout to be stored' }))
  await pollUntil(() => tool.runs().length === 2, { what: 'a second try', timeout: 15_000 })
  tool.hang(false)
  t.ok(await pollUntil(async () => (await server.symbols('0000000000000003'))[0] === 'f0x4000 at /src/main.c:7', { what: 'the third try to resolve it', timeout: 15_000 }))
  const [first, second, third] = tool.runs().map(r => r.at)
  t.ok(third - second > second - first, `the wait doubles: tries at +0, +${second - first}, +${third - first} ms`)
  for (const child of tool.children()) t.ok(await pollUntil(() => gone(child), { what: `child ${child} of a timed-out run to be gone` }), `the timed-out run's child ${child} is gone`)
  t.equal(tool.children().length, 2, 'both hung runs had started a child')
})

t.test('at start: ELF records with absolute paths are named relative to the ELF directory (their file copied in), and faults stored before the pending index are indexed and resolved', async t => {
  const stateDir = tempDir(t)
  const oldElfDir = tempDir(t)
  const elf = headerOnlyElf('migrated')
  writeFileSync(join(oldElfDir, `${elf.id}.elf`), elf.bytes)
  // State as an older version left it: an absolute path, and a fault with no mark in pending-faults.
  const root = Store.open(stateDir)
  const old = new TelemetryStore(root.forPlugin('ingest'))
  await old.elves.put(elf.id, { build_id: elf.id, software_type: null, software_version: null, size: elf.bytes.length, file: join(oldElfDir, `${elf.id}.elf`), uploaded_at: 1 })
  const at = Date.now() - 60_000 // recent: retention also runs at start
  const oldFault: StoredFault = { ...(SAMPLES[2].record as FaultRecord), stack: undefined, coredump: undefined, pc: 0x5000, device: '0000000000000004', sequence: 0, received_at: at, software_version: null, build_id: elf.id, symbol: null, issue: null }
  await old.faults.put(['0000000000000004', at, 0], oldFault)
  await old.devices.put('0000000000000004', { id: '0000000000000004', name: 'old', group: null, serial: null, hardware_version: null, software_type: null, software_version: null, build_id: elf.id, registered: false, encrypted: false, created_at: 1, last_seen: at, boot_count: null, offline: false })
  // And a record whose file is gone (a state directory copied without its ELF directory), with a fault of its build.
  const lost = headerOnlyElf('lost')
  await old.elves.put(lost.id, { build_id: lost.id, software_type: null, software_version: null, size: lost.bytes.length, file: join(oldElfDir, 'gone', `${lost.id}.elf`), uploaded_at: 1 })
  await old.faults.put(['0000000000000004', at + 1000, 1], { ...oldFault, sequence: 1, received_at: at + 1000, build_id: lost.id })
  await root.close()

  const tool = standIn(tempDir(t))
  const server = await fleet(t, { symbolication: { addr2line: tool.tool }, server: { state_dir: stateDir } })
  const { store, elfDir } = server.kernel.service('ingest').telemetry
  t.equal(store.elves.get(elf.id)?.file, `${elf.id}.elf`, 'the record names its file relative to the ELF directory')
  t.same(readFileSync(join(elfDir, `${elf.id}.elf`)), elf.bytes, 'the file was copied in')
  t.equal(store.elves.get(lost.id)?.file, `${lost.id}.elf`, 'a record whose file is gone is named relative too')
  t.same(await pollUntil(async () => { const symbols = await server.symbols('0000000000000004'); return symbols.every(symbol => symbol !== null) && symbols }, { what: 'the old faults to be looked at' }),
    ['f0x5000 at /src/main.c:7', `unsymbolicated: the ELF file of build ${lost.id} is missing from the ELF directory; upload it again`])
  t.equal(store.pendingFaults.getKeysCount(), 1, 'the fault whose ELF file is missing waits for an upload')
})

t.test('a fresh server restored from /admin/backup resolves faults with the restored ELF (the real addr2line)', async t => {
  const compiler = await requireComponent(t, 'arm-none-eabi-gcc', armToolchain)
  if (compiler === undefined) return
  const dir = tempDir(t)
  writeFileSync(join(dir, 'fw.c'), 'void fault_here(void) { *(volatile int *)0 = 1; }\nint main(void) { fault_here(); return 0; }\n')
  await run(compiler, ['-g', '-O0', '-Wl,--build-id=sha1', '--specs=nosys.specs', '-o', join(dir, 'fw.elf'), join(dir, 'fw.c')])
  const { stdout: symbols } = await run('arm-none-eabi-nm', [join(dir, 'fw.elf')])
  const address = Number.parseInt(/^([0-9a-f]+) T fault_here$/m.exec(symbols)?.[1] ?? '', 16)
  const first = await fleet(t, {})
  const upload = await first.upload(readFileSync(join(dir, 'fw.elf')))
  t.equal(upload.status, 201)
  const { build_id: buildId } = await upload.json() as { build_id: string }
  const backup = await fetch(new URL('/admin/backup', first.kernel.url('telemetry')), { headers: { authorization: basic('admin') } })
  t.equal(backup.status, 200)
  const file = join(dir, 'ingest.mdb')
  writeFileSync(file, Buffer.from(await backup.arrayBuffer()))
  await first.kernel.stop()

  const stateDir = join(dir, 'fresh')
  mkdirSync(stateDir)
  const restored = await runCli(['--state-dir', stateDir, 'state', 'restore', 'ingest', file])
  t.equal(restored.code, 0, restored.stderr)
  t.match(restored.stdout, /ingest\/elf-files: 1 entries/, 'the backup carried the ELF file')
  const second = await fleet(t, { server: { state_dir: stateDir } })
  const { store, elfDir } = second.kernel.service('ingest').telemetry
  t.same(readFileSync(join(elfDir, `${buildId}.elf`)), readFileSync(join(dir, 'fw.elf')), 'written out into the new ELF directory at start')
  t.equal(store.restoredElves.getKeysCount(), 0, 'and dropped from the store')
  await second.post([['0000000000000005', info(buildId)], ['0000000000000005', fault(address)]])
  const symbol = await pollUntil(async () => { const [s] = await second.symbols('0000000000000005'); return s !== null && s }, { what: 'the fault to be looked at' })
  t.match(symbol, /^fault_here at .*fw\.c:1$/, 'resolved with the restored ELF')
})
