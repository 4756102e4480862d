// Coredumps of chosen memory (firmware/README.md, BERTH_COREDUMP): what a fault keeps of the regions its
// FaultRecord carried (bounded: past COREDUMP_MAX_BYTES or COREDUMP_MAX_REGIONS the rest is dropped and
// counted, never silently), the summary the fault lists show, and the coredump route's view: the
// regions, and the named globals of the build's ELF that lie inside them, with their values.
import type { ObjectSymbol } from './elf.js'
import type { FaultRecord } from './wire/payloads.js'

/** Bytes of regions kept with one fault. */
export const COREDUMP_MAX_BYTES = 16 * 1024
/** Regions kept with one fault. */
export const COREDUMP_MAX_REGIONS = 64

/** A coredump as stored with its fault. */
export interface StoredCoredump {
  /** The regions kept, in the device's order (the stack first): address and bytes as hex. */
  regions: Array<{ address: number, data: string }>
  /** Bytes the device cut: its regions did not fit its coredump buffer (BERTH_COREDUMP_BYTES). */
  truncated: number
  /** Bytes the server did not keep: past COREDUMP_MAX_BYTES, or in regions past COREDUMP_MAX_REGIONS. */
  dropped: number
}

/** What a fault list says of a fault's coredump. */
export interface CoredumpSummary {
  regions: number
  bytes: number
  truncated: number
  dropped: number
}

/** A named global found in a coredump. */
export interface CoredumpGlobal {
  name: string
  address: number
  size: number
  /** Its bytes, hex, as captured. */
  bytes: string
  /** Objects of 1, 2, 4 or 8 bytes: the bytes as a little-endian unsigned integer (a decimal string when beyond 2^53). */
  value?: number | string
}

export interface CoredumpView {
  regions: Array<{ address: number, length: number, bytes: string }>
  truncated: number
  dropped: number
  globals: CoredumpGlobal[]
  /** Why no globals could be named (no build id, no ELF, no symbol table); absent when the ELF was read. */
  globals_unavailable?: string
}

/** The coredump to store with a fault: its regions bounded; undefined when the record carried none. */
export function keptCoredump (record: Pick<FaultRecord, 'coredump' | 'coredump_truncated'>): StoredCoredump | undefined {
  const regions = record.coredump ?? []
  const truncated = record.coredump_truncated ?? 0
  if (regions.length === 0 && truncated === 0) return undefined
  const kept: StoredCoredump['regions'] = []
  let room = COREDUMP_MAX_BYTES
  let dropped = 0
  for (const region of regions) {
    const take = kept.length < COREDUMP_MAX_REGIONS ? Math.min(region.data.length, room) : 0
    dropped += region.data.length - take
    if (take === 0) continue
    kept.push({ address: region.address, data: Buffer.from(region.data.buffer, region.data.byteOffset, take).toString('hex') })
    room -= take
  }
  return { regions: kept, truncated, dropped }
}

function coredumpSummary (coredump: StoredCoredump): CoredumpSummary {
  return { regions: coredump.regions.length, bytes: coredump.regions.reduce((sum, r) => sum + r.data.length / 2, 0), truncated: coredump.truncated, dropped: coredump.dropped }
}

/** A fault as lists show it: its coredump, when it has one, summed up (the coredump route gives it whole). */
export function withCoredumpSummary<F extends { coredump?: StoredCoredump | null }> ({ coredump, ...fault }: F): Omit<F, 'coredump'> & { coredump?: CoredumpSummary } {
  return coredump === undefined || coredump === null ? fault : { ...fault, coredump: coredumpSummary(coredump) }
}

/** `bytes` as a little-endian unsigned integer: a number when it is safe, else a decimal string. */
function littleEndian (bytes: Buffer): number | string {
  const value = bytes.reduceRight((sum, byte) => (sum << 8n) | BigInt(byte), 0n)
  return value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value.toString()
}

/** The coredump's regions and the globals of `symbols` wholly inside one of them (`symbols` a reason when there are none to read). */
export function coredumpView (coredump: StoredCoredump, symbols: readonly ObjectSymbol[] | string): CoredumpView {
  const regions = coredump.regions.map(r => ({ address: r.address, bytes: Buffer.from(r.data, 'hex') }))
  const globals: CoredumpGlobal[] = []
  for (const symbol of typeof symbols === 'string' ? [] : symbols) {
    const region = regions.find(r => symbol.address >= r.address && symbol.address + symbol.size <= r.address + r.bytes.length)
    if (region === undefined) continue
    const bytes = region.bytes.subarray(symbol.address - region.address, symbol.address - region.address + symbol.size)
    globals.push({ name: symbol.name, address: symbol.address, size: symbol.size, bytes: bytes.toString('hex'), ...([1, 2, 4, 8].includes(symbol.size) ? { value: littleEndian(bytes) } : {}) })
  }
  return {
    regions: regions.map(r => ({ address: r.address, length: r.bytes.length, bytes: r.bytes.toString('hex') })),
    truncated: coredump.truncated,
    dropped: coredump.dropped,
    globals,
    ...(typeof symbols === 'string' ? { globals_unavailable: symbols } : {})
  }
}
