// The QEMU example's crafted crashes (QEMU_DEMO_FAULT in firmware/examples/qemu-demo/main.c): each
// built, run in qemu-system-arm until it ends the emulation, its fault record read back from the UART by
// the server's parser and decoder, and its backtrace unwound and resolved as the symbolication plugin
// does, by the ELF's call-frame information and by stack scanning, for comparison.
import { execFile } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { codecs } from '../../wasm/index.js'
import { codeSections, sectionNamed } from '../../plugins/ingest/elf.js'
import type { BacktraceFrame } from '../../plugins/ingest/storage/contract.js'
import { decodeChunk } from '../../plugins/ingest/wire/decoder.js'
import type { ChunkPayload, FaultRecord } from '../../plugins/ingest/wire/payloads.js'
import { Addr2line } from '../../plugins/symbolication/addr2line.js'
import { readDebugFrame } from '../../plugins/symbolication/cfi.js'
import { backtraceOf, frameAddresses, unwindCfi, type Unwound } from '../../plugins/symbolication/unwind.js'
import { make } from './firmware.js'

const run = promisify(execFile)

/** The crashes QEMU_DEMO_FAULT picks. */
export const CRASHES = [
  { name: 'null-pointer', fault: 0 },
  { name: 'tail-call', fault: 1 },
  { name: 'inlined', fault: 2 },
  { name: 'stale-stack', fault: 3 },
  { name: 'deep', fault: 4 },
  { name: 'exception', fault: 5 }
] as const
export type Crash = typeof CRASHES[number]

/** qemu-system-arm's arguments for the example on mps2-an385, its UART written to `uart`. */
export const qemuArgs = (elf: string, uart: string): string[] => ['-M', 'mps2-an385', '-nographic', '-monitor', 'none',
  '-semihosting-config', 'enable=on,target=native', '-kernel', elf, '-serial', `file:${uart}`]

/** The records of the frames the QEMU example wrote to its UART, read by the server's parser and decoder. */
export function uartRecords (uart: Buffer): ChunkPayload[] {
  return [...codecs.parseFrames(uart)].map(frame => {
    const payload = uart.subarray(frame.payloadOffset, frame.payloadOffset + frame.payloadLength)
    const decoded = decodeChunk({ version: frame.version, type: frame.type, flags: frame.flags, device: Buffer.from(frame.deviceId, 'hex'), sequence: frame.sequence }, payload, undefined)
    if (frame.status !== 'ok' || !decoded.ok) throw new Error(`frame ${frame.sequence} at ${frame.start}: ${frame.reason ?? JSON.stringify(decoded)}`)
    return decoded.payload
  })
}

/** Build the example with `crash` in `dir`; resolves with its ELF. */
export async function buildCrash (dir: string, crash: Crash): Promise<string> {
  await make('qemu-demo', dir, `-DQEMU_DEMO_FAULT=${crash.fault}`)
  return join(dir, 'qemu-demo.elf')
}

/** The fault record the device uploaded on the UART written to `uart`. */
export async function uartFault (uart: string): Promise<FaultRecord> {
  const fault = uartRecords(await readFile(uart)).find(r => r.type === 'FaultRecord')
  if (fault === undefined) throw new Error(`no fault record on the UART in ${uart}`)
  return fault.record
}

/** Run the example until it ends the emulation (it crashes, reports, hangs, is reset by its watchdog); resolves with its fault record. */
export async function runCrash (elf: string, uart: string): Promise<FaultRecord> {
  await run('qemu-system-arm', qemuArgs(elf, uart), { timeout: 60_000 })
  return await uartFault(uart)
}

/** A fault's backtrace by each method, as the symbolication plugin stores it. */
export interface Backtraces {
  cfi: BacktraceFrame[]
  scan: BacktraceFrame[]
}

/** Unwind `fault` in the image `elf` by its call-frame information and by scanning, resolved with arm-none-eabi-addr2line. */
export async function backtraces (elf: string, fault: FaultRecord): Promise<Backtraces> {
  const bytes = await readFile(elf)
  const code = codeSections(bytes)
  const frames = sectionNamed(bytes, '.debug_frame')
  if (frames === undefined) throw new Error(`${elf} has no .debug_frame`)
  const state = { pc: fault.pc, lr: fault.lr, sp: fault.sp, stack: Buffer.from(fault.stack ?? []).toString('hex') }
  const exact = unwindCfi(readDebugFrame(frames, code), code, state)
  if (exact === undefined) throw new Error(`the call-frame information of ${elf} does not describe PC ${fault.pc.toString(16)}`)
  const scanned: Unwound = { method: 'scan', frames: frameAddresses(code, state), truncated: false }
  const resolver = new Addr2line({ tool: 'arm-none-eabi-addr2line', timeoutMs: 30_000, concurrency: 1, cacheEntries: 1000 })
  const resolve = async (unwound: Unwound): Promise<BacktraceFrame[]> =>
    backtraceOf(unwound, await resolver.resolve(elf, elf, unwound.frames.map(frame => frame.lookup)))
  return { cfi: await resolve(exact), scan: await resolve(scanned) }
}

/** The function of each frame (`<function> at <file>:<line>`). */
export const functions = (frames: readonly BacktraceFrame[]): string[] => frames.map(frame => frame.symbol.split(' at ')[0])
