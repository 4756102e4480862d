// A coredump end to end: the QEMU example built with BERTH_COREDUMP, run in qemu-system-arm until it has
// crashed, reported and ended the emulation; what it wrote on its UART posted to a server with the
// ingest plugin, its ELF uploaded, and the coredump read from the API: the stack window and the global
// the example declared, s_sensor_readings, named from the ELF's symbols with the value it held at the
// crash (42).
import t from 'tap'
import { execFile } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import ingest from '../../plugins/ingest/index.js'
import { hashPassword } from '../../plugins/ingest/auth/passwords.js'
import type { CoredumpView } from '../../plugins/ingest/coredump.js'
import { requireComponent } from '../support/component.js'
import { qemuArgs, uartFault } from '../support/crashes.js'
import { armToolchain, make } from '../support/firmware.js'
import { testKernel } from '../support/kernel.js'
import { tempDir } from '../support/tmp.js'

const run = promisify(execFile)
const compiler = await requireComponent(t, 'arm-none-eabi-gcc and qemu-system-arm', armToolchain)

const DEVICE = 'b0a710c0de000001'
const KEY = 'coredump-device-key-0123456789ab'
const auth = { authorization: `Basic ${Buffer.from('viewer:coredump viewer password').toString('base64')}` }

if (compiler !== undefined) {
  t.test('the example\'s coredump: its counter, named, with the value it held at the crash', async t => {
    const dir = tempDir(t, 'berth-coredump-')
    await make('qemu-demo', dir, '-DBERTH_COREDUMP=1')
    const elf = join(dir, 'qemu-demo.elf')
    const uart = join(dir, 'uart.bin')
    await run('qemu-system-arm', qemuArgs(elf, uart), { timeout: 60_000 })
    const fault = await uartFault(uart)
    t.equal(fault.coredump?.length, 2, 'the FaultRecord on the UART carries two regions: the stack and the counter')
    t.equal(fault.coredump?.[0].address, fault.sp, 'the stack\'s from the stack pointer')

    const kernel = await testKernel(t, {
      plugins: [ingest],
      config: { ingest: { api_key: KEY, users: [{ name: 'viewer', role: 'viewer', password: hashPassword('coredump viewer password') }] } }
    })
    const base = kernel.url('telemetry')
    const post = async (path: string, body: Buffer): Promise<number> =>
      (await fetch(new URL(path, base), { method: 'POST', headers: { 'content-type': 'application/octet-stream', 'x-api-key': KEY }, body })).status
    t.equal(await post('/ingest/chunks', await readFile(uart)), 200, 'the UART\'s frames are taken')
    t.equal(await post('/ingest/elf', await readFile(elf)), 201, 'the ELF is taken')
    const { items } = await (await fetch(new URL(`/devices/${DEVICE}/faults`, base), { headers: auth })).json() as { items: Array<{ received_at: number, sequence: number, coredump?: { regions: number } }> }
    t.equal(items.length, 1)
    t.equal(items[0].coredump?.regions, 2, 'the fault list says it has a coredump of two regions')
    const response = await fetch(new URL(`/devices/${DEVICE}/faults/${items[0].received_at}/${items[0].sequence}/coredump`, base), { headers: auth })
    t.equal(response.status, 200)
    const view = await response.json() as CoredumpView
    t.equal(view.truncated, 0, 'nothing cut')
    const readings = view.globals.find(g => g.name === 's_sensor_readings')
    t.same(readings && { size: readings.size, bytes: readings.bytes, value: readings.value }, { size: 4, bytes: '2a000000', value: 42 }, 's_sensor_readings: 42, as the example set it before the crash')
    t.equal(readings?.address, view.regions[1].address, 'at the address of the region the example declared')
  })
}
