// The fault status registers of an ARMv7-M/ARMv8-M core (CFSR with its MemManage, BusFault and
// UsageFault parts, HFSR) put into words, with the faulting address when MMFAR or BFAR holds one.
// Bits as the Armv7-M Architecture Reference Manual (B3.2.15, B3.2.16) names them.
import type { FaultRecord } from './wire/payloads.js'

export interface FaultCause {
  register: 'CFSR' | 'HFSR'
  /** The bit's name in the architecture manual (INVSTATE, PRECISERR…). */
  name: string
  /** What it means, in words. */
  meaning: string
}

export interface DecodedFault {
  /** The set bits that say why, in register order; empty when the registers hold none. */
  causes: FaultCause[]
  /** `INVSTATE: invalid state — …` per cause: what a person reads. */
  summary: string[]
  /** The data address the core reports for a MemManage (MMFAR) or precise bus fault (BFAR), when valid. */
  address: { register: 'MMFAR' | 'BFAR', value: number } | null
  /** The first cause's name, or 'fault' when no bit is set: how issues and charts label the fault. */
  kind: string
}

const CFSR_BITS: ReadonlyArray<readonly [number, string, string]> = [
  [0, 'IACCVIOL', 'instruction access violation — executing from memory the MPU or the memory map forbids (often a call through a corrupt function pointer)'],
  [1, 'DACCVIOL', 'data access violation — a load or store to memory the MPU forbids (a NULL or wild pointer)'],
  [3, 'MUNSTKERR', 'MemManage fault while unstacking on exception return (a corrupt stack pointer)'],
  [4, 'MSTKERR', 'MemManage fault while stacking on exception entry (stack overflow into a protected region)'],
  [5, 'MLSPERR', 'MemManage fault during lazy floating-point state preservation'],
  [8, 'IBUSERR', 'instruction bus error — fetching an instruction from an address with no memory behind it'],
  [9, 'PRECISERR', 'precise data bus error — a load or store to an address with no memory behind it'],
  [10, 'IMPRECISERR', 'imprecise data bus error — a buffered write failed; the faulting instruction is somewhere before the PC'],
  [11, 'UNSTKERR', 'bus fault while unstacking on exception return'],
  [12, 'STKERR', 'bus fault while stacking on exception entry (the stack pointer left RAM: stack overflow)'],
  [13, 'LSPERR', 'bus fault during lazy floating-point state preservation'],
  [16, 'UNDEFINSTR', 'undefined instruction — executing data or a corrupt code region'],
  [17, 'INVSTATE', 'invalid state — branch to an address without the Thumb bit (a bad function pointer or return address)'],
  [18, 'INVPC', 'invalid PC load on exception return (a corrupt EXC_RETURN value or stack)'],
  [19, 'NOCP', 'no coprocessor — a floating-point instruction with the FPU disabled'],
  [20, 'STKOF', 'stack overflow — the stack pointer went below its limit register (Armv8-M)'],
  [24, 'UNALIGNED', 'unaligned access with unaligned trapping enabled'],
  [25, 'DIVBYZERO', 'integer division by zero with divide-by-zero trapping enabled']
]

const HFSR_BITS: ReadonlyArray<readonly [number, string, string]> = [
  [1, 'VECTTBL', 'bus fault reading the vector table during exception processing'],
  [30, 'FORCED', 'a configurable fault escalated to HardFault (its handler is disabled or could not run)'],
  [31, 'DEBUGEVT', 'debug event with halting debug off (a breakpoint instruction without a debugger)']
]

const MMARVALID = 1 << 7
const BFARVALID = 1 << 15

const set = (value: number, bits: typeof CFSR_BITS, register: FaultCause['register']): FaultCause[] =>
  bits.filter(([bit]) => ((value >>> bit) & 1) === 1).map(([, name, meaning]) => ({ register, name, meaning }))

/** The causes a fault record's status registers give, and the address they report. */
export function decodeFault (fault: Pick<FaultRecord, 'cfsr' | 'hfsr' | 'mmfar' | 'bfar'>): DecodedFault {
  // A forced HardFault is explained by the CFSR bits it escalated: those come first.
  const causes = [...set(fault.cfsr, CFSR_BITS, 'CFSR'), ...set(fault.hfsr, HFSR_BITS, 'HFSR')]
  const address = (fault.cfsr & MMARVALID) !== 0
    ? { register: 'MMFAR' as const, value: fault.mmfar >>> 0 }
    : (fault.cfsr & BFARVALID) !== 0 ? { register: 'BFAR' as const, value: fault.bfar >>> 0 } : null
  return { causes, summary: causes.map(c => `${c.name}: ${c.meaning}`), address, kind: causes[0]?.name ?? 'fault' }
}
