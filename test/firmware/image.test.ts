// The firmware SDK's image verification on the host (firmware/test/image.c, BERTH_UPDATES): RFC 8032's
// Ed25519 test vectors (section 7.1: TEST 1, 2, 3, 1024 and SHA(abc)) verify with the vendored
// orlp/ed25519 and a flipped bit in each is refused; an image signed here with node:crypto is accepted,
// and the same image tampered with, cut short, with a broken header or checked against another key is
// refused, each with its own status. The bootloader's choice of slot and the application's
// confirmation (firmware/test/slots.c) run on the host with the slots in memory, and so does the update
// receiver (firmware/test/receiver.c), over TCP to the stand-in gateway of test/firmware/updates.test.ts.
import t from 'tap'
import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { writeFile } from 'node:fs/promises'
import { createServer, type AddressInfo } from 'node:net'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { requireComponent } from '../support/component.js'
import { hostToolchain, make, tapLines } from '../support/firmware.js'
import { fleetKey, signImage } from '../support/signed-images.js'
import { tempDir } from '../support/tmp.js'
import { UpdateStandin, type Offer } from '../support/update-standin.js'

const run = promisify(execFile)
const toolchain = await requireComponent(t, 'gcc', hostToolchain)

if (toolchain !== undefined) {
  const dir = tempDir(t, 'berth-image-')
  await make('image-tests', dir)
  const program = join(dir, 'image')

  t.test('RFC 8032 section 7.1: each vector verifies, and a bit flipped in its R, S, message or key is refused', async t => {
    const lines = tapLines((await run(program, ['rfc8032'])).stdout)
    for (const name of ['TEST 1', 'TEST 2', 'TEST 3', 'TEST 1024', 'TEST SHA(abc)']) {
      t.ok(lines.some(line => line.ok && line.name === `${name}: verifies`), `${name} verifies`)
    }
    t.equal(lines.length, 24, 'five vectors, each verified and refused with a bit flipped in R, S and the key, and in the message of the four with one')
    for (const line of lines) t.ok(line.ok, line.name)
  })

  t.test('images signed with node:crypto: accepted as made, refused tampered, truncated, malformed or under another key', async t => {
    const fleet = fleetKey()
    const other = fleetKey()
    const payload = Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 31 + 7) % 256))
    const image = signImage(payload, { version: '2.0.0', softwareType: 'qemu-updatable', loadAddress: 0x00100000 }, fleet.privateKey)
    const status = async (name: string, bytes: Buffer, key = fleet.publicRaw): Promise<string> => {
      const file = join(dir, `${name}.bin`)
      await writeFile(file, bytes)
      return (await run(program, ['verify', key.toString('hex'), file])).stdout.trim()
    }
    const flipped = (offset: number): Buffer => { const copy = Buffer.from(image); copy[offset] ^= 0x01; return copy }
    t.equal(await status('good', image), 'ok qemu-updatable 2.0.0 5000 0x00100000', 'the signed image is accepted, its header read')
    t.equal(await status('payload', flipped(64 + 2500)), 'bad-signature', 'a bit flipped in the payload')
    t.equal(await status('version', flipped(16)), 'bad-signature', 'a bit flipped in the header\'s version')
    t.equal(await status('signature', flipped(image.length - 1)), 'bad-signature', 'a bit flipped in the signature')
    t.equal(await status('other-key', image, other.publicRaw), 'bad-signature', 'checked against another key')
    t.equal(await status('other-signer', signImage(payload, { version: '2.0.0', softwareType: 'qemu-updatable', loadAddress: 0x00100000 }, other.privateKey)), 'bad-signature', 'signed by another key')
    t.equal(await status('cut', image.subarray(0, image.length - 1)), 'truncated', 'one byte short of its signature')
    t.equal(await status('header-only', image.subarray(0, 64)), 'truncated', 'its header alone')
    t.equal(await status('short', image.subarray(0, 40)), 'truncated', 'less than a header')
    t.equal(await status('magic', flipped(0)), 'bad-header', 'a bit flipped in the magic')
    t.equal(await status('format', flipped(6)), 'bad-header', 'another format')
    const empty = Buffer.from(image)
    empty.writeUInt32LE(0, 8)
    t.equal(await status('empty', empty), 'bad-header', 'an empty payload')
  })

  t.test('the bootloader\'s choice and the confirmation (firmware/test/slots.c, the slots in memory): install, test, revert, confirm, refuse', async t => {
    const fleet = fleetKey()
    const fields = { softwareType: 'qemu-updatable', loadAddress: 0x00100000 }
    const factory = signImage(Buffer.alloc(3000, 0x11), { ...fields, version: '1.0.0' }, fleet.privateKey)
    const update = signImage(Buffer.alloc(4000, 0x22), { ...fields, version: '2.0.0' }, fleet.privateKey)
    await writeFile(join(dir, 'factory.img'), factory)
    await writeFile(join(dir, 'update.img'), update)
    const { stdout } = await run(join(dir, 'slots'), [fleet.publicRaw.toString('hex'), join(dir, 'factory.img'), join(dir, 'update.img')])
    const lines = tapLines(stdout)
    t.equal(lines.length, 15, 'fifteen checks ran')
    for (const line of lines) t.ok(line.ok, line.name)
  })

  t.test('the update receiver on the host, over TCP to the stand-in gateway: a download verified and pending, a tampered one refused, nothing offered, no answer', async t => {
    const fleet = fleetKey()
    const fields = { softwareType: 'qemu-updatable', loadAddress: 0x00100000 }
    const factory = join(dir, 'receiver-factory.img')
    await writeFile(factory, signImage(Buffer.alloc(3000, 0x11), { ...fields, version: '1.0.0' }, fleet.privateKey))
    const update = signImage(Buffer.from(Array.from({ length: 5000 }, (_, i) => i % 251)), { ...fields, version: '2.0.0' }, fleet.privateKey)
    const tampered = Buffer.from(update)
    tampered[64 + 4000] ^= 0x04
    const session = async (offer: Offer | undefined): Promise<{ output: string, standin: UpdateStandin }> => {
      const standin = await UpdateStandin.listen()
      standin.policy = () => offer
      try {
        const { stdout } = await run(join(dir, 'receiver'), [String(standin.port), fleet.publicRaw.toString('hex'), factory], { timeout: 20_000 })
        return { output: stdout.trim(), standin }
      } finally {
        await standin.close()
      }
    }
    const ready = await session({ image: update, version: '2.0.0' })
    t.equal(ready.output, 'ready, next boot: slot 1 testing', 'downloaded, verified, pending: the next boot tests it')
    t.match(ready.standin.states[0], { device: 'c0ffee0000000042', softwareType: 'qemu-updatable', version: '1.0.0', running: 0, slots: [{ state: 'confirmed' }, { state: 'empty' }] }, 'the state the receiver sent')
    const blocks = Math.ceil(update.length / 512)
    t.same(ready.standin.requests.map(r => [r.offset, r.length]), Array.from({ length: blocks }, (_, i) => [i * 512, Math.min(512, update.length - i * 512)]), `${blocks} requests in order, 512 bytes each but the last`)
    t.same(ready.standin.results, [{ sha256: createHash('sha256').update(update).digest('hex'), status: 1 }])
    const refused = await session({ image: tampered, version: '2.0.0' })
    t.equal(refused.output, 'refused, next boot: slot 0 confirmed', 'a tampered image is refused; 1.0.0 boots on')
    t.equal(refused.standin.results[0]?.status, 2, 'result: bad signature')
    t.equal((await session(undefined)).output, 'none, next boot: slot 0 confirmed', 'nothing offered')
    // A listener that never answers: the state is sent again three times, then the session ends.
    const silent = createServer(socket => { socket.resume() })
    await new Promise<void>(resolve => silent.listen(0, '127.0.0.1', resolve))
    t.teardown(() => { silent.close() })
    const { stdout } = await run(join(dir, 'receiver'), [String((silent.address() as AddressInfo).port), fleet.publicRaw.toString('hex'), factory], { timeout: 20_000 })
    t.equal(stdout.trim(), 'no-answer, next boot: slot 0 confirmed', 'no answer')
  })
}
