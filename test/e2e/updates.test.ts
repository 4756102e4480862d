// Signed updates end to end through the real gateway: the QEMU example of `make qemu-updatable` (its
// bootloader, the factory image 1.0.0) with its UART as a TCP server, `berth gateway` reading and
// writing it, and a telemetry server holding the fleet's public key. A release of 2.0.0 reaches the
// device through the gateway (offer, range requests, blocks), the device tests and confirms it, and
// its slots and reports reach the server and the timeline; then a 2.0.1 that hangs before confirming
// itself is reverted by the bootloader after the watchdog's reset, and its revert halts its release.
import t from 'tap'
import { createPublicKey } from 'node:crypto'
import { spawn } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Release } from '../../plugins/ingest/ota-releases.js'
import { rawPublicKey } from '../../plugins/ingest/ota-image.js'
import { exited, spawnCli } from '../support/cli.js'
import { requireComponent } from '../support/component.js'
import { armToolchain } from '../support/firmware.js'
import { probablyFreePort } from '../support/net.js'
import { pollUntil } from '../support/poll.js'
import { tempDir } from '../support/tmp.js'
import { buildUpdatable, FACTORY } from '../support/update-standin.js'
import { API_KEY, basic, telemetryServer } from '../plugins/ingest/harness.js'

const compiler = await requireComponent(t, 'arm-none-eabi-gcc and qemu-system-arm', armToolchain)

interface Slots { running_slot: number | null, slots: Array<{ slot: number, state: string, version: string | null, image: string | null }> }

if (compiler !== undefined) {
  t.test('QEMU device ↔ berth gateway ↔ server: 2.0.0 downloaded, tested and confirmed; a hanging 2.0.1 reverted, halting its release', async t => {
    const build = await buildUpdatable(tempDir(t, 'berth-e2e-updates-'))
    const hanging = build.image('2.0.1', '-DQEMU_UPDATABLE_HANG')
    hanging.catch(() => {}) // awaited below
    const server = await telemetryServer(t, { ota_public_key: rawPublicKey(createPublicKey(build.privateKey)).toString('hex') })
    const factory = join(build.dir, 'factory.img')
    await writeFile(factory, await build.image('1.0.0'))
    const port = await probablyFreePort()
    const qemu = spawn('qemu-system-arm', ['-M', 'mps2-an385', '-nographic', '-monitor', 'none', '-semihosting-config', 'enable=on,target=native',
      '-kernel', build.bootloader, '-device', `loader,file=${factory},addr=0x${FACTORY.toString(16)}`, '-serial', `tcp:127.0.0.1:${port},server=on,wait=off,nodelay=on`], { stdio: ['ignore', 'ignore', 'inherit'] })
    t.teardown(() => { qemu.kill() })
    const gateway = spawnCli(['gateway', '--serial', `tcp:127.0.0.1:${port}`, '--url', server.base.href, '--api-key', API_KEY, '--spool', tempDir(t), '--no-ble', '--no-usb'])
    t.teardown(() => { gateway.kill('SIGKILL') })

    const viewer = async <T>(path: string): Promise<T> => await (await server.api('GET', path, 'viewer')).json() as T
    const device = await pollUntil(async () => (await viewer<{ devices: Array<{ id: string, software_version: string | null }> }>('/devices')).devices.find(d => d.software_version === '1.0.0')?.id, { timeout: 30_000, what: 'the device\'s telemetry through the gateway' })
    await pollUntil(async () => (await viewer<Slots>(`/devices/${device}/slots`)).slots[0]?.state === 'confirmed', { timeout: 20_000, what: 'its slots reported' })
    const release = async (version: string, image: Buffer): Promise<Release> => {
      const uploaded = await fetch(new URL(`/ota/images?software_type=qemu-updatable&version=${version}`, server.base), { method: 'POST', headers: { authorization: basic('provisioner'), 'content-type': 'application/octet-stream' }, body: image })
      t.equal(uploaded.status, 201, `${version} uploaded, signed by the fleet's key`)
      const { id } = await uploaded.json() as { id: string }
      return await (await server.api('POST', '/ota/releases', 'provisioner', { image: id, halt_reverts: 1 })).json() as Release
    }

    const v2 = await release('2.0.0', await build.image('2.0.0'))
    const confirmed = await pollUntil(async () => {
      const slots = await viewer<Slots>(`/devices/${device}/slots`)
      return slots.running_slot === 1 && slots.slots[1]?.state === 'confirmed' ? slots : undefined
    }, { timeout: 90_000, what: '2.0.0 downloaded, tested and confirmed in slot 1' })
    t.match(confirmed.slots, [{ slot: 0, state: 'confirmed', version: '1.0.0' }, { slot: 1, state: 'confirmed', version: '2.0.0', image: v2.image }])
    const summaries = async (): Promise<string[]> => (await viewer<{ entries: Array<{ kind: string, summary: string }> }>(`/devices/${device}/timeline?limit=1000`)).entries.filter(e => e.kind === 'ota').map(e => e.summary)
    // The report that says so is written just after the slots it came with.
    const first = await pollUntil(async () => { const all = await summaries(); return all.includes('OTA: 2.0.0 confirmed in slot 1') ? all : undefined }, { what: 'the confirmation on the timeline' })
    t.ok(first.includes('OTA: 2.0.0 downloaded and verified, to be tested at the next boot'), 'verified, reported through the gateway')
    t.ok(first.some(s => /^OTA: download(ed| started) 2\.0\.0, bytes 0–/.test(s)), 'fetched by the gateway with a range request')
    await pollUntil(async () => (await viewer<{ devices: Array<{ id: string, software_version: string | null }> }>('/devices')).devices.find(d => d.id === device)?.software_version === '2.0.0', { what: 'its telemetry from 2.0.0' })

    const v201 = await release('2.0.1', await hanging)
    const halted = await pollUntil(async () => {
      const { release: current } = await viewer<{ release: Release }>(`/ota/releases/${v201.id}`)
      return current.state === 'halted' ? current : undefined
    }, { timeout: 90_000, what: 'the hanging 2.0.1 reverted, and its release halted' })
    t.equal(halted.reason, 'halted: 1 revert of 1 device offered version 2.0.1 (it halts at 1)')
    t.match((await viewer<Slots>(`/devices/${device}/slots`)).slots[1 - (confirmed.running_slot ?? 1)], { state: 'bad', version: '2.0.1' }, 'the slot it went into is bad')
    t.ok((await summaries()).some(s => /^OTA: 2\.0\.1 reverted in slot 0/.test(s)), 'the revert on the timeline')
    t.notMatch(gateway.output(), /skipped/, 'no byte of the line taken for noise')
    gateway.kill('SIGTERM')
    t.equal(await exited(gateway), 0)
  })
}
