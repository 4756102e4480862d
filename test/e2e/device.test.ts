// A real device, end to end: the firmware example built with Debian's arm-none-eabi-gcc boots in
// qemu-system-arm (Cortex-M3), records metrics and a log line, uploads over its UART, crashes on a
// call through a null function pointer, resets, and uploads the hard-fault reboot and the fault; then
// it hangs, its watchdog resets it (QEMU's CMSDK watchdog: the NMI marks it, the second timeout
// resets), and the third boot uploads the watchdog reboot the port's reset cause tells.
// `berth gateway` reads the UART while the server is down, spools every frame, and forwards them once
// it is up: every chunk arrives exactly once. The ELF uploaded afterwards resolves the earlier fault
// to the named function and its line, and unwinds its stack snapshot by the ELF's call-frame
// information into a backtrace that names its crash issue. Then the device is powered on again: a board with no clock,
// random numbers or flash counter (QEMU clears RAM), so its second run reuses the first run's sequence
// numbers, byte for byte where nothing changed; its crashes, hangs and power-ons are stored all the same.
import t from 'tap'
import { execFile, spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import ingest from '../../plugins/ingest/index.js'
import symbolication from '../../plugins/symbolication/index.js'
import { hashPassword } from '../../plugins/ingest/auth/passwords.js'
import { exited, spawnCli } from '../support/cli.js'
import { requireComponent } from '../support/component.js'
import { armToolchain, FIRMWARE_DIR, make } from '../support/firmware.js'
import { testKernel } from '../support/kernel.js'
import { laterPort } from '../support/net.js'
import { pollUntil } from '../support/poll.js'
import { tempDir } from '../support/tmp.js'

const compiler = await requireComponent(t, 'arm-none-eabi-gcc and qemu-system-arm', armToolchain)
const run = promisify(execFile)
const DEVICE = 'b0a710c0de000001'
const KEY = 'e2e-device-key-0123456789abcdef'
const auth = { authorization: `Basic ${Buffer.from('admin:e2e admin password').toString('base64')}` }

if (compiler !== undefined) {
  t.test('firmware in QEMU → UART → berth gateway (through a server outage) → ingest → symbolication', async t => {
    const out = tempDir(t, 'berth-e2e-')
    await make('qemu-demo', out, '-DBERTH_PLATFORM_RESET_CAUSE=1')
    const elf = join(out, 'qemu-demo.elf')
    // The gateway is given the server's address while the server is down: a port of the test's that
    // closes every connection until the server, on a port 0 of its own, is up behind it.
    const front = await laterPort(t)
    const server = await testKernel(t, {
      noStart: true,
      plugins: [ingest, symbolication],
      config: {
        server: { listeners: { control: { host: '127.0.0.1', port: 0 }, telemetry: { host: '127.0.0.1', port: 0 } } },
        ingest: { api_key: KEY, users: [{ name: 'admin', role: 'admin', password: hashPassword('e2e admin password') }] }
      }
    })

    // The device boots and talks to its UART, which QEMU serves on TCP; the gateway connects to it.
    // QEMU binds port 0 and says which port it got ("waiting for connection on: ...:PORT,server=on").
    // Powered on again, it must come back where the gateway reconnects: the port of its first run.
    const boot = async (port = 0): Promise<{ qemu: ReturnType<typeof spawn>, uartPort: number }> => {
      const qemu = spawn('qemu-system-arm', ['-M', 'mps2-an385', '-nographic', '-monitor', 'none', '-semihosting-config', 'enable=on,target=native',
        '-kernel', elf, '-serial', `tcp:127.0.0.1:${port},server=on,wait=on`], { stdio: ['ignore', 'pipe', 'pipe'] })
      t.teardown(() => { qemu.kill('SIGKILL') })
      let said = ''
      qemu.stderr?.on('data', (chunk: Buffer) => { said += chunk.toString() })
      const uartPort = await pollUntil(() => { const m = /waiting for connection on: \S*tcp:127\.0\.0\.1:(\d+)/.exec(said); return m !== null && Number(m[1]) }, { what: 'QEMU to say its serial port', timeout: 20_000 })
      return { qemu, uartPort }
    }
    const { qemu, uartPort } = await boot()
    const gateway = spawnCli(['gateway', '--serial', `tcp:127.0.0.1:${uartPort}`, '--url', `http://127.0.0.1:${front.port}`, '--api-key', KEY, '--spool', join(out, 'spool')])
    t.teardown(() => { gateway.kill('SIGKILL') })
    t.equal(await exited(qemu), 0, 'the device ran its three sessions and ended the emulation')
    const spooled = await pollUntil(() => /retrying in/.test(gateway.output()) && gateway.output(), { what: 'the gateway to find the server down', timeout: 20_000 })
    t.match(spooled, /^gateway: BLE: [^\n]*; serial lines only$/m, 'no BLE here: said in one line')

    await server.start()
    const base = server.url('telemetry')
    front.forward(Number(base.port))
    const json = async (path: string): Promise<Record<string, unknown>> => await (await fetch(new URL(path, base), { headers: auth })).json() as Record<string, unknown>
    await pollUntil(async () => ((await json(`/devices/${DEVICE}/faults`)).items as unknown[] | undefined)?.length === 1, { what: 'the fault to arrive', timeout: 30_000 })
    await pollUntil(() => /forwarded/.test(gateway.output()) && server.service('ingest').telemetry.store.seen.getKeysCount() === 13, { what: 'all thirteen chunks' })
    const forwarded = [...gateway.output().matchAll(/forwarded \d+ frames: (\d+) accepted, (\d+) duplicate/g)]
    t.same([forwarded.reduce((n, m) => n + Number(m[1]), 0), forwarded.reduce((n, m) => n + Number(m[2]), 0)], [13, 0], 'thirteen chunks forwarded, each exactly once')

    const { stdout: notes } = await run('arm-none-eabi-readelf', ['-n', elf])
    const buildId = /Build ID: ([0-9a-f]{40})/.exec(notes)?.[1]
    t.match(await json(`/devices/${DEVICE}`), { serial: 'QEMU-0001', hardware_version: 'mps2-an385', software_type: 'qemu-demo', build_id: buildId, boot_count: 3 }, 'the device reports the build id of its image')
    const reboots = async (): Promise<string[]> => ((await json(`/devices/${DEVICE}/reboots`)).items as Array<{ reason: string, boot_count: number }>).map(r => `${r.reason} ${r.boot_count}`)
    t.same(await reboots(), ['power_on 1', 'hard_fault 2', 'watchdog 3'], 'the hang is a watchdog reboot, not an unknown one')
    const metrics = (await json(`/devices/${DEVICE}/metrics`)).items as Array<{ key: string, value: number }>
    t.same(metrics.map(m => [m.key, m.value]), [['battery_mv', 3700], ['boots', 1], ['loop_us', 420], ['recoveries', 1]])
    t.match(await json(`/devices/${DEVICE}/traces`), { items: [{ text: 'sensor ready\n' }] })
    const [fault] = (await json(`/devices/${DEVICE}/faults`)).items as Array<{ pc: number, lr: number, cfsr: number, symbol: string }>
    t.match(fault, { symbol: `unsymbolicated: no ELF uploaded for build ${buildId ?? ''}` }, 'no ELF yet: the fault is kept, and says why it is not resolved')
    t.ok((fault.cfsr & 0x20000) !== 0, 'CFSR says INVSTATE: the core tried to run from an even address (the null pointer)')

    // The build's ELF arrives: the earlier fault is resolved to the function and line of the call.
    const upload = await fetch(new URL('/ingest/elf', base), { method: 'POST', headers: { ...auth, 'content-type': 'application/octet-stream' }, body: readFileSync(elf) })
    t.equal(upload.status, 201)
    const source = readFileSync(join(FIRMWARE_DIR, 'examples/qemu-demo/main.c'), 'utf8').split('\n')
    const line = source.findIndex(l => l.includes('// the fault')) + 1
    const resolved = await pollUntil(async () => {
      const [now] = (await json(`/devices/${DEVICE}/faults`)).items as Array<{ symbol: string }>
      return !now.symbol.startsWith('unsymbolicated') && now.symbol
    }, { what: 'the fault to be symbolicated' })
    const mainC = join(FIRMWARE_DIR, 'examples/qemu-demo/main.c')
    t.equal(resolved, `sensor_poll at ${mainC}:${line}`)
    // Unwound from the stack the HardFault handler copied, by the ELF's call-frame information: the call
    // in sensor_task, main (which tail-called sensor_task, so left no frame: its branch), then the reset
    // handler that called main.
    const caller = source.findIndex(l => l.includes('const int reading = sensor_poll();')) + 1
    const tail = source.findIndex(l => l.includes('return sensor_task();')) + 1
    const [{ backtrace, stack }] = (await json(`/devices/${DEVICE}/faults`)).items as Array<{ backtrace: Array<{ address: number, symbol: string, unwind: string, truncated?: boolean }>, stack: string }>
    t.ok(stack.length >= 16 && stack.length % 8 === 0, 'the fault carries a stack snapshot of whole words')
    t.same(backtrace.slice(0, 3).map(frame => frame.symbol), [`sensor_poll at ${mainC}:${line}`, `sensor_task at ${mainC}:${caller}`, `main at ${mainC}:${tail}`],
      'the backtrace: the fault, its caller, and main at its tail call')
    t.match(backtrace[3]?.symbol, /^Reset_Handler at .*startup\.c:\d+$/, 'then the reset handler that called main')
    t.equal(backtrace.length, 4, 'and nothing made up from the rest of the stack')
    t.ok(backtrace.every(frame => frame.unwind === 'cfi' && frame.truncated === undefined), 'each frame by call-frame information; the snapshot held them all')
    const issues = async (): Promise<Array<{ title: string, count: number }>> => ((await json('/issues?q=sensor_poll')).issues as Array<{ title: string, count: number }>)
    t.match(await issues(), [{ title: /^INVSTATE.* in sensor_poll \(from sensor_task\)$/, count: 1 }], 'one crash issue, named by its top two frames')

    // Power on again: the same image, RAM cleared, the same seed, so the same sequence numbers.
    t.equal(await exited((await boot(uartPort)).qemu), 0, 'the second run ended the emulation too')
    await pollUntil(async () => ((await json(`/devices/${DEVICE}/faults`)).items as unknown[]).length === 2, { what: 'the second crash to arrive', timeout: 30_000 })
    await pollUntil(() => {
      const now = [...gateway.output().matchAll(/forwarded \d+ frames: (\d+) accepted, (\d+) duplicate/g)]
      return now.reduce((n, m) => n + Number(m[1]), 0) === 26 && now
    }, { what: 'the second run\'s thirteen chunks' })
    const final = [...gateway.output().matchAll(/forwarded \d+ frames: (\d+) accepted, (\d+) duplicate/g)]
    t.same([final.reduce((n, m) => n + Number(m[1]), 0), final.reduce((n, m) => n + Number(m[2]), 0)], [26, 0], 'twenty-six chunks stored, none taken for a copy of the first run\'s')
    t.same(await reboots(), ['power_on 1', 'hard_fault 2', 'watchdog 3', 'power_on 1', 'hard_fault 2', 'watchdog 3'], 'both power-ons, both crashes and both hangs')
    const sequences = ((await json(`/devices/${DEVICE}/reboots`)).items as Array<{ sequence: number }>).map(r => r.sequence)
    t.equal(sequences[0], sequences[3], 'the second power-on reused the first one\'s sequence number')
    await pollUntil(async () => ((await json(`/devices/${DEVICE}/faults`)).items as Array<{ symbol: string }>).every(f => f.symbol === resolved), { what: 'both faults symbolicated' })
    t.match(await issues(), [{ count: 2 }], 'the second crash joins the same issue')
    const both = ((await json(`/devices/${DEVICE}/metrics`)).items as Array<{ key: string, value: number }>).map(m => [m.key, m.value])
    t.same(both, [...metrics, ...metrics].map(m => [m.key, m.value]), 'each run\'s metrics')

    gateway.kill('SIGTERM')
    t.equal(await exited(gateway), 0, 'the gateway stops cleanly')
  })
}
