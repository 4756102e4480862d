// Golden vectors of the chunk format (test/vectors/), made with the device-side encoder: every chunk type
// in each encoding, plus fragmented chunks, as version 2 frames (first transmissions). Run: node --import tsx scripts/make-vectors.ts
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { codecs } from '../wasm/index.js'
import { encodeChunk, type ChunkSpec } from '../plugins/ingest/wire/encoder.js'
import { encodePayload, typeCode, type ChunkPayload } from '../plugins/ingest/wire/payloads.js'
import { DEVICE, SAMPLES } from '../test/plugins/ingest/samples.js'

export const VECTOR_DIR = fileURLToPath(new URL('../test/vectors/', import.meta.url))
/** The key of every encrypted vector: bytes 00 01 02 … 0f. */
export const VECTOR_KEY = '000102030405060708090a0b0c0d0e0f'
/** Sequence of the first vector; the others follow (its bytes on the wire: 00 0c 0b 0a). */
const FIRST_SEQUENCE = 0x0a0b0c00

type Encoding = Pick<ChunkSpec, 'cbor' | 'compress' | 'mtu'> & { encrypt?: boolean }

const ENCODINGS: Record<string, Encoding> = {
  avro: {},
  cbor: { cbor: true },
  'avro-rle': { compress: true },
  'avro-ccm': { encrypt: true },
  'avro-rle-ccm': { compress: true, encrypt: true }
}

const sample = (type: ChunkPayload['type']): ChunkPayload => SAMPLES.find(s => s.type === type) as ChunkPayload

/** `FaultRecord` → `fault-record`. */
const kebab = (type: string): string => type.replace(/(?<!^)[A-Z]/g, c => `-${c}`).toLowerCase()

export interface Vector {
  name: string
  spec: ChunkSpec
}

/** Every vector, in a fixed order with consecutive sequence numbers. */
export function vectors (): Vector[] {
  const list = [
    ...SAMPLES.flatMap(payload => Object.entries(ENCODINGS).map(([suffix, encoding]) => ({ name: `${kebab(payload.type)}-${suffix}`, payload, encoding }))),
    { name: 'trace-avro-mtu16', payload: sample('Trace'), encoding: { mtu: 16 } },
    { name: 'metrics-avro-rle-ccm-mtu16', payload: sample('Metrics'), encoding: { compress: true, encrypt: true, mtu: 16 } }
  ]
  return list.map(({ name, payload, encoding: { encrypt, ...options } }, i) => ({
    name,
    spec: { device: DEVICE, sequence: FIRST_SEQUENCE + i, payload, version: 2, ...options, ...(encrypt === true ? { key: Buffer.from(VECTOR_KEY, 'hex') } : {}) }
  }))
}

/** The frames of a chunk, one Uint8Array each. */
export function chunkFrames (spec: ChunkSpec): Uint8Array[] {
  const index = codecs.parseFrames(encodeChunk(spec))
  return [...index].map(record => index.body.subarray(record.start, record.end))
}

/** JSON with byte arrays (Avro `bytes`) as lowercase hex, as in the .json files. */
export function vectorJson (value: unknown): string {
  return `${JSON.stringify(value, function (this: Record<string, unknown>, key, plain: unknown) {
    const raw = this[key]
    return raw instanceof Uint8Array ? Buffer.from(raw).toString('hex') : plain
  }, 2)}\n`
}

function files ({ name, spec }: Vector): Array<[string, string]> {
  const frames = chunkFrames(spec)
  const header = frames[0]
  const expected = {
    name,
    version: header[2],
    device: spec.device,
    sequence: spec.sequence,
    type: spec.payload.type,
    type_code: typeCode(spec.payload.type),
    flags: header[4],
    ...(spec.key !== undefined ? { key: Buffer.from(spec.key).toString('hex') } : {}),
    ...(spec.mtu !== undefined ? { mtu: spec.mtu } : {}),
    frames: frames.length,
    serialized: encodePayload(spec.payload.type, spec.payload.record, spec.cbor === true),
    record: spec.payload.record
  }
  return [
    [`${name}.hex`, frames.map(frame => `${Buffer.from(frame).toString('hex')}\n`).join('')],
    [`${name}.json`, vectorJson(expected)]
  ]
}

/** File name → content of every vector file (README.md excluded). Deterministic. */
export function makeVectors (): Map<string, string> {
  return new Map(vectors().flatMap(files))
}

export function writeVectors (dir = VECTOR_DIR): number {
  mkdirSync(dir, { recursive: true })
  const made = makeVectors()
  for (const [name, content] of made) writeFileSync(join(dir, name), content)
  return made.size
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(`wrote ${writeVectors()} files to ${VECTOR_DIR}`)
}
