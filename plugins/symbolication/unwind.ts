// Backtraces of a fault, from its PC, LR, stack pointer and the snapshot of the stack above it. With
// the image's call-frame information (cfi.ts) the frames are unwound exactly: each function's row says
// where its CFA is and where it saved the return address, read from the snapshot, until the code ends,
// or the snapshot does (the backtrace is then marked truncated); an exception frame on the way (a fault
// in a handler) continues with the interrupted code's registers; functions that tail-called (a branch,
// leaving no frame) are inferred from the call before a return address when the code's branches lead
// from its target to the frame's function one way only. Without it (no `.debug_frame`, or a PC
// in code it does not describe), by stack scanning: the PC, the LR (the caller when the faulting
// function is a leaf), and every word of the snapshot that is a return address: odd (the Thumb bit),
// inside the image's code, and just after a call instruction (BL, or BLX to a register). Each return
// address is resolved 2 bytes back, inside its call. What each method cannot tell is written down in
// plugins/symbolication/README.md.
import type { BacktraceFrame, CodeSection } from '../ingest/api.js'
import type { CallFrames } from './cfi.js'

/** Frames kept at most, innermost first. */
export const MAX_FRAMES = 16

/** A frame to resolve: the address it reports and the address inside its instruction that is resolved. */
export interface FrameAddress {
  /** 'tail': a function that branched to the frame before it, its tail call inferred (it left no frame). */
  kind: 'pc' | 'lr' | 'stack' | 'tail'
  address: number
  lookup: number
}

/** The frames of a fault, innermost first, how they were found, and whether the snapshot ended before the code did. */
export interface Unwound {
  method: 'cfi' | 'scan'
  frames: FrameAddress[]
  truncated: boolean
}

/** What of a fault unwinding reads. */
export interface FaultState {
  pc: number
  lr: number
  sp: number
  /** The stack snapshot from `sp` upwards, as hex. */
  stack?: string
}

const SP = 13
/** The values LR holds in an exception handler: return to Handler mode, to Thread mode on the MSP, on the PSP (bit 2), with a floating-point frame (bit 4 clear). */
const EXC_RETURN = new Set([0xfffffff1, 0xfffffff9, 0xfffffffd, 0xffffffe1, 0xffffffe9, 0xffffffed])
const even = (word: number): number => (word & ~1) >>> 0
const inCode = (code: readonly CodeSection[], address: number): boolean => code.some(c => address >= c.address && address < c.address + c.bytes.length)

/** The fault's frames: by its image's call-frame information when it describes the faulting code, else by scanning. */
export function unwind (cfi: CallFrames | undefined, code: readonly CodeSection[], fault: FaultState): Unwound {
  return (cfi === undefined ? undefined : unwindCfi(cfi, code, fault)) ?? { method: 'scan', frames: frameAddresses(code, fault), truncated: false }
}

/**
 * Frames by call-frame information, or undefined when it does not describe the code at the PC (nor, for
 * a PC outside the image, a call through a bad pointer, at the LR). Registers the fault does not carry
 * (r0-r12) are unknown until a frame's rules restore them from the snapshot.
 */
export function unwindCfi (cfi: CallFrames, code: readonly CodeSection[], fault: FaultState): Unwound | undefined {
  const stack = Buffer.from(fault.stack ?? '', 'hex')
  const base = fault.sp >>> 0
  const word = (address: number): number | undefined => {
    const at = address - base
    return at >= 0 && at % 4 === 0 && at + 4 <= stack.length ? stack.readUInt32LE(at) : undefined
  }
  /** Whether `address` lies past the snapshot's end: what is there was not sent. */
  const beyond = (address: number): boolean => address - base + 4 > stack.length
  const frames: FrameAddress[] = []
  let registers = new Map([[SP, base], [14, fault.lr >>> 0]])
  let pc = even(fault.pc)
  /** Whether `pc` is a return address (the frame's code is the call before it) rather than where it stopped. */
  let returned = false
  if (cfi.row(pc) === undefined) {
    // A call through a bad pointer stops outside the image, before its callee saved anything: the LR
    // returns into the caller. Code in the image that the table does not describe is left to scanning.
    if (inCode(code, pc) || cfi.row(even(fault.lr) - 2) === undefined) return undefined
    frames.push({ kind: 'pc', address: pc, lookup: pc })
    pc = even(fault.lr)
    returned = true
  }
  let truncated = false
  while (frames.length < MAX_FRAMES) {
    const lookup = returned ? pc - 2 : pc
    frames.push({ kind: frames.length === 0 ? 'pc' : 'stack', address: pc, lookup })
    const row = cfi.row(lookup)
    const cfaBase = row?.cfa === undefined ? undefined : registers.get(row.cfa.register)
    if (row?.cfa === undefined || cfaBase === undefined) break
    const cfa = (cfaBase + row.cfa.offset) >>> 0
    const caller = new Map(registers)
    for (const [register, rule] of row.registers) {
      const value = rule.kind === 'offset'
        ? word(cfa + rule.offset)
        : rule.kind === 'value' ? (cfa + rule.offset) >>> 0 : rule.kind === 'register' ? registers.get(rule.register) : rule.kind === 'same' ? registers.get(register) : undefined
      if (value === undefined) caller.delete(register)
      else caller.set(register, value)
    }
    caller.set(SP, cfa)
    const returnRule = row.registers.get(row.returnRegister)
    const ra = caller.get(row.returnRegister)
    // A caller's return address that no rule restores is still the one it was called with, used already.
    if (returned && (returnRule === undefined || returnRule.kind === 'same')) break
    if (ra === undefined) {
      truncated = returnRule?.kind === 'offset' && beyond(cfa + returnRule.offset)
      break
    }
    if (EXC_RETURN.has(ra)) {
      // The frame is an exception handler's: the interrupted code's registers are stacked at the CFA
      // (r0-r3, r12, LR, PC, xPSR), on the stack the snapshot holds only when returning to the MSP.
      const stacked = (ra & 4) === 0 ? [0, 1, 2, 3, 4, 5, 6, 7].map(i => word(cfa + 4 * i)) : []
      if (stacked.length === 0 || stacked.includes(undefined)) {
        truncated = true
        break
      }
      const [r0, r1, r2, r3, r12, lr, interrupted, psr] = stacked as number[]
      const size = ((ra & 0x10) === 0 ? 0x68 : 0x20) + ((psr >>> 9) & 1) * 4
      registers = new Map([[0, r0], [1, r1], [2, r2], [3, r3], [12, r12], [14, lr], [SP, (cfa + size) >>> 0]])
      pc = even(interrupted)
      returned = false
      continue
    }
    // Outside the image: where the first code was entered from (the reset value of LR, 0xffffffff).
    if (!inCode(code, even(ra))) break
    // The call before the return address went elsewhere than this frame's function: tail calls led here.
    const called = branchAt(code, even(ra) - 4)
    const reached = cfi.functionAt(lookup)?.start
    if (called?.call === true && reached !== undefined && called.target !== reached) {
      for (const at of tailCalls(cfi, code, called.target, reached)) frames.push({ kind: 'tail', address: at, lookup: at })
    }
    registers = caller
    pc = even(ra)
    returned = true
  }
  return { method: 'cfi', frames, truncated }
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

/** Longest chain of tail calls looked for between a call and the function its callee's frame is in. */
const TAIL_DEPTH = 3

const signed = (value: number, bits: number): number => (value << (32 - bits)) >> (32 - bits)

/** The branch at `address` (B, B<c> or BL; 16 or 32 bits) and its target, or undefined when it is no branch. */
export function branchAt (code: readonly CodeSection[], address: number): { target: number, call: boolean, size: 2 | 4 } | undefined {
  const first = halfword(code, address)
  if (first === undefined) return undefined
  if ((first & 0xf800) === 0xe000) return { target: address + 4 + signed((first & 0x7ff) << 1, 12), call: false, size: 2 } // B T2
  if ((first & 0xf000) === 0xd000 && (first & 0x0e00) !== 0x0e00) return { target: address + 4 + signed((first & 0xff) << 1, 9), call: false, size: 2 } // B<c> T1
  const second = halfword(code, address + 2)
  if ((first & 0xf800) !== 0xf000 || second === undefined) return undefined
  const s = (first >> 10) & 1
  const j1 = (second >> 13) & 1
  const j2 = (second >> 11) & 1
  if ((second & 0x9000) === 0x9000) { // BL T1 (bit 14 set) or B.W T4
    const offset = signed((s << 24) | ((1 - (j1 ^ s)) << 23) | ((1 - (j2 ^ s)) << 22) | ((first & 0x3ff) << 12) | ((second & 0x7ff) << 1), 25)
    return { target: address + 4 + offset, call: (second & 0x4000) !== 0, size: 4 }
  }
  if ((second & 0xd000) === 0x8000 && ((first >> 7) & 7) !== 7) { // B<c>.W T3
    const offset = signed((s << 20) | (j2 << 19) | (j1 << 18) | ((first & 0x3f) << 12) | ((second & 0x7ff) << 1), 21)
    return { target: address + 4 + offset, call: false, size: 4 }
  }
  return undefined
}

/** The branches in a function's code to the start of another function: its tail calls. */
function tailBranches (cfi: CallFrames, code: readonly CodeSection[], start: number): Array<{ at: number, to: number }> {
  const bounds = cfi.functionAt(start)
  const branches: Array<{ at: number, to: number }> = []
  for (let at = start; bounds !== undefined && at < bounds.end;) {
    const first = halfword(code, at)
    if (first === undefined) break
    const branch = branchAt(code, at)
    if (branch !== undefined && !branch.call && (branch.target < bounds.start || branch.target >= bounds.end) && cfi.functionAt(branch.target)?.start === branch.target) {
      branches.push({ at, to: branch.target })
    }
    at += (first & 0xf800) >= 0xe800 ? 4 : 2
  }
  return branches
}

/**
 * The tail calls by which a call to `called` reached the function at `reached`: the address of each
 * branch, innermost first, when exactly one chain (of at most TAIL_DEPTH) leads there; none otherwise.
 */
function tailCalls (cfi: CallFrames, code: readonly CodeSection[], called: number, reached: number): number[] {
  const chains: number[][] = []
  const walk = (from: number, path: number[]): void => {
    if (path.length >= TAIL_DEPTH || chains.length > 1) return
    for (const { at, to } of tailBranches(cfi, code, from)) {
      if (to === reached) chains.push([at, ...path])
      else walk(to, [at, ...path])
    }
  }
  walk(called, [])
  return chains.length === 1 ? chains[0] : []
}

const functionOf = (symbol: string): string => symbol.split(' at ')[0]

/**
 * The backtrace from the frames and what each resolved to: the functions inlined at its address,
 * innermost first, and the one they were inlined into, each a frame (undefined: not in the image, no
 * frame). By scanning, an LR in the faulting function itself is a return address left by an earlier
 * call, not its caller: left out; so is a frame that repeats the one before it (a return address both in
 * LR and saved on the stack). Frames unwound by call-frame information are taken as they are.
 */
export function backtraceOf (unwound: Unwound, symbols: ReadonlyArray<readonly string[] | undefined>): BacktraceFrame[] {
  const kept: Array<{ frame: FrameAddress, chain: readonly string[] }> = []
  unwound.frames.forEach((frame, i) => {
    const chain = symbols[i]
    if (chain === undefined || chain.length === 0) return
    const previous = kept[kept.length - 1]
    if (unwound.method === 'scan' && previous !== undefined && (previous.frame.address === frame.address ||
      (frame.kind === 'lr' && functionOf(previous.chain[previous.chain.length - 1]) === functionOf(chain[chain.length - 1])))) return
    kept.push({ frame, chain })
  })
  const backtrace: BacktraceFrame[] = kept.flatMap(({ frame, chain }) => chain.map(symbol => ({ address: frame.address, symbol, unwind: unwound.method }))).slice(0, MAX_FRAMES)
  if (unwound.truncated && backtrace.length > 0) backtrace[backtrace.length - 1].truncated = true
  return backtrace
}
