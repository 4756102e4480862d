// Stack scanning on Thumb code: which words of a stack snapshot are return addresses (odd, in the
// image's code, just after BL or BLX Rm), and how the frames become a backtrace (a stale LR in the
// faulting function and repeated frames left out), functions inlined at an address, and frames unwound
// by call-frame information (test/plugins/symbolication/cfi.test.ts) kept as they are. The QEMU device's
// real crashes are unwound in test/e2e/device.test.ts and test/firmware/backtraces.test.ts.
import t from 'tap'
import { backtraceOf, followsCall, frameAddresses, MAX_FRAMES } from '../../../plugins/symbolication/unwind.js'

const halfwords = (...values: number[]): Buffer => Buffer.from(Uint16Array.from(values).buffer)
// 0x1000: push {r3, lr}; bl <0x1100>; movs r3, #10; blx r3; adds r0, #1; ldr r0, [pc, #16]; nop
const CODE = [{ address: 0x1000, bytes: halfwords(0xb508, 0xf000, 0xf87e, 0x230a, 0x4798, 0x3001, 0x4804, 0xbf00) }]
const word = (n: number): string => Buffer.from(Uint32Array.of(n).buffer).toString('hex')

t.test('a return address follows a call: BL (32 bits) or BLX Rm (16 bits)', async t => {
  t.ok(followsCall(CODE, 0x1006), 'after BL')
  t.ok(followsCall(CODE, 0x100a), 'after BLX r3')
  t.notOk(followsCall(CODE, 0x1008), 'after a MOVS')
  t.notOk(followsCall(CODE, 0x100e), 'after an LDR')
  t.notOk(followsCall(CODE, 0x1002), 'the first halfword of BL alone is not a call')
  t.notOk(followsCall(CODE, 0x2000), 'outside the code')
  t.notOk(followsCall([], 0x1006), 'an image without code sections')
})

t.test('frames: PC, LR, then the return addresses among the stack words', async t => {
  const stack = [0x20001f10, 0x1007, 0x1006, 0x100b, 0x1009, 0x2001, 0].map(word).join('')
  const frames = frameAddresses(CODE, { pc: 0x1010, lr: 0x100b, stack })
  t.same(frames.map(f => [f.kind, f.address, f.lookup]), [['pc', 0x1010, 0x1010], ['lr', 0x100a, 0x1008], ['stack', 0x1006, 0x1004], ['stack', 0x100a, 0x1008]],
    'a data pointer, an even word, a word after a MOVS and one outside the code are not frames')
  t.same(frameAddresses(CODE, { pc: 0x1010, lr: 0x100b }).length, 2, 'no snapshot: PC and LR')
  const deep = frameAddresses(CODE, { pc: 0, lr: 0, stack: word(0x1007).repeat(100) })
  t.equal(deep.length, MAX_FRAMES + 2, 'a snapshot of nothing but return addresses stops at the frame limit')
})

t.test('the backtrace: unresolved frames, a stale LR and repeats left out', async t => {
  const scanned = { method: 'scan' as const, frames: frameAddresses(CODE, { pc: 0x1010, lr: 0x100b, stack: [0x1007, 0x1007, 0x100b].map(word).join('') }), truncated: false }
  const symbols = [['sensor_read at s.c:4'], ['sensor_read at s.c:3'], ['task at t.c:9'], ['task at t.c:9'], undefined]
  t.same(backtraceOf(scanned, symbols), [{ address: 0x1010, symbol: 'sensor_read at s.c:4', unwind: 'scan' }, { address: 0x1006, symbol: 'task at t.c:9', unwind: 'scan' }],
    'LR inside the faulting function is an earlier call\'s; the same return address twice is one frame')
  t.same(backtraceOf(scanned, [undefined, ['sensor_read at s.c:3'], ['task at t.c:9'], undefined, undefined]).map(f => f.symbol), ['sensor_read at s.c:3', 'task at t.c:9'],
    'a PC outside the image (a call through a bad pointer): the LR is the first frame')
  t.same(backtraceOf(scanned, [['scale at s.h:2', 'sensor_read at s.c:4'], ['sensor_read at s.c:3'], ['task at t.c:9']]).map(f => [f.address, f.symbol]),
    [[0x1010, 'scale at s.h:2'], [0x1010, 'sensor_read at s.c:4'], [0x1006, 'task at t.c:9']],
    'a function inlined at an address is a frame of its own, before the function it was inlined into (whose LR is still left out)')
})

t.test('the backtrace of frames unwound by call-frame information: as they are, the last marked when the snapshot ended', async t => {
  const frames = [{ kind: 'pc' as const, address: 0x1010, lookup: 0x1010 }, { kind: 'stack' as const, address: 0x1006, lookup: 0x1004 }, { kind: 'stack' as const, address: 0x1006, lookup: 0x1004 }]
  const symbols = [['walk at w.c:3'], ['walk at w.c:5'], ['walk at w.c:5']]
  t.same(backtraceOf({ method: 'cfi', frames, truncated: true }, symbols), [
    { address: 0x1010, symbol: 'walk at w.c:3', unwind: 'cfi' },
    { address: 0x1006, symbol: 'walk at w.c:5', unwind: 'cfi' },
    { address: 0x1006, symbol: 'walk at w.c:5', unwind: 'cfi', truncated: true }
  ], 'recursion keeps its repeated return addresses')
  t.same(backtraceOf({ method: 'cfi', frames, truncated: false }, symbols).map(f => f.truncated), [undefined, undefined, undefined], 'complete: no mark')
})
