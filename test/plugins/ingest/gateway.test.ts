// The gateway's parts: frames split out of a noisy byte stream in any pieces (bad CRCs skipped), a
// spool that survives a restart, forwards from where the server last acknowledged, remembers what may
// have reached the server and keeps to its cap, and the one-line refusals of its command; a real
// pseudo-terminal as a tty line and as a USB serial device found by itself; frames the server refuses
// for now kept until it takes them, the others dropped and counted; a lost answer followed by a
// retransmission; and BLE devices through a real D-Bus with a STAND-IN for BlueZ and its radio (no
// Bluetooth hardware here). (The whole bridge, over QEMU's UART, runs in test/e2e/device.test.ts.)
import t, { type Test } from 'tap'
import { spawn } from 'node:child_process'
import { mkdirSync, symlinkSync } from 'node:fs'
import { createServer, request as httpRequest } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { FrameSplitter } from '../../../plugins/ingest/gateway/frames.js'
import { Spool } from '../../../plugins/ingest/gateway/spool.js'
import { parseSerial } from '../../../plugins/ingest/gateway/sources.js'
import { crc32 } from 'node:zlib'
import { encodeChunk } from '../../../plugins/ingest/wire/encoder.js'
import { BERTH_BLE_CHUNKS, BERTH_BLE_SERVICE } from '../../../plugins/ingest/gateway/ble.js'
import { BluezStandin, privateBus } from '../../support/bluez-standin.js'
import { exited, runCli, spawnCli } from '../../support/cli.js'
import { pollUntil } from '../../support/poll.js'
import { tempDir } from '../../support/tmp.js'
import { API_KEY, telemetryServer } from './harness.js'
import { DEVICE, SAMPLES } from './samples.js'

const frame = (sequence: number): Buffer => Buffer.from(encodeChunk({ device: DEVICE, sequence, payload: SAMPLES[5] }))
const frameV2 = (sequence: number, device = DEVICE): Buffer => Buffer.from(encodeChunk({ device, sequence, payload: SAMPLES[5], version: 2 }))

/** A pseudo-terminal (python's os.openpty): lines of hex written to `write` come out of the slave `path`. */
async function pseudoTerminal (t: Test): Promise<{ path: string, write(bytes: Buffer): void }> {
  const pty = spawn('python3', ['-c', [
    'import os, sys',
    'master, slave = os.openpty()',
    'print(os.ttyname(slave), flush=True)',
    'for line in sys.stdin:',
    '    os.write(master, bytes.fromhex(line.strip()))',
    'os.close(master)'
  ].join('\n')], { stdio: ['pipe', 'pipe', 'inherit'] })
  t.teardown(() => { pty.kill('SIGKILL') })
  const path = await new Promise<string>(resolve => { pty.stdout.once('data', (chunk: Buffer) => { resolve(chunk.toString().trim()) }) })
  return { path, write: bytes => { pty.stdin.write(`${bytes.toString('hex')}\n`) } }
}

t.test('frames come out of a noisy stream whatever its pieces; corrupted ones are skipped', async t => {
  const good = [frame(1), frame(2), frame(3)]
  const corrupted = Buffer.from(frame(9))
  corrupted[24] ^= 0xff
  const stream = Buffer.concat([Buffer.from('boot log text BT'), good[0], Buffer.from([0x42]), good[1], corrupted, good[2], Buffer.from('tail B')])
  for (const size of [1, 7, 64, stream.length]) {
    const splitter = new FrameSplitter()
    const out: Buffer[] = []
    for (let at = 0; at < stream.length; at += size) out.push(...splitter.push(stream.subarray(at, at + size)))
    t.same(out.map(f => f.toString('hex')), good.map(f => f.toString('hex')), `in pieces of ${size}: the three good frames, in order`)
    t.equal(splitter.skipped, stream.length - 3 * good[0].length - 1, 'everything else skipped (but a trailing "B" kept for a sync)')
  }
})

t.test('the spool keeps frames across a restart and forwards from the last acknowledgement', async t => {
  const dir = tempDir(t)
  const first = new Spool(dir)
  first.append([frame(1), frame(2), frame(3)])
  const batch = first.next(1 << 20)
  t.equal(batch.frames.length, 3)
  first.acknowledge(batch.end - (frame(3).length + 4)) // the server answered two of them
  first.close()
  const again = new Spool(dir)
  t.same(again.next(1 << 20).frames.map(f => f.bytes.readUInt32LE(16)), [3], 'after a restart: only the unacknowledged frame')
  again.append([frame(4)])
  const rest = again.next(frame(3).length) // a byte budget of one frame
  t.same(rest.frames.map(f => f.bytes.readUInt32LE(16)), [3], 'batches keep to their byte budget')
  again.acknowledge(again.next(1 << 20).end)
  t.equal(again.pending, 0)
  again.close()
})

t.test('the spool remembers what a request may have carried to the server, keeps to its cap, and compacts', async t => {
  const dir = tempDir(t)
  const spool = new Spool(dir)
  spool.append([frame(1), frame(2), frame(3)])
  const batch = spool.next(1 << 20)
  t.same(batch.frames.map(f => f.sentBefore), [false, false, false], 'nothing sent yet')
  spool.attempt(batch.end)
  t.same(spool.next(1 << 20).frames.map(f => f.sentBefore), [true, true, true], 'after an attempt, each may have reached the server')
  spool.notSent(0)
  t.same(spool.next(1 << 20).frames.map(f => f.sentBefore), [false, false, false], 'a request that surely never left changes nothing')
  spool.attempt(batch.end)
  spool.close()
  const reopened = new Spool(dir)
  t.same(reopened.next(1 << 20).frames.map(f => f.sentBefore), [true, true, true], 'the attempt survives a restart')
  reopened.acknowledge(reopened.next(1 << 20).end)
  reopened.append([frame(4)])
  t.same(reopened.next(1 << 20).frames.map(f => [f.bytes.readUInt32LE(16), f.sentBefore]), [[4, false]], 'a new frame was never sent')
  reopened.close()

  const one = frame(1).length + 4
  const capped = new Spool(tempDir(t), 3 * one)
  capped.append([frame(1), frame(2), frame(3), frame(4), frame(5)])
  t.same(capped.next(1 << 20).frames.map(f => f.bytes.readUInt32LE(16)), [3, 4, 5], 'past its cap the oldest frames go')
  t.equal(capped.overflowed, 2, 'and are counted')
  capped.close()

  const big = new Spool(tempDir(t))
  const many = Array.from({ length: 40_000 }, (_, i) => frame(100 + i))
  big.append(many)
  const delivered = big.next(35_000 * frame(1).length)
  big.attempt(big.size)
  big.acknowledge(delivered.end)
  t.ok(big.size < 40_000 * one / 2, `the delivered part was cut off the log (${big.size} bytes left)`)
  t.same(big.next(1 << 30).frames.map(f => [f.bytes.readUInt32LE(16), f.sentBefore]).slice(0, 2), [[100 + delivered.frames.length, true], [101 + delivered.frames.length, true]], 'the rest in order, still marked as possibly sent')
  big.close()
})

t.test('serial lines are checked, and the command refuses what it cannot use in one line', async t => {
  t.match(parseSerial('tcp:127.0.0.1:4444'), { kind: 'tcp', host: '127.0.0.1', port: 4444 })
  t.match(parseSerial('/dev/ttyUSB0@9600'), { kind: 'tty', path: '/dev/ttyUSB0', baud: 9600 })
  t.match(parseSerial('/dev/ttyACM0'), { kind: 'tty', baud: 115200 })
  t.throws(() => parseSerial('COM3'), { message: /give tcp:HOST:PORT or a device path/ })
  const none = await runCli(['gateway', '--no-ble', '--no-usb'], { cwd: tempDir(t) })
  t.same([none.code, none.stderr], [2, 'berth: give at least one --serial line, or leave USB or BLE on\n'])
  const badCap = await runCli(['gateway', '--spool-max', 'lots'], { cwd: tempDir(t) })
  t.same([badCap.code, badCap.stderr], [2, 'berth: --spool-max lots: give a positive number of MiB\n'])
  const noKey = await runCli(['gateway', '--serial', 'tcp:127.0.0.1:1'], { cwd: tempDir(t), env: { INGEST_API_KEY: '' } })
  t.equal(noKey.code, 2)
  t.match(noKey.stderr, /^berth: no device key: pass --api-key, set INGEST_API_KEY, or run on the server host \(.*ingest-api-key does not exist\)\n$/)
})

t.test('a tty line: frames written to a pseudo-terminal reach the server through the gateway', async t => {
  const server = await telemetryServer(t)
  // A real pseudo-terminal: the device side writes frames to the master, the gateway reads the slave
  // path as it would read /dev/ttyUSB0.
  const pty = await pseudoTerminal(t)
  const gateway = spawnCli(['gateway', '--serial', `${pty.path}@57600`, '--url', server.base.href, '--api-key', API_KEY, '--spool', tempDir(t), '--no-ble', '--no-usb'])
  t.teardown(() => { gateway.kill('SIGKILL') })
  await pollUntil(() => gateway.output().includes(`serial ${pty.path}@57600: open`), { what: 'the gateway to open the tty' })
  pty.write(Buffer.concat([Buffer.from('noise'), frame(11), frame(12)]))
  await pollUntil(() => /forwarded 2 frames: 2 accepted, 0 duplicate/.test(gateway.output()), { what: 'both frames forwarded' })
  t.equal(await server.service.telemetry.storage.chunkCount(), 2, 'and stored')
  gateway.kill('SIGTERM')
  t.equal(await exited(gateway), 0)
})

t.test('USB serial devices are found without naming them, also when plugged in later', async t => {
  const server = await telemetryServer(t)
  const byId = join(tempDir(t), 'by-id')
  mkdirSync(byId)
  const gateway = spawnCli(['gateway', '--usb-dir', byId, '--url', server.base.href, '--api-key', API_KEY, '--spool', tempDir(t), '--no-ble'])
  t.teardown(() => { gateway.kill('SIGKILL') })
  const pty = await pseudoTerminal(t)
  const link = join(byId, 'usb-Berth_Sensor_0001-if00')
  symlinkSync(pty.path, link) // what udev does when the device is plugged in
  await pollUntil(() => gateway.output().includes(`serial usb ${link}: open`), { what: 'the gateway to find and open the device' })
  t.match(gateway.output(), `USB: found ${link}`)
  pty.write(frame(31))
  await pollUntil(() => /forwarded 1 frames: 1 accepted/.test(gateway.output()), { what: 'its frame forwarded' })
  gateway.kill('SIGTERM')
  t.equal(await exited(gateway), 0)
})

t.test('frames refused for a reason that can change are kept until the server takes them; the others are dropped; both are counted', async t => {
  const server = await telemetryServer(t, { auto_register: false })
  const unknown = '5e1f000000000001'
  const pty = await pseudoTerminal(t)
  // Metrics on port 0: the gateway says where it serves them ("metrics on http://HOST:PORT/metrics").
  const gateway = spawnCli(['gateway', '--serial', pty.path, '--url', server.base.href, '--api-key', API_KEY, '--spool', tempDir(t), '--no-ble', '--no-usb', '--metrics', '127.0.0.1:0'])
  t.teardown(() => { gateway.kill('SIGKILL') })
  await pollUntil(() => gateway.output().includes('open'), { what: 'the gateway to open the line' })
  const metricsUrl = await pollUntil(() => /metrics on (http:\/\/127\.0\.0\.1:\d+\/metrics)/.exec(gateway.output())?.[1], { what: 'the gateway to say where its metrics are' })
  const undecodable = Buffer.from(encodeChunk({ device: unknown, sequence: 9, payload: SAMPLES[5], version: 2 }))
  undecodable.writeUInt8(0x80, undecodable.length - 5) // a payload that is not Avro (its last varint never ends), with a CRC that matches
  undecodable.writeUInt32LE(crc32(undecodable.subarray(0, undecodable.length - 4)), undecodable.length - 4)
  pty.write(Buffer.concat([frameV2(7, unknown), frameV2(8, unknown)]))
  await pollUntil(() => /kept 2 frame\(s\) the server refused for now \(unknown device 5e1f000000000001: register it first\)/.test(gateway.output()), { what: 'the unknown device\'s frames held' })
  await server.api('POST', '/devices/register', 'provisioner', { id: unknown })
  pty.write(undecodable)
  await pollUntil(() => /dropped 1 frame\(s\) the server can never accept \(Heartbeat payload is not valid Avro/.test(gateway.output()), { what: 'the undecodable frame dropped' })
  await pollUntil(() => /forwarded 2 held frames: 2 accepted/.test(gateway.output()), { what: 'the held frames taken once the device is registered', timeout: 30_000 })
  t.same((await (await server.api('GET', `/devices/${unknown}/reboots`, 'viewer')).json() as { items: unknown[] }).items, [], 'the device exists')
  t.equal(await server.service.telemetry.storage.chunkCount(), 2, 'both held chunks stored (and the undecodable one not)')
  const scraped = await (await fetch(metricsUrl)).text()
  t.match(scraped, /^berth_gateway_held_frames_total 2$/m)
  t.match(scraped, /^berth_gateway_dropped_frames_total\{reason="rejected"\} 1$/m)
  t.match(scraped, /^berth_gateway_forwarded_frames_total\{status="accepted"\} 2$/m)
  t.match(scraped, /^berth_gateway_spool_bytes\{spool="held"\} 0$/m)
  gateway.kill('SIGTERM')
  t.equal(await exited(gateway), 0)
})

t.test('an answer lost after the server stored a batch: the batch goes again as retransmissions, answered duplicate', async t => {
  const server = await telemetryServer(t)
  // Between gateway and server: the first request is passed on, and its answer thrown away.
  let requests = 0
  const relay = createServer((incoming, outgoing) => {
    const first = ++requests === 1
    const upstream = httpRequest(new URL('/ingest/chunks', server.base), { method: 'POST', headers: incoming.headers }, answer => {
      if (first) {
        answer.resume()
        answer.once('end', () => { outgoing.socket?.destroy() })
        return
      }
      outgoing.writeHead(answer.statusCode ?? 502, answer.headers)
      answer.pipe(outgoing)
    })
    incoming.pipe(upstream)
  })
  await new Promise<void>(resolve => relay.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { relay.closeAllConnections(); relay.close() })
  const pty = await pseudoTerminal(t)
  const gateway = spawnCli(['gateway', '--serial', pty.path, '--url', `http://127.0.0.1:${(relay.address() as AddressInfo).port}`, '--api-key', API_KEY, '--spool', tempDir(t), '--no-ble', '--no-usb'])
  t.teardown(() => { gateway.kill('SIGKILL') })
  await pollUntil(() => gateway.output().includes('open'), { what: 'the gateway to open the line' })
  pty.write(Buffer.concat([frameV2(41), frameV2(42)]))
  await pollUntil(() => /forwarded 2 frames: 0 accepted, 2 duplicate/.test(gateway.output()), { what: 'the batch sent again' })
  t.match(gateway.output(), /unreachable \((ECONNRESET|UND_ERR_SOCKET)\)/, 'the lost answer was seen as such')
  t.equal(await server.service.telemetry.storage.chunkCount(), 2, 'stored once each, although both reached the server twice')
  gateway.kill('SIGTERM')
  t.equal(await exited(gateway), 0)
})

t.test('BLE: devices offering the Berth service are found through BlueZ, their notifications forwarded, and a device that comes back is connected again', async t => {
  const server = await telemetryServer(t)
  const bus = await privateBus(t)
  const SENSOR = 'C4:7C:8D:6A:00:01'
  const HEART = 'C4:7C:8D:6A:00:02'
  const standin = await BluezStandin.start(t, bus, {
    adapter: true,
    devices: [
      { address: SENSOR, name: 'berth-sensor', services: [BERTH_BLE_SERVICE.toUpperCase()], gatt: { service: BERTH_BLE_SERVICE, characteristic: BERTH_BLE_CHUNKS } },
      { address: HEART, name: 'heart-rate', services: ['0000180d-0000-1000-8000-00805f9b34fb'] }
    ]
  })
  const gateway = spawnCli(['gateway', '--url', server.base.href, '--api-key', API_KEY, '--spool', tempDir(t)], { env: { DBUS_SYSTEM_BUS_ADDRESS: bus } })
  t.teardown(() => { gateway.kill('SIGKILL') })
  await standin.subscribed(SENSOR)
  t.same(standin.adapter?.filter, [BERTH_BLE_SERVICE], 'discovery asks BlueZ for the Berth service only')
  // As the firmware sends them: 20-byte notifications (the default ATT MTU), a frame in several.
  const packets = (sequence: number): Buffer[] => {
    const bytes = Buffer.from(encodeChunk({ device: DEVICE, sequence, payload: SAMPLES[0], version: 2 }))
    return Array.from({ length: Math.ceil(bytes.length / 20) }, (_, i) => bytes.subarray(20 * i, 20 * (i + 1)))
  }
  const first = [...packets(21), ...packets(22)]
  t.ok(first.length > 4, `${first.length} notifications for two chunks`)
  for (const packet of first) standin.notify(SENSOR, packet)
  const { storage } = server.service.telemetry
  await pollUntil(async () => await storage.chunkCount() === 2, { what: 'both chunks reassembled and stored' })

  standin.drop(SENSOR)
  await pollUntil(() => gateway.output().includes(`BLE ${SENSOR}: disconnected`), { what: 'the gateway to see the device go' })
  await pollUntil(() => standin.devices.get(SENSOR)?.device.connects === 2 && standin.devices.get(SENSOR)?.characteristic?.Notifying, { what: 'the device connected again', timeout: 15_000 })
  for (const packet of packets(23)) standin.notify(SENSOR, packet)
  await pollUntil(async () => await storage.chunkCount() === 3, { what: 'the chunk sent after reconnecting' })
  // The gateway says what it forwarded once the server's answer reaches it, which may be just after the server stored the chunk.
  const answered = (): [number, number] => {
    const lines = [...gateway.output().matchAll(/forwarded \d+ frames: (\d+) accepted, (\d+) duplicate/g)]
    return [lines.reduce((n, m) => n + Number(m[1]), 0), lines.reduce((n, m) => n + Number(m[2]), 0)]
  }
  await pollUntil(() => answered()[0] >= 3, { what: 'the gateway to report the third chunk accepted' })
  t.same(answered(), [3, 0], 'each chunk forwarded once: a device that came back is not heard twice')
  t.equal(standin.devices.get(HEART)?.device.connects, 0, 'a device without the Berth service is never connected')

  gateway.kill('SIGTERM')
  t.equal(await exited(gateway), 0)
  t.equal(standin.devices.get(SENSOR)?.characteristic?.Notifying, false, 'notifications stopped on the way out')
  t.equal(standin.adapter?.Discovering, false, 'discovery stopped on the way out')
})

t.test('BLE where it cannot be used: one line, and the serial lines go on; with nothing else to bridge, a refusal', async t => {
  const bus = await privateBus(t)
  await BluezStandin.start(t, bus, { adapter: false, devices: [] })
  const noAdapter = await runCli(['gateway', '--url', 'http://127.0.0.1:1', '--api-key', 'k', '--spool', tempDir(t), '--no-usb'], { env: { DBUS_SYSTEM_BUS_ADDRESS: bus } })
  t.same([noAdapter.code, noAdapter.stdout, noAdapter.stderr], [2,
    'gateway: BLE: BlueZ lists no adapter on this host; serial lines only\n',
    'berth: nothing to bridge: BLE cannot be used here, USB is off and no --serial line was given\n'])
  const noBus = spawnCli(['gateway', '--serial', 'tcp:127.0.0.1:1', '--url', 'http://127.0.0.1:1', '--api-key', 'k', '--spool', tempDir(t)],
    { env: { DBUS_SYSTEM_BUS_ADDRESS: `unix:path=${tempDir(t)}/no-such-bus` } })
  t.teardown(() => { noBus.kill('SIGKILL') })
  await pollUntil(() => noBus.output().includes('serial tcp:127.0.0.1:1: cannot open'), { what: 'the serial line to be tried' })
  t.match(noBus.output(), /^gateway: BLE: cannot use BlueZ on the system bus \(.*ENOENT.*\); serial lines only$/m)
  noBus.kill('SIGTERM')
  t.equal(await exited(noBus), 0)
})
