// Chunk payloads: the six record types, their Avro schemas (config/schemas/*.avsc), and decoding from
// Avro binary (the default) or CBOR (the alternative serialization) into the same plain records. A
// field added to a schema later goes at its end with a default: records of older firmware, which end
// before it, are read with the default in its place.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { PACKAGE_ROOT } from '../../../kernel/index.js'
import avro from 'avsc'
import { decode as decodeCbor, encode as encodeCbor } from 'cbor-x'

export const CHUNK_TYPES = ['DeviceInfo', 'RebootReason', 'FaultRecord', 'Metrics', 'Trace', 'Heartbeat'] as const
export type ChunkTypeName = typeof CHUNK_TYPES[number]

export interface DeviceInfo { serial: string, hardware_version: string, software_type: string, software_version: string, build_id: string }
export interface RebootReason { reason: string, boot_count: number, pc: number, lr: number }
/** A RAM region of a coredump: its address on the device and the bytes captured there. */
export interface CoredumpRegion { address: number, data: Uint8Array }
export interface FaultRecord {
  pc: number, lr: number, sp: number, psr: number, cfsr: number, hfsr: number, mmfar: number, bfar: number, uptime_ms: number
  /** The stack snapshot: 32-bit little-endian words from sp upwards (empty when none was sent; decoding always sets it). */
  stack?: Uint8Array
  /** The coredump's regions (empty when none was sent; decoding always sets it). */
  coredump?: CoredumpRegion[]
  /** Bytes of the coredump's regions the device cut for lack of room (0 when none; decoding always sets it). */
  coredump_truncated?: number
}
export interface MetricEntry { key: string, kind: 'gauge' | 'increment' | 'observe', value: number, uptime_ms: number }
export interface Metrics { uptime_ms: number, entries: MetricEntry[] }
export interface Trace { uptime_ms: number, dropped: number, data: Uint8Array }
export interface Heartbeat { uptime_ms: number, boot_count: number }

export interface ChunkRecords {
  DeviceInfo: DeviceInfo
  RebootReason: RebootReason
  FaultRecord: FaultRecord
  Metrics: Metrics
  Trace: Trace
  Heartbeat: Heartbeat
}

/** A decoded chunk payload, tagged with its type. */
export type ChunkPayload = { [K in ChunkTypeName]: { type: K, record: ChunkRecords[K] } }[ChunkTypeName]

const SCHEMA_FILES: Record<ChunkTypeName, string> = {
  DeviceInfo: 'device-info.avsc',
  RebootReason: 'reboot-reason.avsc',
  FaultRecord: 'fault-record.avsc',
  Metrics: 'metrics.avsc',
  Trace: 'trace.avsc',
  Heartbeat: 'heartbeat.avsc'
}

interface RecordSchema { type: 'record', name: string, fields: Array<{ name: string, default?: unknown }> }

const schemas = Object.fromEntries(CHUNK_TYPES.map(name => {
  return [name, JSON.parse(readFileSync(join(PACKAGE_ROOT, 'config', 'schemas', SCHEMA_FILES[name]), 'utf8')) as RecordSchema]
})) as Record<ChunkTypeName, RecordSchema>

const schemaTypes = Object.fromEntries(CHUNK_TYPES.map(name => [name, avro.Type.forSchema(schemas[name] as avro.Schema)])) as Record<ChunkTypeName, avro.Type>

/** Field names of each type that have defaults (added after the first version of the schema). */
const defaulted = Object.fromEntries(CHUNK_TYPES.map(name => [name, schemas[name].fields.filter(field => 'default' in field).map(field => field.name)])) as Record<ChunkTypeName, string[]>

/** The schema of `type` as older firmware wrote it: its first `count` fields. */
const prefixType = (type: ChunkTypeName, count: number): avro.Type =>
  avro.Type.forSchema({ ...schemas[type], fields: schemas[type].fields.slice(0, count) } as avro.Schema)

/**
 * For a schema ending in defaulted fields: the older schemas, each without one more of them (longest
 * first), and how to read a record written with each (by firmware before those fields, or built
 * without what they carry).
 */
const olderSchemas = Object.fromEntries(CHUNK_TYPES.map(name => {
  const fields = schemas[name].fields
  const older: Array<{ type: avro.Type, resolver: avro.Resolver }> = []
  for (let count = fields.length - 1; count >= 0 && 'default' in fields[count]; count--) {
    const type = prefixType(name, count)
    older.push({ type, resolver: schemaTypes[name].createResolver(type) })
  }
  return [name, older]
})) as Record<ChunkTypeName, Array<{ type: avro.Type, resolver: avro.Resolver }>>

/** An Avro payload of `type`, read as the current schema or, failing that, as written by older firmware. */
function fromAvro (type: ChunkTypeName, buffer: Buffer): unknown {
  const schema = schemaTypes[type]
  try {
    return schema.fromBuffer(buffer)
  } catch (err) {
    for (const { resolver } of olderSchemas[type]) {
      try {
        return schema.fromBuffer(buffer, resolver)
      } catch {
        // Not written with this older schema either: try the next shorter one.
      }
    }
    throw err
  }
}

/** How many of the fields of `type` a record carries: all but the defaulted ones at the end it leaves out. */
function fieldsCarried (type: ChunkTypeName, record: unknown): number {
  const fields = schemas[type].fields
  const given = (typeof record === 'object' && record !== null ? record : {}) as Record<string, unknown>
  let count = fields.length
  while (count > 0 && 'default' in fields[count - 1] && given[fields[count - 1].name] === undefined) count--
  return count
}

/** A record with its missing defaulted fields filled in, as decoding fills them. */
export function withDefaults (type: ChunkTypeName, record: unknown): unknown {
  if (typeof record !== 'object' || record === null || defaulted[type].length === 0) return record
  const filled = { ...record } as Record<string, unknown>
  for (const name of defaulted[type]) {
    if (filled[name] === undefined) filled[name] = (schemaTypes[type] as avro.types.RecordType).field(name)?.defaultValue()
  }
  return filled
}

/** The frame type byte (1..6) of a chunk type, and back. */
export function typeCode (name: ChunkTypeName): number {
  return CHUNK_TYPES.indexOf(name) + 1
}

export function typeName (code: number): ChunkTypeName {
  return CHUNK_TYPES[code - 1]
}

export type DecodeResult = { ok: true, payload: ChunkPayload } | { ok: false, reason: string }

/** Decode a payload of `type`; Avro must be consumed exactly, CBOR must fit the same schema. */
export function decodePayload (type: ChunkTypeName, bytes: Uint8Array, cbor: boolean): DecodeResult {
  const schema = schemaTypes[type]
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  let record: unknown
  try {
    record = cbor ? withDefaults(type, decodeCbor(buffer)) : fromAvro(type, buffer)
  } catch (err) {
    return { ok: false, reason: `${type} payload is not valid ${cbor ? 'CBOR' : 'Avro'}: ${(err as Error).message}` }
  }
  if (cbor) {
    const problems: string[] = []
    const valid = schema.isValid(record, { errorHook: (path: string[], value: unknown) => { problems.push(`${path.join('.') || '(root)'} = ${JSON.stringify(value)}`) } })
    if (!valid) return { ok: false, reason: `${type} CBOR payload does not match the schema at ${problems[0] ?? '(root)'}` }
    // The same record Avro decoding gives: map keys outside the schema are dropped, so they never reach
    // the stored device or series records (where they could overwrite id, sequence or received_at).
    record = schema.clone(record)
  }
  return { ok: true, payload: { type, record } as ChunkPayload }
}

/**
 * Encode a record as the device would (Avro binary, or CBOR with the same field names). Defaulted
 * fields at the end that the record leaves out are left out, as firmware without them writes it.
 */
export function encodePayload (type: ChunkTypeName, record: unknown, cbor: boolean): Uint8Array {
  const schema = schemaTypes[type]
  const complete = withDefaults(type, record) as Record<string, unknown>
  if (!schema.isValid(complete)) throw new TypeError(`record does not match the ${type} schema`)
  const carried = fieldsCarried(type, record)
  const fields = schemas[type].fields
  const written = carried === fields.length ? complete : Object.fromEntries(fields.slice(0, carried).map(field => [field.name, complete[field.name]]))
  if (cbor) return encodeCbor(written)
  return carried === fields.length ? schema.toBuffer(written) : olderSchemas[type][fields.length - 1 - carried].type.toBuffer(written)
}
