// ELF images: check that a file is an ELF image, find its GNU build id (NT_GNU_BUILD_ID note), and
// read its code (the sections of executable instructions, for backtraces), its other sections by
// name (`.debug_frame`, for unwinding) and its data objects (the symbol table's, for coredumps),
// reading only within the file's bounds.
import { createHash } from 'node:crypto'

const SHT_PROGBITS = 1
const SHT_SYMTAB = 2
const SHT_STRTAB = 3
const SHT_NOTE = 7
const SHF_ALLOC = 0x2
const SHF_EXECINSTR = 0x4
/** e_machine of 32-bit ARM images. */
export const ELF_MACHINE_ARM = 40
const NT_GNU_BUILD_ID = 3
/** A symbol's type (the low 4 bits of st_info): a data object. */
const STT_OBJECT = 1

export interface ElfInfo {
  /** GNU build id as lowercase hex, or undefined when the image has none. */
  buildId: string | undefined
  /** 32 or 64. */
  bits: 32 | 64
  /** e_machine (40 = ARM). */
  machine: number
  /** SHA-1 of the whole file, the id used when there is no build id. */
  sha1: string
}

export type ElfResult = { ok: true, info: ElfInfo } | { ok: false, reason: string }

/** A data object of the symbol table: a variable, its address and size in bytes. */
export interface ObjectSymbol {
  name: string
  address: number
  size: number
}

/** A section of code as loaded: its address and bytes. */
export interface CodeSection {
  address: number
  bytes: Buffer
}

interface Section { name: number, type: number, flags: number, address: number, offset: number, size: number, link: number }

interface ElfLayout {
  bits: 32 | 64
  machine: number
  u32: (at: number) => number
  u16: (at: number) => number
  /** An address-sized field (32 or 64 bits). */
  addr: (at: number) => number
  sections: Section[]
  /** Index of the section of section names (e_shstrndx). */
  names: number
}

/** The header and section table of an ELF file, each section checked to lie within the file. */
function readLayout (bytes: Buffer): { ok: true, layout: ElfLayout } | { ok: false, reason: string } {
  if (bytes.length < 52 || bytes.readUInt32BE(0) !== 0x7f454c46) return { ok: false, reason: 'not an ELF file (no \\x7fELF magic)' }
  const bits = bytes[4] === 1 ? 32 : bytes[4] === 2 ? 64 : undefined
  const little = bytes[5] === 1 ? true : bytes[5] === 2 ? false : undefined
  if (bits === undefined || little === undefined) return { ok: false, reason: `unsupported ELF class ${bytes[4]} or data encoding ${bytes[5]}` }
  if (bits === 64 && bytes.length < 64) return { ok: false, reason: 'ELF header truncated' }
  const u16 = (at: number): number => little ? bytes.readUInt16LE(at) : bytes.readUInt16BE(at)
  const u32 = (at: number): number => little ? bytes.readUInt32LE(at) : bytes.readUInt32BE(at)
  const addr = (at: number): number => bits === 32 ? u32(at) : Number(little ? bytes.readBigUInt64LE(at) : bytes.readBigUInt64BE(at))
  const shoff = addr(bits === 32 ? 32 : 40)
  const shentsize = u16(bits === 32 ? 46 : 58)
  const shnum = u16(bits === 32 ? 48 : 60)
  if (shoff + shnum * shentsize > bytes.length) return { ok: false, reason: 'section header table runs past the end of the file' }
  const sections: Section[] = []
  for (let i = 0; i < shnum; i++) {
    const header = shoff + i * shentsize
    const section = {
      name: u32(header),
      type: u32(header + 4),
      flags: addr(header + 8),
      address: addr(header + (bits === 32 ? 12 : 16)),
      offset: addr(header + (bits === 32 ? 16 : 24)),
      size: addr(header + (bits === 32 ? 20 : 32)),
      link: u32(header + (bits === 32 ? 24 : 40))
    }
    if ((section.type === SHT_NOTE || section.type === SHT_PROGBITS) && section.offset + section.size > bytes.length) {
      return { ok: false, reason: `section ${i} runs past the end of the file` }
    }
    sections.push(section)
  }
  return { ok: true, layout: { bits, machine: u16(18), u32, u16, addr, sections, names: u16(bits === 32 ? 50 : 62) } }
}

export function inspectElf (bytes: Buffer): ElfResult {
  const read = readLayout(bytes)
  if (!read.ok) return read
  const { bits, machine, u32, sections } = read.layout
  let buildId: string | undefined
  for (const section of sections) {
    if (section.type === SHT_NOTE) buildId ??= findBuildId(bytes, section.offset, section.offset + section.size, u32)
  }
  return { ok: true, info: { buildId, bits, machine, sha1: createHash('sha1').update(bytes).digest('hex') } }
}

/** The loaded sections of executable instructions (none when the file is not a readable ELF image). */
export function codeSections (bytes: Buffer): CodeSection[] {
  const read = readLayout(bytes)
  if (!read.ok) return []
  return read.layout.sections
    .filter(s => s.type === SHT_PROGBITS && (s.flags & (SHF_ALLOC | SHF_EXECINSTR)) === (SHF_ALLOC | SHF_EXECINSTR) && s.size > 0)
    .map(s => ({ address: s.address, bytes: bytes.subarray(s.offset, s.offset + s.size) }))
}

/** The contents of the section named `name` (undefined when the file is not a readable ELF image or has none). */
export function sectionNamed (bytes: Buffer, name: string): Buffer | undefined {
  const read = readLayout(bytes)
  if (!read.ok) return undefined
  const { sections, names } = read.layout
  const table = sections[names]
  if (table === undefined || table.type !== SHT_STRTAB || table.offset + table.size > bytes.length) return undefined
  const wanted = Buffer.from(`${name}\0`, 'latin1')
  const section = sections.find(s => s.type === SHT_PROGBITS && s.name + wanted.length <= table.size &&
    bytes.subarray(table.offset + s.name, table.offset + s.name + wanted.length).equals(wanted))
  return section === undefined ? undefined : bytes.subarray(section.offset, section.offset + section.size)
}

/** The data objects of the symbol table (`STT_OBJECT`, with a size), in address order; none when the file is not a readable ELF image or has no symbol table. */
export function objectSymbols (bytes: Buffer): ObjectSymbol[] {
  const read = readLayout(bytes)
  if (!read.ok) return []
  const { bits, sections, u32, u16, addr } = read.layout
  const table = sections.find(s => s.type === SHT_SYMTAB)
  const strings = table === undefined ? undefined : sections[table.link]
  if (table === undefined || strings === undefined || table.offset + table.size > bytes.length || strings.offset + strings.size > bytes.length) return []
  const entry = bits === 32 ? 16 : 24
  const found: ObjectSymbol[] = []
  for (let at = table.offset; at + entry <= table.offset + table.size; at += entry) {
    const info = bytes[at + (bits === 32 ? 12 : 4)]
    const address = addr(at + (bits === 32 ? 4 : 8))
    const size = addr(at + (bits === 32 ? 8 : 16))
    // Index 0 is undefined; an object with no section (SHN_UNDEF) is only declared here.
    if ((info & 0xf) !== STT_OBJECT || size === 0 || u16(at + (bits === 32 ? 14 : 6)) === 0) continue
    const name = u32(at)
    if (name >= strings.size) continue
    const start = strings.offset + name
    const end = bytes.indexOf(0, start)
    found.push({ name: bytes.toString('latin1', start, end === -1 || end > strings.offset + strings.size ? strings.offset + strings.size : end), address, size })
  }
  return found.sort((a, b) => a.address - b.address || a.name.localeCompare(b.name))
}

/** The GNU build id among the notes in [start, end) of the file. */
function findBuildId (bytes: Buffer, start: number, end: number, u32: (at: number) => number): string | undefined {
  let at = start
  while (at + 12 <= end) {
    const nameSize = u32(at)
    const descSize = u32(at + 4)
    const type = u32(at + 8)
    const nameStart = at + 12
    const descStart = nameStart + align4(nameSize)
    if (descStart + descSize > end) return undefined
    if (type === NT_GNU_BUILD_ID && bytes.toString('latin1', nameStart, nameStart + nameSize).replace(/\0+$/, '') === 'GNU') {
      return bytes.subarray(descStart, descStart + descSize).toString('hex')
    }
    at = descStart + align4(descSize)
  }
  return undefined
}

const align4 = (n: number): number => (n + 3) & ~3
