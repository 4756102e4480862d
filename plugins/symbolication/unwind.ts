// Backtraces by stack scanning. A fault carries its PC, its LR and a snapshot of the stack above the
// stack pointer; the frames are the PC, the LR (the caller when the faulting function is a leaf), and
// every word of the snapshot that is a return address: odd (the Thumb bit), inside the image's code,
// and just after a call instruction (BL, or BLX to a register). Each return address is resolved 2 bytes
// back, inside its call. What the method cannot tell is written down in plugins/symbolication/README.md.
import type { BacktraceFrame, CodeSection } from '../ingest/api.js'

/** Frames kept at most, innermost first. */
export const MAX_FRAMES = 16

/** A frame to resolve: the address it reports and the address inside its instruction that is resolved. */
export interface FrameAddress {
  kind: 'pc' | 'lr' | 'stack'
  address: number
  lookup: number
}

/** The halfword at `address` in the image's code, or undefined outside it. */
function halfword (code: readonly CodeSection[], address: number): number | undefined {
  for (const section of code) {
    const at = address - section.address
    if (at >= 0 && at + 2 <= section.bytes.length) return section.bytes.readUInt16LE(at)
  }
  return undefined
}

/** Whether the instruction ending at `returnAddress` (even) is a call: BL (32 bits) or BLX Rm (16 bits). */
export function followsCall (code: readonly CodeSection[], returnAddress: number): boolean {
  const last = halfword(code, returnAddress - 2)
  if (last === undefined) return false
  if ((last & 0xff87) === 0x4780) return true // BLX Rm
  const first = halfword(code, returnAddress - 4)
  return first !== undefined && (first & 0xf800) === 0xf000 && (last & 0xd000) === 0xd000 // BL <label>
}

/** The frames of a fault to resolve, innermost first. */
export function frameAddresses (code: readonly CodeSection[], fault: { pc: number, lr: number, stack?: string }): FrameAddress[] {
  const returnTo = (word: number): number => (word & ~1) >>> 0
  const frames: FrameAddress[] = [
    { kind: 'pc', address: returnTo(fault.pc), lookup: returnTo(fault.pc) },
    { kind: 'lr', address: returnTo(fault.lr), lookup: returnTo(fault.lr) - 2 }
  ]
  const stack = Buffer.from(fault.stack ?? '', 'hex')
  for (let at = 0; at + 4 <= stack.length && frames.length < MAX_FRAMES + 2; at += 4) {
    const word = stack.readUInt32LE(at)
    if ((word & 1) === 1 && followsCall(code, returnTo(word))) frames.push({ kind: 'stack', address: returnTo(word), lookup: returnTo(word) - 2 })
  }
  return frames
}

const functionOf = (symbol: string): string => symbol.split(' at ')[0]

/**
 * The backtrace from the frames and what each resolved to (undefined: not in the image). An LR in the
 * faulting function itself is a return address left by an earlier call, not its caller: left out; so
 * is a frame that repeats the one before it (a return address both in LR and saved on the stack).
 */
export function backtraceOf (frames: readonly FrameAddress[], symbols: ReadonlyArray<string | undefined>): BacktraceFrame[] {
  const backtrace: BacktraceFrame[] = []
  frames.forEach((frame, i) => {
    const symbol = symbols[i]
    if (symbol === undefined || backtrace.length >= MAX_FRAMES) return
    const previous = backtrace[backtrace.length - 1]
    if (previous !== undefined && (previous.address === frame.address || (frame.kind === 'lr' && functionOf(previous.symbol) === functionOf(symbol)))) return
    backtrace.push({ address: frame.address, symbol })
  })
  return backtrace
}
