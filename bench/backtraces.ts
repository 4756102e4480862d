// Backtrace accuracy: each crafted crash of the QEMU example (test/support/crashes.ts) runs in
// qemu-system-arm under its gdbstub; GDB (gdb-multiarch) stops at the HardFault handler and its `bt`
// past the exception frame is the expected backtrace, the compiler's own view (its DWARF: call-frame
// information, inlined functions, tail calls). The emulation then runs on, the device reports the fault,
// and its stack snapshot is unwound as the symbolication plugin does, by call-frame information and by
// stack scanning. A backtrace is exact when its functions are GDB's in order (one marked truncated: GDB's
// first ones); "frames in place" counts the positions where the function is GDB's, of GDB's frames.
// Run: node --import=tsx bench/backtraces.ts   (from the sources: the firmware is found beside test/support; needs gdb-multiarch, arm-none-eabi-gcc, qemu-system-arm)
import { execFile, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { codeSections, type CodeSection } from '../plugins/ingest/elf.js'
import type { BacktraceFrame } from '../plugins/ingest/storage/contract.js'
import { backtraces, buildCrash, CRASHES, functions, qemuArgs, uartFault } from '../test/support/crashes.js'
import { markdownTable } from './stats.js'

const run = promisify(execFile)

/** A port free on the loopback now, for the gdbstub. */
async function freePort (): Promise<number> {
  const server = createServer()
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise(resolve => server.close(resolve))
  return port
}

/**
 * The functions of GDB's `bt` past the HardFault's exception frame (`<signal handler called>`),
 * innermost first, without the marks of other exception frames further up (a fault in a handler); a
 * frame outside the image's code (the PC of a call through a null pointer: 0, which GDB names by the
 * vector table there) is left out, as the server leaves out a frame that resolves to no line.
 */
function gdbFrames (bt: string, code: readonly CodeSection[]): string[] {
  const lines = bt.split('\n').filter(line => line.startsWith('#'))
  const entry = lines.findIndex(line => line.includes('<signal handler called>'))
  if (entry < 0) throw new Error(`no exception frame in GDB's backtrace:\n${bt}`)
  return lines.slice(entry + 1).filter(line => !line.includes('<signal handler called>')).flatMap(line => {
    const [, address, name] = /^#\d+\s+(?:(0x[0-9a-f]+) in )?(\S+) \(/.exec(line) ?? [undefined, undefined, line]
    const at = address === undefined ? undefined : Number(address)
    return at !== undefined && !code.some(c => at >= c.address && at < c.address + c.bytes.length) ? [] : [name]
  })
}

/** Run the ELF under GDB to its fault and on to its end; resolves with GDB's `bt` at the HardFault handler. */
async function underGdb (elf: string, uart: string): Promise<string> {
  const port = await freePort()
  const qemu = spawn('qemu-system-arm', [...qemuArgs(elf, uart), '-gdb', `tcp:127.0.0.1:${port}`, '-S'], { stdio: 'ignore' })
  const ended = new Promise(resolve => qemu.once('exit', resolve))
  try {
    // The last `continue` ends with the emulation, and GDB with an error (the remote closed): its output is what counts.
    const { stdout } = await run('gdb-multiarch', ['-batch', '-nx', '-ex', 'set pagination off', '-ex', 'set tcp connect-timeout 20',
      '-ex', `target remote 127.0.0.1:${port}`, '-ex', 'break HardFault_Handler', '-ex', 'continue', '-ex', 'bt', '-ex', 'delete', '-ex', 'continue', elf],
    { timeout: 120_000 }).catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? '' }))
    await ended
    return stdout
  } finally {
    qemu.kill('SIGKILL')
  }
}

interface Score { exact: boolean, inPlace: number }

function score (expected: readonly string[], frames: readonly BacktraceFrame[]): Score {
  const got = functions(frames)
  const truncated = frames[frames.length - 1]?.truncated === true
  const wanted = truncated ? expected.slice(0, got.length) : expected
  return {
    exact: got.length === wanted.length && got.every((name, i) => name === wanted[i]),
    inPlace: got.filter((name, i) => name === expected[i]).length
  }
}

const dir = mkdtempSync(join(tmpdir(), 'berth-backtraces-'))
try {
  const rows: string[][] = []
  const totals = { frames: 0, cfi: { exact: 0, inPlace: 0 }, scan: { exact: 0, inPlace: 0 } }
  for (const crash of CRASHES) {
    const elf = await buildCrash(join(dir, crash.name), crash)
    const uart = join(dir, crash.name, 'uart.bin')
    const expected = gdbFrames(await underGdb(elf, uart), codeSections(await readFile(elf)))
    const found = await backtraces(elf, await uartFault(uart))
    const [cfi, scan] = [score(expected, found.cfi), score(expected, found.scan)]
    totals.frames += expected.length
    for (const [method, s] of [['cfi', cfi], ['scan', scan]] as const) {
      totals[method].exact += s.exact ? 1 : 0
      totals[method].inPlace += s.inPlace
    }
    const shown = (frames: BacktraceFrame[], s: Score): string =>
      `${functions(frames).join(' < ')}${frames[frames.length - 1]?.truncated === true ? ' (truncated)' : ''}: ${s.exact ? 'exact' : 'wrong'}, ${s.inPlace}/${expected.length}`
    rows.push([crash.name, expected.join(' < '), shown(found.cfi, cfi), shown(found.scan, scan)])
  }
  console.log(markdownTable(['crash', 'GDB bt (expected)', 'call-frame information', 'stack scanning'], rows))
  console.log()
  console.log(markdownTable(['method', 'exact backtraces', 'frames in place'], (['cfi', 'scan'] as const).map(method =>
    [method, `${totals[method].exact}/${CRASHES.length}`, `${totals[method].inPlace}/${totals.frames} (${(100 * totals[method].inPlace / totals.frames).toFixed(0)}%)`])))
} finally {
  rmSync(dir, { recursive: true, force: true })
}
