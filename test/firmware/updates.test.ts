// Signed A/B updates on the QEMU example, end to end on the device: the bootloader and application of
// `make qemu-updatable` (firmware/examples/qemu-updatable) run in qemu-system-arm with the signed factory
// image, their UART on a TCP connection to a stand-in for the gateway written here
// (test/support/update-standin.ts; the real gateway is `berth gateway`). The device reports its state,
// is offered a signed 2.0.0, downloads it a block at a time (resuming after a reset and after a broken
// connection, asking again for blocks damaged on the line), boots it for testing and stays on it once it confirms itself; a 2.0.0 that hangs before
// confirming is reverted by the bootloader after the watchdog's reset, and 1.0.0 reports the revert;
// tampered, truncated and foreign-key images are refused on the device, and 1.0.0 runs on. The size
// table of the update feature's parts (firmware/size-updates.sh) is read off the same build.
import t from 'tap'
import { createHash } from 'node:crypto'
import { writeFile } from 'node:fs/promises'
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { requireComponent } from '../support/component.js'
import { armToolchain, FIRMWARE_DIR } from '../support/firmware.js'
import { pollUntil } from '../support/poll.js'
import { fleetKey, signImage } from '../support/signed-images.js'
import { tempDir, type Teardown } from '../support/tmp.js'
import { buildUpdatable, EXECUTION, runUpdatable, UpdateStandin, type DeviceState, type UpdatableBuild } from '../support/update-standin.js'

const compiler = await requireComponent(t, 'arm-none-eabi-gcc and qemu-system-arm', armToolchain)
const run = promisify(execFile)
const sha = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex')

/** A device running the factory image 1.0.0 with a stand-in gateway; stopped at the test's end. */
async function device (t: Teardown, build: UpdatableBuild, name: string): Promise<{ standin: UpdateStandin, reset: () => Promise<void>, latest: () => DeviceState | undefined }> {
  const factory = join(build.dir, `${name}-factory.img`)
  await writeFile(factory, await build.image('1.0.0'))
  const standin = await UpdateStandin.listen()
  const { qemu, reset } = await runUpdatable(build.bootloader, factory, standin.port)
  t.teardown(async () => { qemu.kill(); await standin.close() })
  return { standin, reset, latest: () => standin.states.at(-1) }
}

if (compiler !== undefined) {
  const build = await buildUpdatable(tempDir(t, 'berth-updates-'))
  const v2 = await build.image('2.0.0')
  // Built while the first test runs in QEMU.
  const hangingImage = build.image('2.0.1', '-DQEMU_UPDATABLE_HANG')
  hangingImage.catch(() => {}) // awaited (and its failure reported) by the test that needs it

  t.test('1.0.0 downloads a signed 2.0.0 (resuming after a reset and after a broken connection), tests it, and stays on it once it confirms itself', async t => {
    const { standin, reset } = await device(t, build, 'confirm')
    standin.policy = state => state.version === '1.0.0' ? { image: v2, version: '2.0.0' } : undefined
    const first = await pollUntil(() => standin.states[0], { timeout: 60_000, what: 'the first state' })
    t.match(first, { softwareType: 'qemu-updatable', version: '1.0.0', running: 0, slots: [{ state: 'confirmed', version: '1.0.0' }, { state: 'empty' }], event: 'none' }, 'the blank device installed its factory image in slot 0, confirmed')
    t.same(standin.bootLines()[0], 'berth boot: slot 0 confirmed 1.0.0')

    // Reset part-way through the download: the slot's trailer keeps what arrived.
    await pollUntil(() => standin.requests.length >= 20, { timeout: 60_000, what: '20 blocks asked for' })
    await reset()
    const resumed = await pollUntil(() => standin.states.find(s => s.download.received > 0), { timeout: 60_000, what: 'a state with the download in progress' })
    t.equal(resumed.download.sha256, sha(v2), 'after the reset the state carries the download in progress')
    t.ok(resumed.download.received >= 19 * 512, `${resumed.download.received} bytes kept`)
    const resumedAt = standin.states.indexOf(resumed) + 1
    const after = await pollUntil(() => standin.requests.find(r => r.states >= resumedAt), { timeout: 60_000, what: 'a request after the reset' })
    t.equal(after.offset, resumed.download.received, 'the download resumes at the bytes the slot holds')

    // Two blocks damaged on the line, after stray bytes: the device drops them and asks again.
    const damagedFrom = standin.requests.length
    standin.damage = 2
    await pollUntil(() => standin.damage === 0 && standin.requests.length >= damagedFrom + 4, { timeout: 60_000, what: 'requests after the damaged blocks' })
    const asked = standin.requests.slice(damagedFrom).map(r => r.offset)
    t.equal(asked[1], asked[0], 'a damaged block is asked for again')
    t.equal(asked[2], asked[0], 'and again, until it arrives whole')
    t.equal(asked[3], asked[0] + 512, 'then the download goes on')

    // Drop the connection part-way: the device asks again, QEMU connects again, the download goes on.
    standin.dropAfter = 10
    await pollUntil(() => standin.connections >= 2 && standin.requests.some(r => r.connection >= 2), { timeout: 60_000, what: 'a request on the second connection' })
    const result = await pollUntil(() => standin.results[0], { timeout: 60_000, what: 'the result' })
    t.same(result, { sha256: sha(v2), status: 1 }, 'verified and pending')
    const offsets = standin.requests.map(r => r.offset)
    t.equal(new Set(offsets).size, Math.ceil(v2.length / 512), 'every block asked for')

    const confirmed = await pollUntil(() => standin.states.find(s => s.version === '2.0.0'), { timeout: 60_000, what: 'a state from 2.0.0' })
    t.match(confirmed, { version: '2.0.0', running: 1, slots: [{ state: 'confirmed', version: '1.0.0' }, { state: 'confirmed', version: '2.0.0', sha256: sha(v2) }], event: 'confirmed', eventSlot: 1 }, '2.0.0 runs from slot 1, confirmed')
    t.ok(standin.bootLines().includes('berth boot: slot 1 testing 2.0.0'), 'the bootloader booted it for testing')
    await reset()
    await pollUntil(() => standin.bootLines().includes('berth boot: slot 1 confirmed 2.0.0'), { timeout: 60_000, what: 'the next boot' })
    t.pass('after a reset the bootloader boots the confirmed 2.0.0')
  })

  t.test('a 2.0.0 that hangs before confirming itself: the watchdog resets it, and the bootloader reverts to 1.0.0, which reports the revert', async t => {
    const hanging = await hangingImage
    const { standin } = await device(t, build, 'revert')
    standin.policy = state => state.version === '1.0.0' && state.event === 'none' ? { image: hanging, version: '2.0.1' } : undefined
    t.same(await pollUntil(() => standin.results[0], { timeout: 60_000, what: 'the result' }), { sha256: sha(hanging), status: 1 }, 'downloaded, verified and pending')
    const reverted = await pollUntil(() => standin.states.find(s => s.event === 'revert'), { timeout: 30_000, what: 'a state reporting the revert' })
    t.match(reverted, { version: '1.0.0', running: 0, slots: [{ state: 'confirmed', version: '1.0.0' }, { state: 'bad', version: '2.0.1', sha256: sha(hanging) }], eventSlot: 1 }, '1.0.0 runs again and reports the revert of slot 1')
    t.same(standin.bootLines(), ['berth boot: slot 0 confirmed 1.0.0', 'berth boot: slot 1 testing 2.0.1', 'berth boot: slot 0 confirmed 1.0.0'], 'the bootloader tested 2.0.1 once, then went back to 1.0.0')
    t.notOk(standin.states.some(s => s.version === '2.0.1'), '2.0.1 never sent a state: it hung before its session')
  })

  t.test('tampered, truncated and foreign-key images are refused on the device, and 1.0.0 runs on', async t => {
    // Small images, to be quick: the device refuses them before it would ever run them.
    const small = signImage(Buffer.alloc(2000, 0x5a), { version: '2.0.0', softwareType: 'qemu-updatable', loadAddress: EXECUTION }, build.privateKey)
    const tampered = Buffer.from(small)
    tampered[64 + 1000] ^= 0x01
    const truncated = small.subarray(0, small.length - 100)
    const foreign = signImage(small.subarray(64, 64 + 2000), { version: '2.0.0', softwareType: 'qemu-updatable', loadAddress: EXECUTION }, fleetKey().privateKey)
    const refusals = [
      { name: 'tampered (a bit flipped in the payload)', offer: { image: tampered, version: '2.0.0' }, status: 2 },
      { name: 'truncated (100 bytes short)', offer: { image: truncated, version: '2.0.0' }, status: 3 },
      { name: 'signed by another key', offer: { image: foreign, version: '2.0.0' }, status: 2 },
      { name: 'not the bytes its digest names', offer: { image: small, version: '2.0.0', sha256: sha(tampered) }, status: 4 }
    ]
    const { standin } = await device(t, build, 'refuse')
    let next = 0
    standin.policy = () => refusals[next++]?.offer
    await pollUntil(() => standin.results.length === refusals.length && standin.states.length > refusals.length, { timeout: 60_000, what: 'a result for each image and a state after them' })
    refusals.forEach((refusal, i) => {
      t.same(standin.results[i], { sha256: refusal.offer.sha256 ?? sha(refusal.offer.image), status: refusal.status }, `${refusal.name}: status ${refusal.status}`)
    })
    t.match(standin.states.at(-1), { version: '1.0.0', running: 0, slots: [{ state: 'confirmed' }, { state: 'empty' }], download: { received: 0 }, event: 'refused', eventSlot: 1 }, '1.0.0 runs on, slot 1 left empty, the refusal reported')
    t.same(standin.bootLines(), ['berth boot: slot 0 confirmed 1.0.0'], 'never reset')
  })

  t.test('the size table of make update-sizes measures each part of the update feature in the bootloader and the application', async t => {
    // size-updates.sh on the build above (make update-sizes builds the same for a stand-in key, then runs it).
    const { stdout } = await run('sh', [join(FIRMWARE_DIR, 'size-updates.sh'), join(build.dir, 'default')])
    const rows = new Map(stdout.split('\n').filter(line => line.startsWith('| ') && !line.startsWith('| part') && !line.startsWith('| ---')).map(line => {
      const cells = line.split('|').slice(1, -1).map(cell => cell.trim())
      return [cells[0], cells.slice(1).map(cell => cell === '—' ? 0 : Number(cell.replace(/,/g, '')))] as const
    }))
    const whole = rows.get('the whole program') ?? []
    const parts = [...rows].filter(([name]) => name !== 'the whole program')
    t.equal(parts.length, 7, 'seven parts')
    t.ok(whole[0] > 10_000 && whole[2] > whole[0], `the bootloader takes ${whole[0]} bytes of flash, the application ${whole[2]}`)
    t.ok((rows.get('Ed25519 verification (vendor/ed25519)') ?? [])[0] > 0, 'the Ed25519 verification is linked into the bootloader')
    t.ok((rows.get('update receiver (src/update.c)') ?? [])[2] > 0 && (rows.get('update receiver (src/update.c)') ?? [])[0] === 0, 'the receiver only into the application')
    t.ok(parts.reduce((sum, [, v]) => sum + v[0], 0) < whole[0], 'the bootloader\'s parts add up to less than the whole')
  })
}
