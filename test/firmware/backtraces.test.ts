// The QEMU example's crafted crashes (QEMU_DEMO_FAULT), each built with Debian's arm-none-eabi-gcc (-Os
// -g: its .debug_frame), run in qemu-system-arm until the device has reported its fault over the UART,
// and unwound as the symbolication plugin does: by the ELF's call-frame information, with stack scanning
// beside it. The functions expected are those GDB's `bt` shows at the fault (bench/backtraces.ts
// measures that for both methods), through an exception frame for the fault in a handler. The tail
// call's and the inlined function's crashes also go the whole way: their UART's frames posted to a
// server with the ingest and symbolication plugins, their ELF uploaded, and the backtrace read from
// GET /devices/{id}/faults.
import t from 'tap'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import ingest from '../../plugins/ingest/index.js'
import { hashPassword } from '../../plugins/ingest/auth/passwords.js'
import type { BacktraceFrame } from '../../plugins/ingest/storage/contract.js'
import symbolication from '../../plugins/symbolication/index.js'
import { requireComponent } from '../support/component.js'
import { backtraces, buildCrash, CRASHES, functions, runCrash, type Backtraces, type Crash } from '../support/crashes.js'
import { armToolchain } from '../support/firmware.js'
import { testKernel } from '../support/kernel.js'
import { pollUntil } from '../support/poll.js'
import { tempDir } from '../support/tmp.js'

const compiler = await requireComponent(t, 'arm-none-eabi-gcc and qemu-system-arm', armToolchain)

/** The callers every crash shares: sensor_poll is called by sensor_task, which main tail-calls, called by the reset handler. */
const CALLERS = ['sensor_task', 'main', 'Reset_Handler']

const DEVICE = 'b0a710c0de000001'
const KEY = 'backtraces-device-key-0123456789'
const auth = { authorization: `Basic ${Buffer.from('admin:backtraces admin password').toString('base64')}` }

/** The backtrace a server with ingest and symbolication gives the crash: its UART's frames posted, then its ELF uploaded. */
async function served (elf: string, uart: string): Promise<BacktraceFrame[]> {
  const kernel = await testKernel(t, {
    plugins: [ingest, symbolication],
    config: { ingest: { api_key: KEY, users: [{ name: 'admin', role: 'admin', password: hashPassword('backtraces admin password') }] } }
  })
  const base = kernel.url('telemetry')
  const post = async (path: string, body: Buffer, headers: Record<string, string>): Promise<number> =>
    (await fetch(new URL(path, base), { method: 'POST', headers: { 'content-type': 'application/octet-stream', ...headers }, body })).status
  if (await post('/ingest/chunks', await readFile(uart), { 'x-api-key': KEY }) !== 200) throw new Error('the UART\'s frames were not taken')
  if (await post('/ingest/elf', await readFile(elf), auth) !== 201) throw new Error('the ELF was not taken')
  return await pollUntil(async () => {
    const { items } = await (await fetch(new URL(`/devices/${DEVICE}/faults`, base), { headers: auth })).json() as { items: Array<{ backtrace: BacktraceFrame[] }> }
    return items[0]?.backtrace.length > 0 && items[0].backtrace
  }, { what: 'the fault\'s backtrace' })
}

if (compiler !== undefined) {
  const dir = tempDir(t, 'berth-backtraces-')
  const crash = async (name: Crash['name']): Promise<Backtraces & { elf: string, uart: string }> => {
    const chosen = CRASHES.find(c => c.name === name) as Crash
    const elf = await buildCrash(join(dir, name), chosen)
    const uart = join(dir, name, 'uart.bin')
    return { elf, uart, ...await backtraces(elf, await runCrash(elf, uart)) }
  }

  t.test('a call through a null pointer: the caller at the LR, then the frames the snapshot holds', async t => {
    const { cfi, scan } = await crash('null-pointer')
    t.same(functions(cfi), ['sensor_poll', ...CALLERS], 'by call-frame information: main, which left no frame, from its tail call')
    t.ok(cfi.every(frame => frame.unwind === 'cfi') && cfi.every(frame => frame.truncated === undefined), 'each frame says how it was found; nothing was cut off')
    t.same(functions(scan), ['sensor_poll', 'sensor_task', 'Reset_Handler'], 'scanning misses main')
  })

  t.test('a fault in a tail-called function: the function that branched to it is a frame', async t => {
    const { elf, uart, cfi, scan } = await crash('tail-call')
    t.same(functions(cfi), ['sensor_store', 'sensor_poll', ...CALLERS])
    t.match(cfi[1].symbol, /^sensor_poll at .*main\.c:\d+$/, 'at the line of its tail call')
    t.same(functions(scan), ['sensor_store', 'sensor_task', 'Reset_Handler'], 'scanning misses sensor_poll and main')
    t.ok(scan.every(frame => frame.unwind === 'scan'))
    t.same(await served(elf, uart), cfi, 'the server\'s answer: the same frames, each with unwind: cfi')
  })

  t.test('a fault in an inlined function: it, then the function it was inlined into, at the same address', async t => {
    const { elf, uart, cfi, scan } = await crash('inlined')
    t.same(functions(cfi), ['sensor_scale', 'sensor_poll', ...CALLERS])
    t.equal(cfi[0].address, cfi[1].address, 'one address, two functions')
    t.same(await served(elf, uart), cfi, 'the server\'s answer: the same frames')
    t.same(functions(scan).slice(0, 2), ['sensor_scale', 'sensor_poll'], 'scanning has the same inlined functions')
    t.notOk(functions(scan).includes('main'), `but not main: ${functions(scan).join(', ')}`)
  })

  t.test('stale return addresses under the fault: not frames', async t => {
    const { cfi, scan } = await crash('stale-stack')
    t.same(functions(cfi), ['sensor_average', 'sensor_poll', ...CALLERS], 'sensor_average\'s 48 bytes of locals are skipped by its CFA')
    t.ok(functions(scan).includes('sensor_calibrate'), `scanning takes what an earlier call left for frames: ${functions(scan).join(', ')}`)
  })

  t.test('a fault in an exception handler: the interrupted code, from the exception frame, continues the backtrace', async t => {
    const { cfi, scan } = await crash('exception')
    t.same(functions(cfi), ['PendSV_Handler', 'sensor_poll', ...CALLERS], 'the handler, then where sensor_poll was interrupted, and its callers')
    t.notOk(functions(scan).includes('main'), `scanning: ${functions(scan).join(', ')}`)
  })

  t.test('deeper than the snapshot: the frames it holds, the last marked truncated', async t => {
    const { cfi, scan } = await crash('deep')
    t.ok(cfi.length >= 4 && functions(cfi).every(name => name === 'sensor_walk'), `${cfi.length} frames of sensor_walk`)
    t.equal(cfi[cfi.length - 1].truncated, true, 'the snapshot ended before the code did')
    t.ok(scan.every(frame => frame.truncated === undefined), 'scanning cannot tell')
  })
}
