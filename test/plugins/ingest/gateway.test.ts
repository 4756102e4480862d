// The gateway's parts: frames split out of a noisy byte stream in any pieces (bad CRCs skipped), a
// spool that survives a restart and forwards from where the server last acknowledged, and the
// one-line refusals of its command, and a real pseudo-terminal as a tty line. (The whole bridge, over
// QEMU's UART, runs in test/e2e/device.test.ts.)
import t from 'tap'
import { spawn } from 'node:child_process'
import { FrameSplitter } from '../../../plugins/ingest/gateway/frames.js'
import { Spool } from '../../../plugins/ingest/gateway/spool.js'
import { parseSerial } from '../../../plugins/ingest/gateway/sources.js'
import { encodeChunk } from '../../../plugins/ingest/wire/encoder.js'
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
  const none = await runCli(['gateway'], { cwd: tempDir(t) })
  t.same([none.code, none.stderr], [2, 'berth: give at least one --serial line\n'])
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
  await pollUntil(() => server.service.telemetry.store.seen.getKeysCount() === 2, { what: 'both frames stored' })
  t.match(gateway.output(), /forwarded 2 frames: 2 accepted, 0 duplicate/)
  gateway.kill('SIGTERM')
  t.equal(await exited(gateway), 0)
})
