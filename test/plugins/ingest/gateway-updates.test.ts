// Firmware updates through the gateway (docs/firmware-updates.md): the "BU" frames encoded and decoded
// (round trips, refused payloads), split out of a noisy line beside the telemetry frames (bad CRCs and
// bad lengths resynchronised, update frames not counted as skipped); and the whole way with a real
// server, the real `berth gateway` process and a STAND-IN for the device written here (the QEMU device
// is tested with the firmware): the stand-in listens on TCP as an emulator's UART does, downloads a
// signed image through the gateway, which fetches it from the server by range requests; the gateway is
// restarted mid-transfer and the download resumes from the device's offset; the device's state, its
// result and its revert reach /ota/status and its timeline, and the revert halts the release.
import t, { type Test } from 'tap'
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { createServer, type Server, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'
import { FrameSplitter } from '../../../plugins/ingest/gateway/frames.js'
import { decodeUpdate, encodeUpdate, updateFrame, type DeviceState, type UpdateMessage } from '../../../plugins/ingest/gateway/update-frames.js'
import { buildImage, generateFleetKey, parsePrivateKey, parsePublicKey, verifyImage } from '../../../plugins/ingest/ota-image.js'
import type { Release } from '../../../plugins/ingest/ota-releases.js'
import { encodeChunk } from '../../../plugins/ingest/wire/encoder.js'
import { exited, spawnCli, type RunningCli } from '../../support/cli.js'
import { pollUntil } from '../../support/poll.js'
import { tempDir } from '../../support/tmp.js'
import { API_KEY, basic, telemetryServer } from './harness.js'
import { SAMPLES } from './samples.js'

const SHA = 'ab'.repeat(32)
const STATE: DeviceState = {
  device: '0b00000000000001',
  softwareType: 'main',
  version: '1.0.0',
  runningSlot: 0,
  slots: [{ state: 'confirmed', version: '1.0.0', image: 'cd'.repeat(32) }, { state: 'empty', version: null, image: null }],
  download: { image: SHA, received: 70_000 },
  event: { kind: 'revert', slot: 1 }
}
const MESSAGES: UpdateMessage[] = [
  { type: 'state', state: STATE },
  { type: 'state', state: { ...STATE, download: null, event: null } },
  { type: 'offer', offer: { image: SHA, size: 150_000, version: '1.1.0' } },
  { type: 'request', request: { image: SHA, offset: 1024, length: 512 } },
  { type: 'block', block: { image: SHA, offset: 1024, bytes: Buffer.alloc(512, 9) } },
  { type: 'result', result: { image: SHA, status: 'digest_mismatch' } },
  { type: 'none' }
]

t.test('update frames round trip; payloads that are not what their type says are refused', async t => {
  for (const message of MESSAGES) t.same(decodeUpdate(encodeUpdate(message)), message, message.type)
  const state = encodeUpdate(MESSAGES[0])
  t.equal(state.length - 10, 209, 'a state payload is 209 bytes')
  t.same([state.subarray(0, 2).toString('latin1'), state[2], state[3], state.readUInt16LE(4)], ['BU', 1, 1, 209])
  t.equal(encodeUpdate(MESSAGES[4]).length, 10 + 548, 'a block of 512 bytes fills the largest payload')
  t.throws(() => updateFrame('block', Buffer.alloc(549)), { message: 'a block payload of 549 bytes is over 548' })
  t.throws(() => decodeUpdate(updateFrame('state', encodeUpdate(MESSAGES[0]).subarray(6, 106))), { message: 'a state payload of 100 bytes is too short' })
  t.throws(() => decodeUpdate(updateFrame('none', Buffer.alloc(1))), { message: 'a none payload of 1 bytes is too long (0 expected)' })
  const request = (length: number): Buffer => encodeUpdate({ type: 'request', request: { image: SHA, offset: 0, length } })
  t.throws(() => decodeUpdate(request(513)), { message: 'a request for 513 bytes; 1-512 may be asked for' })
  t.throws(() => decodeUpdate(request(0)), { message: /a request for 0 bytes/ })
  const unknown = updateFrame('none')
  unknown[3] = 7
  t.throws(() => decodeUpdate(unknown), { message: 'update frame type 7 is not one of 1-6' })
})

t.test('update frames are split out of a noisy line beside telemetry frames, whatever the pieces', async t => {
  const telemetry = [1, 2].map(sequence => Buffer.from(encodeChunk({ device: STATE.device, sequence, payload: SAMPLES[5] })))
  const updates = MESSAGES.slice(2, 5).map(encodeUpdate)
  const badCrc = Buffer.from(updates[0])
  badCrc[8] ^= 0xff
  const tooLong = Buffer.from(updateFrame('none'))
  tooLong.writeUInt16LE(549, 4) // a length no update frame has: resynchronised at once, not waited for
  const noise = [Buffer.from('boot: hello BU'), badCrc, tooLong, Buffer.from('B')]
  const stream = Buffer.concat([noise[0], updates[0], telemetry[0], noise[1], updates[1], noise[2], telemetry[1], updates[2], noise[3]])
  for (const size of [1, 7, 64, stream.length]) {
    const seen: Buffer[] = []
    const splitter = new FrameSplitter(frame => { seen.push(frame) })
    const frames: Buffer[] = []
    for (let at = 0; at < stream.length; at += size) frames.push(...splitter.push(stream.subarray(at, at + size)))
    t.same(frames.map(f => f.toString('hex')), telemetry.map(f => f.toString('hex')), `pieces of ${size}: the telemetry frames`)
    t.same(seen.map(f => f.toString('hex')), updates.map(f => f.toString('hex')), `pieces of ${size}: the update frames, to their handler`)
    t.equal(splitter.skipped, noise[0].length + noise[1].length + noise[2].length, 'only the noise skipped (a trailing "B" kept for a sync)')
  }
  const without = new FrameSplitter()
  t.same(without.push(Buffer.concat([updates[0], telemetry[0]])).length, 1, 'without a handler, update frames are noise')
  t.equal(without.skipped, updates[0].length)
})

/**
 * A stand-in for the device's UART end, as QEMU offers it (`-serial tcp::PORT,server`): it sends a
 * telemetry frame and its `state` whenever the gateway connects, takes an offer, asks for 512 bytes at
 * a time from what it has, verifies the whole image's digest and signature, and reports as the
 * device's bootloader and application would. `holdAt`: it stops asking there until `release()`.
 */
class StandinDevice {
  readonly server: Server
  socket: Socket | undefined
  connections = 0
  image = Buffer.alloc(0)
  offer: { image: string, size: number, version: string } | undefined
  answers: string[] = []
  state: DeviceState
  #holding = false
  #sequence = 0

  constructor (readonly publicHex: string, public holdAt: number) {
    this.state = { device: '0b00000000000001', softwareType: 'main', version: '1.0.0', runningSlot: 0, slots: [{ state: 'confirmed', version: '1.0.0', image: 'cd'.repeat(32) }, { state: 'empty', version: null, image: null }], download: null, event: null }
    this.server = createServer(socket => { this.#connected(socket) })
  }

  async listen (): Promise<number> {
    await new Promise<void>(resolve => this.server.listen(0, '127.0.0.1', resolve))
    return (this.server.address() as AddressInfo).port
  }

  #connected (socket: Socket): void {
    this.socket = socket
    this.connections++
    const splitter = new FrameSplitter(frame => { this.#take(decodeUpdate(frame)) })
    socket.on('data', (bytes: Buffer) => { splitter.push(bytes) })
    socket.on('error', () => {})
    socket.write(Buffer.from(encodeChunk({ device: this.state.device, sequence: ++this.#sequence, payload: SAMPLES[5] })))
    this.sendState()
  }

  send (message: UpdateMessage): void {
    this.socket?.write(encodeUpdate(message))
  }

  sendState (): void {
    const download = this.offer === undefined || this.image.length === this.offer.size ? null : { image: this.offer.image, received: this.image.length }
    this.send({ type: 'state', state: { ...this.state, download } })
  }

  #ask (): void {
    if (this.offer === undefined) return
    if (this.image.length >= this.holdAt && this.holdAt > 0) {
      this.#holding = true
      return
    }
    this.send({ type: 'request', request: { image: this.offer.image, offset: this.image.length, length: Math.min(512, this.offer.size - this.image.length) } })
  }

  /** Go on after a hold (on the line connected now). */
  release (): void {
    this.holdAt = 0
    if (this.#holding) this.#ask()
    this.#holding = false
  }

  #take (message: UpdateMessage): void {
    this.answers.push(message.type)
    if (message.type === 'offer') {
      if (this.offer?.image !== message.offer.image) this.image = Buffer.alloc(0)
      this.offer = message.offer
      this.#ask()
    } else if (message.type === 'block' && this.offer !== undefined && message.block.offset === this.image.length) {
      this.image = Buffer.concat([this.image, message.block.bytes])
      if (this.image.length < this.offer.size) this.#ask()
      else this.#downloaded()
    }
  }

  #downloaded (): void {
    if (this.offer === undefined) return
    const digestOk = createHash('sha256').update(this.image).digest('hex') === this.offer.image
    let signed = true
    try { verifyImage(this.image, parsePublicKey(this.publicHex, 'fleet key')) } catch { signed = false }
    this.send({ type: 'result', result: { image: this.offer.image, status: !digestOk ? 'digest_mismatch' : !signed ? 'bad_signature' : 'verified' } })
    if (!digestOk || !signed) return
    this.state = { ...this.state, slots: [this.state.slots[0], { state: 'pending', version: this.offer.version, image: this.offer.image }] }
    this.sendState()
  }
}

/** A pseudo-terminal (python's os.openpty) for the device's end: hex lines written go in at the master, what the gateway writes to the slave comes out. */
async function pseudoTerminal (t: Test): Promise<{ path: string, write(bytes: Buffer): void, read(): Buffer }> {
  const pty = spawn('python3', ['-c', [
    'import os, sys, threading',
    'master, slave = os.openpty()',
    'print(os.ttyname(slave), flush=True)',
    'def feed():',
    '    for line in sys.stdin:',
    '        os.write(master, bytes.fromhex(line.strip()))',
    'threading.Thread(target=feed, daemon=True).start()',
    'while True:',
    '    print(os.read(master, 4096).hex(), flush=True)'
  ].join('\n')], { stdio: ['pipe', 'pipe', 'inherit'] })
  t.teardown(() => { pty.kill('SIGKILL') })
  let out = ''
  pty.stdout.on('data', (chunk: Buffer) => { out += chunk.toString() })
  const path = await pollUntil(() => out.includes('\n') ? out.slice(0, out.indexOf('\n')) : undefined, { what: 'the pseudo-terminal' })
  return { path, write: bytes => { pty.stdin.write(`${bytes.toString('hex')}\n`) }, read: () => Buffer.from(out.split('\n').slice(1).join(''), 'hex') }
}

t.test('a tty line is written to: a state on a pseudo-terminal is answered there', async t => {
  const server = await telemetryServer(t)
  const pty = await pseudoTerminal(t)
  const gateway = spawnCli(['gateway', '--serial', pty.path, '--url', server.base.href, '--api-key', API_KEY, '--spool', tempDir(t), '--no-ble', '--no-usb'])
  t.teardown(() => { gateway.kill('SIGKILL') })
  await pollUntil(() => gateway.output().includes(`serial ${pty.path}: open`), { what: 'the gateway to open the tty' })
  pty.write(encodeUpdate({ type: 'state', state: { ...STATE, device: 'ffffffffffffff01' } }))
  const answered = await pollUntil(() => {
    const answers: UpdateMessage[] = []
    new FrameSplitter(frame => { answers.push(decodeUpdate(frame)) }).push(pty.read())
    return answers.length > 0 ? answers : undefined
  }, { what: 'an answer on the tty' })
  t.same(answered, [{ type: 'none' }], 'an unknown device is offered nothing')
  t.match(gateway.output(), /update ffffffffffffff01: its state was not reported \(POST \/ota\/status answered 404: .*device ffffffffffffff01 does not exist/)
  gateway.kill('SIGTERM')
  t.equal(await exited(gateway), 0)
})

async function startGateway (port: number, url: URL, spool: string): Promise<RunningCli> {
  const gateway = spawnCli(['gateway', '--serial', `tcp:127.0.0.1:${port}`, '--url', url.href, '--api-key', API_KEY, '--spool', spool, '--no-ble', '--no-usb'])
  await pollUntil(() => gateway.output().includes(`serial tcp:127.0.0.1:${port}: open`), { what: 'the gateway to open the line' })
  return gateway
}

t.test('a signed image through the real gateway: range requests, a gateway restart mid-transfer, the reports, and a revert that halts the release', async t => {
  const fleet = generateFleetKey()
  const server = await telemetryServer(t, { ota_public_key: fleet.publicHex })
  const device = '0b00000000000001'
  const info = encodeChunk({ device, sequence: 100, payload: { type: 'DeviceInfo', record: { serial: 'SN-UART', hardware_version: 'mps2', software_type: 'main', software_version: '1.0.0', build_id: 'b'.repeat(16) } } })
  t.equal((await server.ingest(info)).json.accepted, 1)
  const payload = Buffer.from(Array.from({ length: 150_000 }, (_, i) => (i * 7) % 256))
  const image = buildImage({ version: '1.1.0', softwareType: 'main', loadAddress: 0x00100000 }, payload, parsePrivateKey(fleet.privatePem, 'key'))
  const sha256 = createHash('sha256').update(image).digest('hex')
  const uploaded = await fetch(new URL('/ota/images?software_type=main&version=1.1.0', server.base), { method: 'POST', headers: { authorization: basic('provisioner'), 'content-type': 'application/octet-stream' }, body: image })
  t.match(await uploaded.json(), { id: sha256, signed: true })
  const release = await (await server.api('POST', '/ota/releases', 'provisioner', { image: sha256, halt_reverts: 1 })).json() as Release

  const standin = new StandinDevice(fleet.publicHex, 80_000)
  const port = await standin.listen()
  t.teardown(() => { standin.socket?.destroy(); standin.server.close() })
  const spool = tempDir(t)
  let gateway = await startGateway(port, server.base, spool)
  t.teardown(() => { gateway.kill('SIGKILL') })
  await pollUntil(() => standin.image.length >= 80_000, { what: 'the first 80,000 bytes through the gateway', timeout: 30_000 })
  t.same(standin.answers.slice(0, 2), ['offer', 'block'], 'its state was answered with an offer, its request with a block')

  // The gateway restarts mid-transfer: the device's next state says what it has, and it asks on from there.
  gateway.kill('SIGTERM')
  t.equal(await exited(gateway), 0)
  const firstOutput = gateway.output()
  gateway = await startGateway(port, server.base, spool)
  await pollUntil(() => standin.connections === 2, { what: 'the gateway to connect again' })
  standin.release()
  await pollUntil(() => standin.image.length === image.length, { what: 'the rest of the image', timeout: 30_000 })
  t.ok(standin.image.equals(image), 'the device has the image, byte for byte')
  t.match(gateway.output(), new RegExp(`update ${device}: offered 1\\.1\\.0 \\(${image.length} bytes, sha256 ${sha256.slice(0, 12)}\\), it has 80384 bytes of it`), 'offered again with what the device has')
  t.match(gateway.output(), `serving ${sha256.slice(0, 12)} from byte 80384`, 'and served from there')

  // Verified (pending), then booted for its test (testing), then reset before confirming: reverted.
  await pollUntil(async () => ((await (await server.api('GET', `/devices/${device}/slots`, 'viewer')).json()) as { slots: Array<{ state: string }> }).slots[1]?.state === 'pending', { what: 'slot 1 reported pending' })
  standin.state = { ...standin.state, runningSlot: 1, version: '1.1.0', slots: [standin.state.slots[0], { ...standin.state.slots[1], state: 'testing' }] }
  standin.sendState()
  standin.state = { ...standin.state, runningSlot: 0, version: '1.0.0', slots: [standin.state.slots[0], { ...standin.state.slots[1], state: 'bad' }], event: { kind: 'revert', slot: 1 } }
  standin.sendState()
  const halted = await pollUntil(async () => {
    const { release: current } = await (await server.api('GET', `/ota/releases/${release.id}`, 'viewer')).json() as { release: Release }
    return current.state === 'halted' ? current : undefined
  }, { what: 'the release halted by the revert' })
  t.equal(halted.reason, 'halted: 1 revert of 1 device offered version 1.1.0 (it halts at 1)')
  t.match(await (await server.api('GET', `/devices/${device}/slots`, 'viewer')).json(), {
    running_slot: 0, slots: [{ slot: 0, state: 'confirmed', version: '1.0.0' }, { slot: 1, state: 'bad', version: '1.1.0', image: sha256 }], download: null
  })
  await pollUntil(() => gateway.output().includes(`its revert halted release ${release.id}`), { what: 'the gateway to say so' })

  const { entries } = await (await server.api('GET', `/devices/${device}/timeline`, 'viewer')).json() as { entries: Array<{ kind: string, summary: string }> }
  const ota = entries.filter(e => e.kind === 'ota').map(e => e.summary)
  t.equal(ota[0], `OTA: offered 1.1.0 (release ${release.id.slice(0, 8)})`)
  const downloads = ota.filter(s => s.startsWith('OTA: download'))
  t.equal(downloads[0], `OTA: download started 1.1.0, bytes 0–65535 of ${image.length}`, 'the gateway fetched a window at a time by range requests')
  t.ok(downloads.some(s => /^OTA: download of 1\.1\.0 broke off: bytes 65536–131071 of \d+ sent, the device kept bytes 65536–80383 \(it asked again from byte 80384\)$/.test(s)), 'the restart shows where the device resumed')
  t.match(downloads.at(-1), new RegExp(`^OTA: download resumed 1\\.1\\.0, bytes \\d+–${image.length - 1} of ${image.length}$`))
  t.same(ota.slice(-2), ['OTA: 1.1.0 downloaded and verified, to be tested at the next boot', 'OTA: 1.1.0 reverted in slot 1: it did not confirm itself before a reset; the other slot boots'])
  t.equal((await fetch(new URL(`/ota/update?device=${device}`, server.base), { headers: { 'x-api-key': API_KEY } })).status, 204, 'nothing more is offered')

  // The telemetry frames on the same line went on to the server; no update byte was taken for noise.
  t.ok(await server.service.telemetry.storage.chunkCount() >= 3, 'the device\'s telemetry frames were stored')
  t.notMatch(firstOutput + gateway.output(), /skipped/, 'nothing on the line was skipped as noise')
  gateway.kill('SIGTERM')
  t.equal(await exited(gateway), 0)
})
