// The gateway's parts: frames split out of a noisy byte stream in any pieces (bad CRCs skipped), a
// spool that survives a restart and forwards from where the server last acknowledged, and the
// one-line refusals of its command, a real pseudo-terminal as a tty line, and BLE devices through a
// real D-Bus with a STAND-IN for BlueZ and its radio (no Bluetooth hardware here). (The whole bridge,
// over QEMU's UART, runs in test/e2e/device.test.ts.)
import t from 'tap'
import { spawn } from 'node:child_process'
import { FrameSplitter } from '../../../plugins/ingest/gateway/frames.js'
import { Spool } from '../../../plugins/ingest/gateway/spool.js'
import { parseSerial } from '../../../plugins/ingest/gateway/sources.js'
import { encodeChunk } from '../../../plugins/ingest/wire/encoder.js'
import { BERTH_BLE_CHUNKS, BERTH_BLE_SERVICE } from '../../../plugins/ingest/gateway/ble.js'
import { BluezStandin, privateBus } from '../../support/bluez-standin.js'
import { exited, runCli, spawnCli } from '../../support/cli.js'
import { pollUntil } from '../../support/poll.js'
import { tempDir } from '../../support/tmp.js'
import { API_KEY, telemetryServer } from './harness.js'
import { DEVICE, SAMPLES } from './samples.js'

const frame = (sequence: number): Buffer => Buffer.from(encodeChunk({ device: DEVICE, sequence, payload: SAMPLES[5] }))

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
  t.same(again.next(1 << 20).frames.map(f => f.readUInt32LE(16)), [3], 'after a restart: only the unacknowledged frame')
  again.append([frame(4)])
  const rest = again.next(frame(3).length) // a byte budget of one frame
  t.same(rest.frames.map(f => f.readUInt32LE(16)), [3], 'batches keep to their byte budget')
  again.acknowledge(again.next(1 << 20).end)
  t.equal(again.pending, 0)
  again.close()
})

t.test('serial lines are checked, and the command refuses what it cannot use in one line', async t => {
  t.match(parseSerial('tcp:127.0.0.1:4444'), { kind: 'tcp', host: '127.0.0.1', port: 4444 })
  t.match(parseSerial('/dev/ttyUSB0@9600'), { kind: 'tty', path: '/dev/ttyUSB0', baud: 9600 })
  t.match(parseSerial('/dev/ttyACM0'), { kind: 'tty', baud: 115200 })
  t.throws(() => parseSerial('COM3'), { message: /give tcp:HOST:PORT or a device path/ })
  const none = await runCli(['gateway', '--no-ble'], { cwd: tempDir(t) })
  t.same([none.code, none.stderr], [2, 'berth: give at least one --serial line, or leave BLE on\n'])
  const noKey = await runCli(['gateway', '--serial', 'tcp:127.0.0.1:1'], { cwd: tempDir(t), env: { INGEST_API_KEY: '' } })
  t.equal(noKey.code, 2)
  t.match(noKey.stderr, /^berth: no device key: pass --api-key, set INGEST_API_KEY, or run on the server host \(.*ingest-api-key does not exist\)\n$/)
})

t.test('a tty line: frames written to a pseudo-terminal reach the server through the gateway', async t => {
  const server = await telemetryServer(t)
  // A real pseudo-terminal (python's os.openpty): the device side writes frames to the master, the
  // gateway reads the slave path as it would read /dev/ttyUSB0.
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
  const gateway = spawnCli(['gateway', '--serial', `${path}@57600`, '--url', server.base.href, '--api-key', API_KEY, '--spool', tempDir(t), '--no-ble'])
  t.teardown(() => { gateway.kill('SIGKILL') })
  await pollUntil(() => gateway.output().includes(`serial ${path}@57600: open`), { what: 'the gateway to open the tty' })
  pty.stdin.write(`${Buffer.concat([Buffer.from('noise'), frame(11), frame(12)]).toString('hex')}\n`)
  await pollUntil(() => /forwarded 2 frames: 2 accepted, 0 duplicate/.test(gateway.output()), { what: 'both frames forwarded' })
  t.equal(server.service.telemetry.store.seen.getKeysCount(), 2, 'and stored')
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
  // A chunk in 20-byte fragments (the firmware's BLE MTU), one frame per notification.
  const packets = (sequence: number): Buffer[] => new FrameSplitter().push(Buffer.from(encodeChunk({ device: DEVICE, sequence, payload: SAMPLES[0], mtu: 20 })))
  const first = [...packets(21), ...packets(22)]
  t.ok(first.length > 4, `fragmented: ${first.length} notifications for two chunks`)
  for (const packet of first) standin.notify(SENSOR, packet)
  await pollUntil(() => server.service.telemetry.store.seen.getKeysCount() === 2, { what: 'both chunks reassembled and stored' })

  standin.drop(SENSOR)
  await pollUntil(() => gateway.output().includes(`BLE ${SENSOR}: disconnected`), { what: 'the gateway to see the device go' })
  await pollUntil(() => standin.devices.get(SENSOR)?.device.connects === 2 && standin.devices.get(SENSOR)?.characteristic?.Notifying, { what: 'the device connected again', timeout: 15_000 })
  for (const packet of packets(23)) standin.notify(SENSOR, packet)
  await pollUntil(() => server.service.telemetry.store.seen.getKeysCount() === 3, { what: 'the chunk sent after reconnecting' })
  t.equal(standin.devices.get(HEART)?.device.connects, 0, 'a device without the Berth service is never connected')

  gateway.kill('SIGTERM')
  t.equal(await exited(gateway), 0)
  t.equal(standin.devices.get(SENSOR)?.characteristic?.Notifying, false, 'notifications stopped on the way out')
  t.equal(standin.adapter?.Discovering, false, 'discovery stopped on the way out')
})

t.test('BLE where it cannot be used: one line, and the serial lines go on; with nothing else to bridge, a refusal', async t => {
  const bus = await privateBus(t)
  await BluezStandin.start(t, bus, { adapter: false, devices: [] })
  const noAdapter = await runCli(['gateway', '--url', 'http://127.0.0.1:1', '--api-key', 'k', '--spool', tempDir(t)], { env: { DBUS_SYSTEM_BUS_ADDRESS: bus } })
  t.same([noAdapter.code, noAdapter.stdout, noAdapter.stderr], [2,
    'gateway: BLE: BlueZ lists no adapter on this host; serial lines only\n',
    'berth: nothing to bridge: BLE cannot be used here and no --serial line was given\n'])
  const noBus = spawnCli(['gateway', '--serial', 'tcp:127.0.0.1:1', '--url', 'http://127.0.0.1:1', '--api-key', 'k', '--spool', tempDir(t)],
    { env: { DBUS_SYSTEM_BUS_ADDRESS: `unix:path=${tempDir(t)}/no-such-bus` } })
  t.teardown(() => { noBus.kill('SIGKILL') })
  await pollUntil(() => noBus.output().includes('serial tcp:127.0.0.1:1: cannot open'), { what: 'the serial line to be tried' })
  t.match(noBus.output(), /^gateway: BLE: cannot use BlueZ on the system bus \(.*ENOENT.*\); serial lines only$/m)
  noBus.kill('SIGTERM')
  t.equal(await exited(noBus), 0)
})
