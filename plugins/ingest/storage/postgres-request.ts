// A request's reads and writes on PostgreSQL as the jsonb documents of the functions read_request and
// write_request (migrations/004-request-functions.ts): the reads inline in a simple query, so that
// `begin` and the reads go in one round trip; the writes as the parameter of a prepared statement
// (measured: PostgreSQL reads a parameter's JSON in about half the time of the same text in a literal).
import { seenKey } from '../store.js'
import { DIGEST_BYTES, isCopy, type StoredMark } from '../chunk-marks.js'
import type { Device, IngestReads, IngestWrites } from './contract.js'

type Json = Record<string, unknown>

/**
 * `value` as JSON for jsonb. PostgreSQL's text holds no NUL character (neither does jsonb): a NUL in a
 * string (a trace's text, a metric's key) is stored as U+FFFD.
 */
export function jsonText (value: unknown): string {
  const json = JSON.stringify(value)
  return json.includes('\\u0000') ? JSON.stringify(value, (_key, field: unknown) => typeof field === 'string' ? field.replaceAll('\0', '\uFFFD') : field) : json
}

/** `value` as a jsonb literal of a simple query (the connection has standard_conforming_strings on: a quote is the only character to double). */
export function jsonLiteral (value: unknown): string {
  return `'${jsonText(value).replaceAll("'", "''")}'::jsonb`
}

/** The document of read_request: the turns to take (sorted ids) and what to read under them. */
export function readRequest (lock: readonly string[], devices: readonly string[], pairs: ReadonlyArray<readonly [string, number]>, keys: readonly string[]): Json {
  return { lock, devices, keys, pairs: pairs.map(([d, s]) => ({ d, s })) }
}

/** read_request's answer as the contract's reads: a mark's digests newest first, as chunk-marks keeps them. */
export function parseReads (answer: { devices: Device[], keys: Array<[string, string]>, marks: Array<[string, number, string, number]> }): IngestReads {
  const reads: IngestReads = { devices: new Map(), keys: new Map(), marks: new Map() }
  for (const device of answer.devices) reads.devices.set(device.id, device)
  for (const [device, key] of answer.keys) reads.keys.set(device, Buffer.from(key, 'hex'))
  const digests = new Map<string, string>()
  for (const [device, sequence, digest, at] of answer.marks) {
    const seen = seenKey(device, sequence)
    if (!reads.marks.has(seen)) reads.marks.set(seen, { at, digests: new Uint8Array(0) })
    digests.set(seen, (digests.get(seen) ?? '') + digest)
  }
  for (const [seen, hex] of digests) (reads.marks.get(seen) as { digests: Uint8Array }).digests = new Uint8Array(Buffer.from(hex, 'hex'))
  return reads
}

/** A metric's value in JSON: a string where JSON has no number (NaN, ±Infinity, -0), which float8 reads back. */
function jsonNumber (value: number): number | string {
  return Number.isFinite(value) && !Object.is(value, -0) ? value : String(Object.is(value, -0) ? '-0' : value)
}

/**
 * The document of write_request. A mark's digest new to its (device, sequence) goes in `marks` (inserted:
 * should another node have stored the same content meanwhile, the primary key refuses it and the whole
 * transaction fails, answered 503, and the retry finds a duplicate); a digest stored before (a first
 * transmission reusing the sequence, see chunk-marks.ts) in `moved`; a sequence whose digests are full
 * keeps its newest ones (`trims`).
 */
export function writeRequest (writes: IngestWrites, read: ReadonlyMap<string, StoredMark>): Json {
  const request: Json = {}
  const put = (name: string, rows: readonly unknown[]): void => { if (rows.length > 0) request[name] = rows }
  put('reboots', writes.reboots)
  put('faults', writes.faults)
  put('traces', writes.traces)
  put('heartbeats', writes.heartbeats)
  put('metrics', writes.metrics.map(({ metric, index }) => ({ ...metric, value: jsonNumber(metric.value), entry: index })))
  const moved: Json[] = []
  const trims: Json[] = []
  const fresh = new Map<string, Json>()
  for (const { device, sequence, mark, digest } of writes.marks) {
    const before = read.get(seenKey(device, sequence))
    const hex = Buffer.from(digest).toString('hex')
    if (before !== undefined && isCopy(before, digest, false)) {
      moved.push({ device, sequence, digest: hex, at: mark.at })
    } else {
      // Marks of one request are distinct (device, sequence, digest): a request stores a content once.
      fresh.set(`${device}:${sequence}:${hex}`, { device, sequence, digest: hex, at: mark.at })
    }
    if (before !== undefined && typeof before !== 'number' && before.digests.length >= mark.digests.length) {
      const kept: string[] = []
      for (let at = 0; at < mark.digests.length; at += DIGEST_BYTES) kept.push(Buffer.from(mark.digests.subarray(at, at + DIGEST_BYTES)).toString('hex'))
      trims.push({ device, sequence, kept })
    }
  }
  put('moved', moved)
  put('trims', trims)
  put('marks', [...fresh.values()])
  put('devices', writes.devices)
  return request
}
