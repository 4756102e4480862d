// The C firmware SDK on the host (gcc, POSIX port): its unit tests; every configuration of the size
// table built warning-free, the host tests (gcc) and the QEMU example (arm-none-eabi-gcc), its unit
// tests passing; the example's watchdog reset in QEMU, reported as such by the port's reset cause; the
// golden vectors byte for byte (Avro, RLE, AES-CCM, fragments) and back; its CBOR decoded by the
// server's decoder; whole upload sessions over HTTP, LoRa packets and BLE notifications, plain and
// encrypted, stored by a real server; a session retried after an uncertain failure; OTA updates
// (check, a resumed download, the digest, the reboot into the new version, a release halted by a
// crashing version); and power cycles on each class of platform.
import t from 'tap'
import { execFile, spawn } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { readFile } from 'node:fs/promises'
import { decodeChunk } from '../../plugins/ingest/wire/decoder.js'
import { requireComponent } from '../support/component.js'
import { armToolchain, configurations, hostToolchain, make, tapLines, writeVectorData, type FirmwareConfiguration } from '../support/firmware.js'
import { tempDir } from '../support/tmp.js'
import { uartRecords } from '../support/crashes.js'
import { API_KEY, basic, telemetryServer } from '../plugins/ingest/harness.js'
import { pollUntil } from '../support/poll.js'

const run = promisify(execFile)
const toolchain = await requireComponent(t, 'gcc', hostToolchain)

/** Run `task` on each item, `limit` at a time (the builds share two cores with the rest of the run). */
async function eachLimited<T> (items: T[], limit: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0
  await Promise.all(Array.from({ length: limit }, async () => {
    while (next < items.length) await task(items[next++])
  }))
}

if (toolchain !== undefined) {
  // One build directory per configuration of the size table; the full one serves the tests below.
  const builds = tempDir(t, 'berth-firmware-')
  const out = join(builds, 'full')
  const entropy = join(builds, 'entropy')
  await Promise.all([make('host-tests', out), make('host-tests', entropy, '-DBERTH_PLATFORM_ENTROPY=1')])

  t.test('every configuration of the size table builds warning-free, and its unit tests pass', async t => {
    const arm = await requireComponent(t, 'arm-none-eabi-gcc and qemu-system-arm', armToolchain)
    const build = async (c: FirmwareConfiguration): Promise<void> => {
      const named = `${c.name} (${c.options === '' ? 'the defaults' : c.options})`
      try {
        const dir = join(builds, c.name)
        await make('host-tests', dir, c.options)
        const checks = tapLines((await run(join(dir, 'unit'))).stdout)
        const failed = checks.filter(check => !check.ok).map(check => check.name)
        t.ok(checks.length > 0 && failed.length === 0, `${named}: the host tests build, ${checks.length} unit checks pass`, { failed })
        if (arm === undefined) return
        if (!c.arm) {
          await make('sdk-objects', dir, c.options)
          t.pass(`${named}: the SDK builds for the Cortex-M3 (the QEMU port cannot link the example: it has no entropy source)`)
          return
        }
        await make('qemu-demo', dir, c.options)
        t.pass(`${named}: the QEMU example builds`)
      } catch (err) {
        t.fail(`${named}: ${(err as Error).message}`)
      }
    }
    await eachLimited(await configurations(), 2, build)
  })

  t.test('the QEMU example\'s watchdog reset: watchdog with the port\'s reset cause, unknown without', async t => {
    const arm = await requireComponent(t, 'arm-none-eabi-gcc and qemu-system-arm', armToolchain)
    if (arm === undefined) return
    for (const [name, options, reason] of [['full', '', 'unknown'], ['reset-cause', '-DBERTH_PLATFORM_RESET_CAUSE=1', 'watchdog']]) {
      const dir = join(builds, name)
      await make('qemu-demo', dir, options)
      const uart = join(dir, 'uart.bin')
      // The device crashes, reports it, hangs until the watchdog resets it, reports that, and ends the emulation.
      await run('qemu-system-arm', ['-M', 'mps2-an385', '-nographic', '-monitor', 'none', '-semihosting-config', 'enable=on,target=native',
        '-kernel', join(dir, 'qemu-demo.elf'), '-serial', `file:${uart}`], { timeout: 30_000 })
      const reboots = uartRecords(await readFile(uart)).flatMap(r => r.type === 'RebootReason' ? [`${r.record.reason} ${r.record.boot_count}`] : [])
      t.same(reboots, ['power_on 1', 'hard_fault 2', `${reason} 3`], `${options === '' ? 'the defaults' : options}: the third boot says ${reason}`)
    }
  })

  t.test('unit tests of the SDK', async t => {
    const { stdout } = await run(join(out, 'unit'))
    const lines = tapLines(stdout)
    t.ok(lines.length >= 20, `${lines.length} checks ran`)
    for (const line of lines) t.ok(line.ok, line.name)
  })

  t.test('golden vectors: the C encoder writes them byte for byte and reads them back', async t => {
    const chosen = writeVectorData(join(out, 'vectors_data.c'))
    await make('vectors', out)
    const { stdout } = await run(join(out, 'vectors'), ['check'])
    const lines = tapLines(stdout)
    const layered = chosen.filter(v => (v.flags & 3) !== 0).length
    t.equal(lines.length, chosen.length + layered, `${chosen.length} vectors encoded, ${layered} opened and expanded`)
    for (const line of lines) t.ok(line.ok, line.name)
  })

  t.test('CBOR from the C encoder decodes on the server to the vectors\' records', async t => {
    const cbor = join(builds, 'cbor')
    const chosen = writeVectorData(join(out, 'vectors_data.c'))
    await run('mkdir', ['-p', cbor])
    await run('cp', [join(out, 'vectors_data.c'), join(cbor, 'vectors_data.c')])
    await make('vectors', cbor, '-DBERTH_SERIALIZATION_CBOR=1')
    const { stdout } = await run(join(cbor, 'vectors'), ['print'])
    for (const line of stdout.trim().split('\n')) {
      const [name, hex] = line.split(' ')
      const vector = chosen.find(v => v.name === name)
      if (vector === undefined || vector.flags !== 0 || vector.mtu !== undefined) continue
      const frame = Buffer.from(hex, 'hex')
      t.equal(frame[4], 0x04, `${name}: flag bit 2 says CBOR`)
      const payload = frame.subarray(22, 22 + frame.readUInt16LE(20))
      const decoded = decodeChunk({ version: frame[2], type: frame[3], flags: frame[4], device: frame.subarray(8, 16), sequence: frame.readUInt32LE(16) }, payload, undefined)
      // Bytes fields are hex in the vectors' JSON.
      const expected = vector.type === 'Trace'
        ? { ...vector.record, data: Buffer.from(vector.record.data as string, 'hex') }
        : vector.type === 'FaultRecord' ? { ...vector.record, stack: Buffer.from(vector.record.stack as string, 'hex') } : vector.record
      t.match(decoded, { ok: true, payload: { type: vector.type, record: expected } }, `${name} in CBOR decodes to its record`)
    }
  })

  const server = await telemetryServer(t, { ota_check_seconds: 1 })
  const json = async (path: string): Promise<Record<string, unknown>> => await (await server.api('GET', path, 'viewer')).json() as Record<string, unknown>
  const session = async (program: string, ...args: string[]): Promise<string> => {
    const { stdout } = await run(program, ['127.0.0.1', server.base.port, API_KEY, ...args])
    return stdout
  }

  t.test('upload sessions over HTTP, LoRa packets and BLE notifications, plain and encrypted, stored by the server', async t => {
    const [device, sealedDevice] = ['c0ffee0000000001', 'c0ffee0000000002']
    const registered = await server.api('POST', '/devices/register', 'provisioner', { id: sealedDevice, encrypted: true })
    const { key } = await registered.json() as { key: string }
    const stdout = await session(join(out, 'session'), 'transports', device, sealedDevice, key)
    for (const line of tapLines(stdout)) t.ok(line.ok, line.name)
    t.equal(stdout.match(/"rejected":0,/g)?.length, 3, 'no frame of the three sessions was rejected')
    t.match(await json(`/devices/${device}`), { serial: 'SN-C-0001', software_type: 'c-sdk-test', boot_count: 2 })
    t.match(await json(`/devices/${device}/reboots`), { items: [{ reason: 'power_on', boot_count: 1 }, { reason: 'hard_fault', boot_count: 2, pc: 0x08000a11, lr: 0x08000b23 }] })
    t.match(await json(`/devices/${device}/faults`), { items: [{ pc: 0x08000a11, lr: 0x08000b23, cfsr: 0x400, uptime_ms: 1234 }] })
    const metrics = await json(`/devices/${device}/metrics`) as { items: Array<{ key: string, kind: string, value: number }> }
    t.same(metrics.items.map(m => [m.key, m.kind, m.value]), [['battery_mv', 'gauge', 3650], ['tx_packets', 'increment', 7], ['loop_us', 'observe', 812]])
    t.match(await json(`/devices/${device}/traces`), { items: [{ text: 'boot ok\nsensor ready\n', dropped: 0 }] })
    t.match(await json(`/devices/${sealedDevice}/traces`), { items: [{ text: 'encrypted hello\n' }] }, 'the encrypted session was opened with the device\'s key')
  })

  t.test('a session that fails part-way is retried with the same chunks, and what was recorded meanwhile arrives too', async t => {
    const device = 'c0ffee0000000003'
    const duplicates = async (): Promise<number> => {
      const text = await (await server.api('GET', '/metrics/prometheus', 'viewer')).text()
      return Number(/^berth_ingest_frames_total\{status="duplicate"\} (\d+)$/m.exec(text)?.[1] ?? 0)
    }
    const before = await duplicates()
    const stdout = await session(join(out, 'session'), 'retry', device)
    for (const line of tapLines(stdout)) t.ok(line.ok, line.name)
    t.equal(await duplicates() - before, 4, 'the retry\'s device info, reboot, metrics and trace were copies of what the server held')
    const metrics = await json(`/devices/${device}/metrics`) as { items: Array<{ key: string, value: number }> }
    t.same(metrics.items.map(m => `${m.key}=${m.value}`), ['battery_mv=3700', 'tx_packets=2', 'battery_mv=3600', 'tx_packets=5', 'retry_us=77'], 'every value once, none lost, none counted twice')
    const traces = await json(`/devices/${device}/traces`) as { items: Array<{ text: string }> }
    t.same(traces.items.map(item => item.text), ['before the failure\n', 'between the attempts\n'])
    t.equal((await json(`/devices/${device}/reboots`) as { items: unknown[] }).items.length, 1, 'one boot, one reboot record')
  })

  t.test('a fragment that comes after its chunk\'s earlier fragments were dropped for their age makes the device send the whole chunk again', async t => {
    const device = 'c0ffee0000000004'
    const counted = async (): Promise<Record<string, number>> => {
      const text = await (await server.api('GET', '/metrics/prometheus', 'viewer')).text()
      const count = (pattern: RegExp): number => Number(pattern.exec(text)?.[1] ?? 0)
      return {
        dropped: count(/^berth_ingest_fragments_lost_total\{event="dropped"\} (\d+)$/m),
        resend: count(/^berth_ingest_fragments_lost_total\{event="resend"\} (\d+)$/m)
      }
    }
    const before = await counted()
    const child = spawn(join(out, 'session'), ['127.0.0.1', server.base.port, API_KEY, 'gap', device], { stdio: ['pipe', 'pipe', 'inherit'] })
    let stdout = ''
    child.stdout.setEncoding('utf8').on('data', (text: string) => { stdout += text })
    const exited = new Promise<number | null>(resolve => child.on('exit', resolve))
    const quiet = await pollUntil(() => /^# quiet after the first fragment: (.*)$/m.exec(stdout)?.[1], { timeout: 20_000, what: 'the device quiet after its first fragment' })
    t.match(quiet, /"status":"partial"/, 'the first fragment was answered partial')
    // The device is quiet past the time limit: the server's expiry, run as if that much time had passed, drops the fragment.
    t.equal(await server.service.expireFragments(Date.now() + 3_600_000 + 1_000), 1, 'the incomplete chunk is dropped for its age')
    child.stdin.end('go on\n')
    t.equal(await exited, 0, 'the session program ends')
    for (const line of tapLines(stdout)) t.ok(line.ok, line.name)
    t.match(stdout, /# the later fragment's answer: .*"retry":true/, 'the later fragment was refused with retry')
    const after = await counted()
    t.same({ dropped: after.dropped - before.dropped, resend: after.resend - before.resend }, { dropped: 1, resend: 1 }, 'the drop and the request to send again are counted')
    t.match(await json(`/devices/${device}`), { serial: 'SN-C-0001', software_type: 'c-sdk-test' }, 'the chunk sent again whole was stored')
    const metrics = await json(`/devices/${device}/metrics`) as { items: Array<{ key: string, value: number }> }
    t.same(metrics.items.map(m => `${m.key}=${m.value}`), ['battery_mv=3500'], 'the session\'s metrics stored once')
  })

  t.test('OTA over HTTP: devices on the POSIX port check, download (resuming a broken transfer), verify, reboot into the new version and report it; a crashing version halts its release', async t => {
    const upload = async (version: string, bytes: Buffer): Promise<string> => {
      const response = await fetch(new URL(`/ota/images?software_type=main&version=${version}`, server.base), { method: 'POST', headers: { authorization: basic('provisioner'), 'content-type': 'application/octet-stream' }, body: bytes })
      return (await response.json() as { id: string }).id
    }
    const release = async (image: string): Promise<string> => (await (await server.api('POST', '/ota/releases', 'provisioner', { image, group: 'ota-fleet' })).json() as { id: string }).id
    t.equal((await server.api('POST', '/groups', 'provisioner', { name: 'ota-fleet' })).status, 201)
    const devices = ['c0ffee0000000020', 'c0ffee0000000021', 'c0ffee0000000022', 'c0ffee0000000023', 'c0ffee0000000024', 'c0ffee0000000025']
    for (const id of devices) t.equal((await server.api('POST', '/devices/register', 'provisioner', { id, group: 'ota-fleet' })).status, 201)
    const good = Buffer.from(Array.from({ length: 20_000 }, (_, i) => (i * 7) % 256))
    await release(await upload('1.1.0', good))
    for (const device of devices.slice(0, 2)) {
      const stdout = await session(join(out, 'session'), 'ota', device, '1.0.0')
      for (const line of tapLines(stdout)) t.ok(line.ok, `${device}: ${line.name}`)
      t.match(stdout, /# offered 1\.1\.0: 20000 bytes/)
      t.match(await json(`/devices/${device}`), { software_version: '1.1.0' }, `${device} reports the new version`)
      t.match(await json(`/devices/${device}/reboots`), { items: [{ reason: 'power_on' }, { reason: 'firmware_update' }] }, 'and rebooted for the update')
    }

    // 2.0.0 crashes: the devices that take it fault twice each; the release halts itself.
    const risky = await release(await upload('2.0.0', Buffer.from('a crashing image '.repeat(100))))
    for (const device of devices.slice(2, 4)) {
      const stdout = await session(join(out, 'session'), 'ota', device, '1.1.0', 'crash')
      for (const line of tapLines(stdout)) t.ok(line.ok, `${device}: ${line.name}`)
    }
    const halted = await pollUntil(async () => {
      const { release: current } = await (await server.api('GET', `/ota/releases/${risky}`, 'viewer')).json() as { release: { state: string, reason: string } }
      return current.state === 'halted' ? current : undefined
    }, { timeout: 20_000, what: 'the release halted by the new version\'s crashes' })
    t.match(halted.reason, /^halted: version 2\.0\.0 crashed 2\.00 faults a device \(4 on 2\)/, 'it says why')
    const stdout = await session(join(out, 'session'), 'ota', devices[4], '1.1.0')
    t.match(stdout, /not ok - the server offers an update/, 'a device asking afterwards is offered nothing')
    t.match(await json(`/devices/${devices[4]}`), { software_version: '1.1.0' })
  })

  const classes = [
    { name: 'nothing at all (RAM cleared at power-on)', program: join(out, 'session'), ram: 'zeros', device: 'c0ffee0000000010', sameNumbers: true },
    { name: 'only retained RAM (it powers up as noise)', program: join(out, 'session'), ram: 'noise', device: 'c0ffee0000000011', sameNumbers: false },
    { name: 'a random number generator', program: join(entropy, 'session'), ram: 'zeros', device: 'c0ffee0000000012', sameNumbers: false }
  ]
  for (const platform of classes) {
    t.test(`two power-on boots on a platform with ${platform.name}: both are stored`, async t => {
      const stdout = await session(platform.program, 'power', platform.device, platform.ram)
      for (const line of tapLines(stdout)) t.ok(line.ok, line.name)
      const reboots = (await json(`/devices/${platform.device}/reboots`) as { items: Array<{ reason: string, boot_count: number, sequence: number }> }).items
      t.same(reboots.map(r => `${r.reason} ${r.boot_count}`), ['power_on 1', 'power_on 1'], 'two power-on reboots')
      t.equal(reboots[0].sequence === reboots[1].sequence, platform.sameNumbers, platform.sameNumbers ? 'under the same sequence number: the server told the boots apart' : 'under different sequence numbers')
      const metrics = (await json(`/devices/${platform.device}/metrics`) as { items: Array<{ key: string, value: number }> }).items
      t.same(metrics.map(m => `${m.key}=${m.value}`), ['boots=1', 'boots=1'], 'each boot\'s metrics')
    })
  }
}
