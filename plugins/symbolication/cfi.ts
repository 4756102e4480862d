// Call-frame information of an ELF image: its `.debug_frame` (DWARF CFI, versions 1 to 4, 32-bit
// format), read into the functions it covers (FDEs) and, for an address, the row of the table its
// instructions describe: how to find the canonical frame address (CFA, a register plus an offset) and
// where each register of the caller was saved. No maintained npm package reads CFI, so this is the small
// part of DWARF that unwinding needs; expressions (DW_CFA_*expression) are not evaluated: a row that
// needs one has no CFA, and a register saved by one is unknown.

/** Where a register of the caller is, at a row. Registers with no rule keep their value (same value). */
export type RegisterRule =
  | { kind: 'undefined' }
  | { kind: 'same' }
  /** Saved at CFA + offset. */
  | { kind: 'offset', offset: number }
  /** Its value is CFA + offset. */
  | { kind: 'value', offset: number }
  /** In another register. */
  | { kind: 'register', register: number }
  /** Computed by a DWARF expression, which this reader does not evaluate. */
  | { kind: 'expression' }

export interface CfiRow {
  /** CFA = register + offset; undefined when the row defines it by an expression. */
  cfa: { register: number, offset: number } | undefined
  registers: Map<number, RegisterRule>
  /** The column of the return address (14, LR, on ARM). */
  returnRegister: number
}

interface Cie {
  codeAlign: number
  dataAlign: number
  returnRegister: number
  instructions: Buffer
}

interface Fde {
  start: number
  end: number
  cie: Cie
  instructions: Buffer
}

/** The table of a `.debug_frame`, for the functions whose start lies in `covers` (the image's code). */
export class CallFrames {
  /** Sorted by start address. */
  readonly #fdes: Fde[]

  constructor (fdes: Fde[]) {
    this.#fdes = fdes.sort((a, b) => a.start - b.start)
  }

  /** The bounds of the function whose code holds `address`, as its FDE gives them. */
  functionAt (address: number): { start: number, end: number } | undefined {
    const fde = this.#find(address)
    return fde === undefined ? undefined : { start: fde.start, end: fde.end }
  }

  /** The row in effect at `address`, or undefined when no FDE covers it (or its instructions are malformed). */
  row (address: number): CfiRow | undefined {
    const fde = this.#find(address)
    if (fde === undefined) return undefined
    const initial = execute(fde.cie, fde.cie.instructions, undefined, 0, -1)
    if (initial === undefined) return undefined
    return execute(fde.cie, fde.instructions, initial, fde.start, address)
  }

  #find (address: number): Fde | undefined {
    let low = 0
    let high = this.#fdes.length - 1
    while (low <= high) {
      const middle = (low + high) >> 1
      const fde = this.#fdes[middle]
      if (address < fde.start) high = middle - 1
      else if (address >= fde.end) low = middle + 1
      else return fde
    }
    return undefined
  }
}

/** A reader of DWARF's encodings over `bytes`; reads past the end throw RangeError. */
class Reader {
  at: number
  constructor (readonly bytes: Buffer, at = 0) {
    this.at = at
  }

  get done (): boolean {
    return this.at >= this.bytes.length
  }

  u8 (): number { return this.bytes.readUInt8(this.at++) }
  u16 (): number { const v = this.bytes.readUInt16LE(this.at); this.at += 2; return v }
  u32 (): number { const v = this.bytes.readUInt32LE(this.at); this.at += 4; return v }

  uleb (): number { return this.#leb(false) }
  sleb (): number { return this.#leb(true) }

  /** A LEB128 number; signed, its last byte's bit 6 is the sign. */
  #leb (signed: boolean): number {
    let value = 0
    let shift = 0
    for (;;) {
      const byte = this.u8()
      value += (byte & 0x7f) * 2 ** shift
      shift += 7
      if ((byte & 0x80) === 0) return signed && (byte & 0x40) !== 0 ? value - 2 ** shift : value
    }
  }

  cstring (): string {
    const end = this.bytes.indexOf(0, this.at)
    if (end < 0) throw new RangeError('unterminated string')
    const text = this.bytes.toString('latin1', this.at, end)
    this.at = end + 1
    return text
  }

  skip (length: number): void {
    if (this.at + length > this.bytes.length) throw new RangeError('block past the end')
    this.at += length
  }
}

const CIE_ID = 0xffffffff

/**
 * The FDEs of a `.debug_frame` (little-endian, 4-byte addresses) whose function starts inside one of
 * `code`'s ranges: functions the linker dropped keep their FDEs with address 0, which would cover
 * what lies there. Entries it cannot read (64-bit DWARF, a CIE with augmentation data) are skipped.
 */
export function readDebugFrame (section: Buffer, code: ReadonlyArray<{ address: number, bytes: Buffer }>): CallFrames {
  const inCode = (address: number): boolean => code.some(c => address >= c.address && address < c.address + c.bytes.length)
  const cies = new Map<number, Cie | undefined>()
  const cieAt = (offset: number): Cie | undefined => {
    if (!cies.has(offset)) cies.set(offset, readCie(section, offset))
    return cies.get(offset)
  }
  const fdes: Fde[] = []
  let at = 0
  while (at + 4 <= section.length) {
    const length = section.readUInt32LE(at)
    if (length === 0xffffffff || length < 4 || at + 4 + length > section.length) break
    const end = at + 4 + length
    const id = section.readUInt32LE(at + 4)
    if (id !== CIE_ID && length >= 12) {
      const cie = cieAt(id)
      const start = section.readUInt32LE(at + 8)
      const range = section.readUInt32LE(at + 12)
      if (cie !== undefined && range > 0 && inCode(start)) fdes.push({ start, end: start + range, cie, instructions: section.subarray(at + 16, end) })
    }
    at = end
  }
  return new CallFrames(fdes)
}

function readCie (section: Buffer, offset: number): Cie | undefined {
  try {
    if (offset + 8 > section.length) return undefined
    const length = section.readUInt32LE(offset)
    const end = offset + 4 + length
    if (length === 0xffffffff || end > section.length || section.readUInt32LE(offset + 4) !== CIE_ID) return undefined
    const r = new Reader(section.subarray(0, end), offset + 8)
    const version = r.u8()
    const augmentation = r.cstring()
    // Augmentations change the layout (GCC writes "" in .debug_frame); only "" is read.
    if (augmentation !== '' || version < 1 || version > 4) return undefined
    if (version === 4) {
      const addressSize = r.u8()
      r.u8() // segment selector size
      if (addressSize !== 4) return undefined
    }
    const codeAlign = r.uleb()
    const dataAlign = r.sleb()
    const returnRegister = version === 1 ? r.u8() : r.uleb()
    return { codeAlign, dataAlign, returnRegister, instructions: section.subarray(r.at, end) }
  } catch (err) {
    if (err instanceof RangeError) return undefined
    throw err
  }
}

const copyRow = (row: CfiRow): CfiRow => ({ ...row, cfa: row.cfa === undefined ? undefined : { ...row.cfa }, registers: new Map(row.registers) })

/**
 * Run CFA instructions from `start`, on `initial` (the CIE's row; undefined while running the CIE's
 * own instructions), up to the row in effect at `address` (-1: all of them). Undefined when they are
 * malformed.
 */
function execute (cie: Cie, instructions: Buffer, initial: CfiRow | undefined, start: number, address: number): CfiRow | undefined {
  const row: CfiRow = initial === undefined ? { cfa: undefined, registers: new Map(), returnRegister: cie.returnRegister } : copyRow(initial)
  const restore = (register: number): void => {
    const rule = initial?.registers.get(register)
    if (rule === undefined) row.registers.delete(register)
    else row.registers.set(register, rule)
  }
  const stack: CfiRow[] = []
  const r = new Reader(instructions)
  let location = start
  /** Whether the row now in effect starts past `address`: the row wanted is the one before. */
  const advance = (delta: number): boolean => {
    location += delta * cie.codeAlign
    return address >= 0 && location > address
  }
  try {
    while (!r.done) {
      const op = r.u8()
      const low = op & 0x3f
      switch (op >> 6) {
        case 1: if (advance(low)) return row; continue
        case 2: row.registers.set(low, { kind: 'offset', offset: r.uleb() * cie.dataAlign }); continue
        case 3: restore(low); continue
      }
      switch (op) {
        case 0x00: break // nop
        case 0x01: { // set_loc
          const target = r.u32()
          if (address >= 0 && target > address) return row
          location = target
          break
        }
        case 0x02: if (advance(r.u8())) return row; break
        case 0x03: if (advance(r.u16())) return row; break
        case 0x04: if (advance(r.u32())) return row; break
        case 0x05: row.registers.set(r.uleb(), { kind: 'offset', offset: r.uleb() * cie.dataAlign }); break
        case 0x06: restore(r.uleb()); break
        case 0x07: row.registers.set(r.uleb(), { kind: 'undefined' }); break
        case 0x08: row.registers.set(r.uleb(), { kind: 'same' }); break
        case 0x09: row.registers.set(r.uleb(), { kind: 'register', register: r.uleb() }); break
        case 0x0a: stack.push(copyRow(row)); break // remember_state
        case 0x0b: { // restore_state: the CFA and the rules as remembered
          const saved = stack.pop()
          if (saved === undefined) return undefined
          row.cfa = saved.cfa
          row.registers = saved.registers
          break
        }
        case 0x0c: row.cfa = { register: r.uleb(), offset: r.uleb() }; break
        case 0x0d: { const register = r.uleb(); row.cfa = row.cfa === undefined ? undefined : { register, offset: row.cfa.offset }; break }
        case 0x0e: { const offset = r.uleb(); row.cfa = row.cfa === undefined ? undefined : { register: row.cfa.register, offset }; break }
        case 0x0f: r.skip(r.uleb()); row.cfa = undefined; break // def_cfa_expression
        case 0x10: row.registers.set(r.uleb(), { kind: 'expression' }); r.skip(r.uleb()); break
        case 0x11: row.registers.set(r.uleb(), { kind: 'offset', offset: r.sleb() * cie.dataAlign }); break
        case 0x12: row.cfa = { register: r.uleb(), offset: r.sleb() * cie.dataAlign }; break
        case 0x13: { const offset = r.sleb() * cie.dataAlign; row.cfa = row.cfa === undefined ? undefined : { register: row.cfa.register, offset }; break }
        case 0x14: row.registers.set(r.uleb(), { kind: 'value', offset: r.uleb() * cie.dataAlign }); break
        case 0x15: row.registers.set(r.uleb(), { kind: 'value', offset: r.sleb() * cie.dataAlign }); break
        case 0x16: row.registers.set(r.uleb(), { kind: 'expression' }); r.skip(r.uleb()); break
        case 0x2e: r.uleb(); break // GNU_args_size
        case 0x2f: row.registers.set(r.uleb(), { kind: 'offset', offset: -r.uleb() * cie.dataAlign }); break // GNU_negative_offset_extended
        default: return undefined
      }
    }
  } catch (err) {
    if (err instanceof RangeError) return undefined
    throw err
  }
  return row
}
