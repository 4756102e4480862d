// Call-frame information on crafted `.debug_frame` bytes: the rows its instructions describe (CFA,
// saved registers, remember/restore state, restore to the CIE's rule), FDEs of dropped functions left
// out, and the unwinding of a fault's snapshot with it: through leaf and saving functions, a call through
// a bad pointer, an exception frame, the snapshot's end (truncated), a tail call (a function that
// branched to the faulting one: the call before the return address went to it), and scanning where it
// says nothing.
// The QEMU device's real crashes are unwound in test/firmware/backtraces.test.ts.
import t from 'tap'
import { readDebugFrame } from '../../../plugins/symbolication/cfi.js'
import { branchAt, unwind, unwindCfi } from '../../../plugins/symbolication/unwind.js'

const u32 = (n: number): Buffer => Buffer.from(Uint32Array.of(n >>> 0).buffer)
/** A CIE as GCC writes it for Thumb: code alignment 2, data alignment -4, return address in r14, CFA = sp. */
const CIE = ((): Buffer => {
  const body = Buffer.from([1, 0, 2, 0x7c, 14, 0x0c, 13, 0])
  return Buffer.concat([u32(body.length + 4), u32(0xffffffff), body])
})()
const fde = (start: number, range: number, ...instructions: number[]): Buffer => {
  const body = Buffer.concat([u32(0), u32(start), u32(range), Buffer.from(instructions)])
  return Buffer.concat([u32(body.length), body])
}
const CODE = [{ address: 0x1000, bytes: Buffer.alloc(0x100) }]

// leaf 0x1000-0x1010: saves nothing. mid 0x1010-0x1030: push {r4, lr} at 0x1010 (CFA sp+8, r4 at
// CFA-8, lr at CFA-4), an epilogue at 0x1028 described with remember/restore state. top 0x1030-0x1050:
// push {r3, lr}. isr 0x1050-0x1060: push {r3, lr}. A dropped function's FDE at 0 covering 0x1000-0x1010.
const SECTION = Buffer.concat([
  CIE,
  fde(0x1000, 0x10),
  fde(0x1010, 0x20, 0x41, 0x0e, 8, 0x84, 2, 0x8e, 1, 0x4b, 0x0a, 0x0e, 0, 0xc4, 0xce, 0x41, 0x0b),
  fde(0x1030, 0x20, 0x41, 0x0e, 8, 0x83, 2, 0x8e, 1),
  fde(0x1050, 0x10, 0x41, 0x0e, 8, 0x83, 2, 0x8e, 1),
  fde(0, 0x1010, 0x41, 0x0e, 64)
])
const stack = (...words: number[]): string => Buffer.concat(words.map(u32)).toString('hex')
const SP = 0x20000f00

t.test('rows: the CFA and saved registers at each address', async t => {
  const cfi = readDebugFrame(SECTION, CODE)
  t.same(cfi.row(0x1004), { cfa: { register: 13, offset: 0 }, registers: new Map(), returnRegister: 14 }, 'a leaf: the CIE\'s row, the return address still in LR')
  t.same(cfi.row(0x1010)?.cfa, { register: 13, offset: 0 }, 'before the push')
  t.same(cfi.row(0x1012), { cfa: { register: 13, offset: 8 }, registers: new Map([[4, { kind: 'offset', offset: -8 }], [14, { kind: 'offset', offset: -4 }]]), returnRegister: 14 }, 'after it')
  t.same(cfi.row(0x1028), { cfa: { register: 13, offset: 0 }, registers: new Map(), returnRegister: 14 }, 'after the epilogue\'s pop: restored to the CIE\'s rules')
  t.same(cfi.row(0x102a)?.cfa, { register: 13, offset: 8 }, 'and the remembered state again after it')
  t.equal(cfi.row(0x1060), undefined, 'an address no FDE covers')
  t.equal(readDebugFrame(SECTION, [{ address: 0x1000, bytes: Buffer.alloc(0x20) }]).row(0x1030), undefined, 'functions outside the code are left out')
  t.equal(readDebugFrame(Buffer.concat([CIE, fde(0x1000, 0x10, 0x41, 0x30)]), CODE).row(0x1004), undefined, 'an unknown instruction: no row')
  t.equal(readDebugFrame(Buffer.concat([CIE, fde(0x1000, 0x10, 0x0c, 0x8d)]), CODE).row(0x1004), undefined, 'an instruction cut short: no row')
  t.same(readDebugFrame(Buffer.concat([CIE, fde(0x1000, 0x10, 0x0c, 7, 16, 0x10, 5, 1, 0x50)]), CODE).row(0x1000),
    { cfa: { register: 7, offset: 16 }, registers: new Map([[5, { kind: 'expression' }]]), returnRegister: 14 }, 'def_cfa, and an expression rule skipped over')
})

t.test('unwinding: the PC, then each caller whose return address the snapshot holds', async t => {
  const cfi = readDebugFrame(SECTION, CODE)
  const fault = { pc: 0x1004, lr: 0x1021, sp: SP, stack: stack(0x44, 0x1041, 0x33, 0xffffffff) }
  const whole = unwindCfi(cfi, CODE, fault)
  t.same(whole?.frames.map(f => [f.address, f.lookup]), [[0x1004, 0x1004], [0x1020, 0x101e], [0x1040, 0x103e]], 'leaf (LR), mid and top (saved), each looked up inside its call')
  t.equal(whole?.truncated, false, 'the code ends (the reset value of LR) inside the snapshot')
  const cut = unwindCfi(cfi, CODE, { ...fault, stack: stack(0x44, 0x1041) })
  t.same(cut?.frames.map(f => f.address), [0x1004, 0x1020, 0x1040], 'the snapshot ends at top\'s frame')
  t.equal(cut?.truncated, true, 'where top saved its return address was not sent: truncated')
  const bad = unwindCfi(cfi, CODE, { pc: 0, lr: 0x1021, sp: SP, stack: stack(0x44, 0x1041, 0x33, 0xffffffff) })
  t.same(bad?.frames.map(f => [f.address, f.lookup]), [[0, 0], [0x1020, 0x101e], [0x1040, 0x103e]], 'a call through a null pointer: the PC, then the caller at the LR')
  const cfaByR7 = readDebugFrame(Buffer.concat([CIE, fde(0x1000, 0x10, 0x0c, 7, 8)]), CODE)
  t.same(unwindCfi(cfaByR7, CODE, fault)?.frames.map(f => f.address), [0x1004], 'a CFA by a register the fault does not carry: no further')
})

t.test('an exception frame: the interrupted code continues the backtrace', async t => {
  const cfi = readDebugFrame(SECTION, CODE)
  // isr saved r3 and EXC_RETURN (to Thread mode, MSP); the stacked r0-r3, r12, LR, PC, xPSR of leaf
  // (interrupted at 0x1006, LR into mid), with the alignment word (xPSR bit 9); then mid's and top's frames.
  const words = [0x33, 0xfffffff9, 0, 1, 2, 3, 12, 0x1021, 0x1006, 0x01000200, 0xaaaa, 0x44, 0x1041, 0x33, 0xffffffff]
  const unwound = unwindCfi(cfi, CODE, { pc: 0x1054, lr: 0xfffffff9, sp: SP, stack: stack(...words) })
  t.same(unwound?.frames.map(f => [f.address, f.lookup]), [[0x1054, 0x1054], [0x1006, 0x1006], [0x1020, 0x101e], [0x1040, 0x103e]],
    'isr, the interrupted instruction itself, and its callers')
  t.equal(unwound?.truncated, false)
  const psp = unwindCfi(cfi, CODE, { pc: 0x1054, lr: 0xfffffffd, sp: SP, stack: stack(0x33, 0xfffffffd) })
  t.same([psp?.frames.length, psp?.truncated], [1, true], 'interrupting code on the other stack (PSP): not in the snapshot')
})

t.test('scanning where the table says nothing', async t => {
  const cfi = readDebugFrame(Buffer.concat([CIE, fde(0x1010, 0x20, 0x41, 0x0e, 8, 0x8e, 1)]), CODE)
  const fault = { pc: 0x1004, lr: 0x1021, sp: SP, stack: stack(0x1041) }
  t.equal(unwind(cfi, CODE, fault).method, 'scan', 'a PC in code without an FDE')
  t.equal(unwind(undefined, CODE, fault).method, 'scan', 'an image without .debug_frame')
  t.equal(unwind(cfi, CODE, { ...fault, pc: 0x1012 }).method, 'cfi', 'a PC the table describes')
})

/** The Thumb-2 BL (or B.W, `link` false) at `from` to `to`, as two halfwords. */
function branch (from: number, to: number, link: boolean): number[] {
  const offset = to - (from + 4)
  const s = offset < 0 ? 1 : 0
  const [i1, i2] = [(offset >> 23) & 1, (offset >> 22) & 1]
  const [j1, j2] = [(1 - i1) ^ s, (1 - i2) ^ s]
  return [0xf000 | (s << 10) | ((offset >> 12) & 0x3ff), (link ? 0xd000 : 0x9000) | (j1 << 13) | (j2 << 11) | ((offset >> 1) & 0x7ff)]
}

t.test('branches: BL, B.W, B and B<c>, forwards and backwards', async t => {
  const code = [{ address: 0x1000, bytes: Buffer.from(Uint16Array.from([...branch(0x1000, 0x1040, true), ...branch(0x1004, 0x1000, false), 0xe7fa, 0xd0f9, 0x4770]).buffer) }]
  t.same(branchAt(code, 0x1000), { target: 0x1040, call: true, size: 4 }, 'BL forwards')
  t.same(branchAt(code, 0x1004), { target: 0x1000, call: false, size: 4 }, 'B.W backwards')
  t.same(branchAt(code, 0x1008), { target: 0x1000, call: false, size: 2 }, 'B')
  t.same(branchAt(code, 0x100a), { target: 0x1000, call: false, size: 2 }, 'BEQ')
  t.equal(branchAt(code, 0x100c), undefined, 'BX LR is no branch to an address')
})

t.test('a tail call: the function that branched to the faulting one, between it and the caller', async t => {
  // leaf 0x1000-0x1010 faults; tail 0x1010-0x1020 branched to it (B.W at 0x1014); caller 0x1030-0x1050
  // (push {r3, lr}) called tail (BL at 0x1040, returning to 0x1044).
  const bytes = Buffer.alloc(0x100)
  const put = (at: number, halfwords: number[]): void => { halfwords.forEach((h, i) => bytes.writeUInt16LE(h, at - 0x1000 + 2 * i)) }
  put(0x1014, branch(0x1014, 0x1000, false))
  put(0x1040, branch(0x1040, 0x1010, true))
  const code = [{ address: 0x1000, bytes }]
  const cfi = readDebugFrame(Buffer.concat([CIE, fde(0x1000, 0x10), fde(0x1010, 0x10), fde(0x1030, 0x20, 0x41, 0x0e, 8, 0x83, 2, 0x8e, 1)]), code)
  const unwound = unwindCfi(cfi, code, { pc: 0x1004, lr: 0x1045, sp: SP, stack: stack(0x33, 0xffffffff) })
  t.same(unwound?.frames.map(f => [f.kind, f.address, f.lookup]), [['pc', 0x1004, 0x1004], ['tail', 0x1014, 0x1014], ['stack', 0x1044, 0x1042]],
    'the branch of the function that left no frame, at its own address')
  put(0x1018, branch(0x1018, 0x1000, false))
  const twice = unwindCfi(cfi, code, { pc: 0x1004, lr: 0x1045, sp: SP, stack: stack(0x33, 0xffffffff) })
  t.same(twice?.frames.map(f => f.kind), ['pc', 'stack'], 'two branches that could have led there: none inferred')
})
