// Chunk payloads: the six record types, their Avro schemas (config/schemas/*.avsc), and decoding from
// Avro binary (the default) or CBOR (the alternative serialization) into the same plain records.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { PACKAGE_ROOT } from '../../../kernel/index.js'
import avro from 'avsc'
import { decode as decodeCbor, encode as encodeCbor } from 'cbor-x'

export const CHUNK_TYPES = ['DeviceInfo', 'RebootReason', 'FaultRecord', 'Metrics', 'Trace', 'Heartbeat'] as const
export type ChunkTypeName = typeof CHUNK_TYPES[number]

export interface DeviceInfo { serial: string, hardware_version: string, software_type: string, software_version: string, build_id: string }
export interface RebootReason { reason: string, boot_count: number, pc: number, lr: number }
export interface FaultRecord { pc: number, lr: number, sp: number, psr: number, cfsr: number, hfsr: number, mmfar: number, bfar: number, uptime_ms: number }
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

const schemaTypes = Object.fromEntries(CHUNK_TYPES.map(name => {
  const schema = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'config', 'schemas', SCHEMA_FILES[name]), 'utf8')) as avro.Schema
  return [name, avro.Type.forSchema(schema)]
})) as Record<ChunkTypeName, avro.Type>

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
    record = cbor ? decodeCbor(buffer) : schema.fromBuffer(buffer)
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

/** Encode a record as the device would (Avro binary, or CBOR with the same field names). */
export function encodePayload (type: ChunkTypeName, record: unknown, cbor: boolean): Uint8Array {
  const schema = schemaTypes[type]
  if (!schema.isValid(record)) throw new TypeError(`record does not match the ${type} schema`)
  return cbor ? encodeCbor(record) : schema.toBuffer(record)
}
