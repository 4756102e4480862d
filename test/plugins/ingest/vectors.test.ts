// The golden vectors in test/vectors/ (scripts/make-vectors.ts): regenerating them is byte-identical, their
// layers follow docs/chunk-format.md, and the server's decoder and the HTTP API give each vector's record.
import t from 'tap'
import { createDecipheriv } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { codecs, FrameFlag } from '../../../wasm/index.js'
import { decodeChunk } from '../../../plugins/ingest/wire/decoder.js'
import { encodeChunk } from '../../../plugins/ingest/wire/encoder.js'
import { asRetransmission } from '../../../plugins/ingest/wire/retransmission.js'
import { decodePayload, withDefaults, type ChunkTypeName, type FaultRecord } from '../../../plugins/ingest/wire/payloads.js'
import { encode as encodeCbor } from 'cbor-x'
import { makeVectors, vectorJson, VECTOR_DIR, VECTOR_KEY } from '../../../scripts/make-vectors.js'
import { telemetryServer, type TelemetryServer } from './harness.js'
import { SAMPLES } from './samples.js'

interface VectorFile {
  name: string
  version: number
  device: string
  sequence: number
  type: ChunkTypeName
  type_code: number
  flags: number
  key?: string
  mtu?: number
  frames: number
  serialized: string
  record: Record<string, unknown>
}

interface Vector {
  json: VectorFile
  frames: Buffer[]
}

const vectors: Vector[] = readdirSync(VECTOR_DIR).filter(f => f.endsWith('.json')).map(file => {
  const json = JSON.parse(readFileSync(join(VECTOR_DIR, file), 'utf8')) as VectorFile
  const hex = readFileSync(join(VECTOR_DIR, `${json.name}.hex`), 'utf8')
  return { json, frames: hex.trimEnd().split('\n').map(line => Buffer.from(line, 'hex')) }
}).sort((a, b) => a.json.sequence - b.json.sequence)

/** The chunk's bytes as sent: the frame payloads in fragment order. */
const wireBytes = (v: Vector): Buffer => Buffer.concat(v.frames.map(frame => frame.subarray(22, frame.length - 4)))
const flagged = (v: Vector, flag: number): boolean => (v.json.flags & flag) !== 0

t.test('regenerating the vectors gives the files byte for byte', async t => {
  const made = makeVectors()
  const onDisk = readdirSync(VECTOR_DIR).filter(f => f !== 'README.md').sort()
  t.same(onDisk, [...made.keys()].sort(), 'the same files')
  t.same([...made].filter(([name, content]) => readFileSync(join(VECTOR_DIR, name), 'utf8') !== content).map(([name]) => name), [], 'no file differs')
  t.equal(vectors.length, 32, 'six types in five encodings, and two fragmented chunks')
})

t.test('every line of a .hex file is one valid frame carrying the header fields of its .json', async t => {
  for (const v of vectors) {
    const { json } = v
    const headers = v.frames.map(frame => {
      const index = codecs.parseFrames(frame)
      const [record] = index
      return { records: index.count, status: record.status, end: record.end, device: record.deviceId, sequence: record.sequence, type: record.type, flags: record.flags, fragment: [record.fragmentIndex, record.fragmentCount] }
    })
    const fragmented = json.frames > 1
    t.same(headers, v.frames.map((frame, i) => ({
      records: 1, status: 'ok', end: frame.length, device: json.device, sequence: json.sequence, type: json.type_code, flags: json.flags,
      fragment: fragmented ? [i, json.frames] : [0, 0]
    })), json.name)
    if (fragmented) t.ok(v.frames.every(frame => frame.length - 26 <= (json.mtu ?? 0)), `${json.name}: no payload above the MTU`)
  }
})

t.test('the documented layers: payload = AES-CCM(RLE(serialized)), opened here with OpenSSL and the nonce and AAD of the docs', async t => {
  for (const v of vectors) {
    const { json } = v
    let bytes = wireBytes(v)
    if (flagged(v, FrameFlag.Encrypted)) {
      const device = Buffer.from(json.device, 'hex')
      const sequence = Buffer.alloc(4)
      sequence.writeUInt32LE(json.sequence)
      const length = Buffer.alloc(2)
      length.writeUInt16LE(bytes.length)
      const nonce = Buffer.concat([device, sequence, Buffer.of(0)])
      const aad = Buffer.concat([Buffer.of(0x42, 0x54, json.version, json.type_code, json.flags, 0, 0, 0), device, sequence, length])
      const decipher = createDecipheriv('aes-128-ccm', Buffer.from(json.key ?? '', 'hex'), nonce, { authTagLength: 8 })
      decipher.setAuthTag(bytes.subarray(bytes.length - 8))
      decipher.setAAD(aad, { plaintextLength: bytes.length - 8 })
      bytes = Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - 8)), decipher.final()])
    }
    if (flagged(v, FrameFlag.Compressed)) {
      const expanded = codecs.rleDecode(bytes, 65535)
      bytes = Buffer.from(expanded.ok ? expanded.value : [])
    }
    t.equal(bytes.toString('hex'), json.serialized, json.name)
  }
  t.equal(vectors.filter(v => v.json.key === VECTOR_KEY).length, 13, 'every encrypted vector uses the fixed key')
})

t.test('the server decoding path (decodeChunk) gives each vector its record', async t => {
  for (const v of vectors) {
    const { json } = v
    const identity = { version: json.version, type: json.type_code, flags: json.flags, device: Buffer.from(json.device, 'hex'), sequence: json.sequence }
    const decoded = decodeChunk(identity, wireBytes(v), json.key === undefined ? undefined : Buffer.from(json.key, 'hex'))
    // The vector's record with the defaults of the fields it leaves out (the FaultRecord's coredump), as decoding fills them.
    const expected = JSON.parse(vectorJson(withDefaults(json.type, json.record))) as unknown
    t.same(decoded.ok ? { type: decoded.payload.type, record: JSON.parse(vectorJson(decoded.payload.record)) as unknown } : decoded, { type: json.type, record: expected }, json.name)
  }
})

const pick = (from: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> => Object.fromEntries(keys.map(k => [k, from[k]]))

/** What the API shows of one vector's chunk, next to what its .json says it should show. */
async function apiView (server: TelemetryServer, json: VectorFile): Promise<{ shown: unknown, expected: unknown }> {
  const get = async <T>(path: string): Promise<T> => await (await server.api('GET', `/devices/${json.device}${path}`, 'viewer')).json() as T
  const items = async (series: string): Promise<Array<Record<string, unknown>>> =>
    (await get<{ items: Array<Record<string, unknown>> }>(`/${series}?limit=1000`)).items.filter(item => item.sequence === json.sequence)
  const { record } = json
  switch (json.type) {
    case 'DeviceInfo':
      return { shown: pick(await get(''), Object.keys(record)), expected: record }
    case 'Heartbeat':
      return { shown: (await get<{ boot_count: number }>('')).boot_count, expected: record.boot_count }
    case 'RebootReason':
      return { shown: (await items('reboots')).map(item => pick(item, Object.keys(record))), expected: [record] }
    case 'FaultRecord':
      return { shown: (await items('faults')).map(item => pick(item, Object.keys(record))), expected: [record] }
    case 'Metrics':
      return { shown: (await items('metrics')).map(item => pick(item, ['key', 'kind', 'value', 'uptime_ms'])), expected: record.entries }
    case 'Trace':
      return {
        shown: (await items('traces')).map(item => pick(item, ['uptime_ms', 'dropped', 'text'])),
        expected: [{ uptime_ms: record.uptime_ms, dropped: record.dropped, text: Buffer.from(record.data as string, 'hex').toString('utf8') }]
      }
  }
}

t.test('posted over HTTP, each vector is accepted and the API shows its record', async t => {
  const server = await telemetryServer(t)
  const device = vectors[0].json.device
  // One device sends both plaintext and sealed vectors: registered without `encrypted` (which would
  // refuse plaintext), it is given the vectors' fixed key directly instead of an issued one.
  const registered = await server.api('POST', '/devices/register', 'provisioner', { id: device })
  t.equal(registered.status, 201)
  await server.service.telemetry.storage.changeDevice(device, current => current === undefined ? undefined : { device: current, key: Buffer.from(VECTOR_KEY, 'hex') })
  for (const v of vectors) {
    const { status, json } = await server.ingest(Buffer.concat(v.frames))
    t.same([status, json.frames.map(f => f.status)], [200, [...Array(v.frames.length - 1).fill('partial'), 'accepted']], v.json.name)
    const { shown, expected } = await apiView(server, v.json)
    t.same(shown, expected, `${v.json.name}: what the API shows`)
  }
  const again = await server.ingest(Buffer.concat(vectors.flatMap(v => v.frames.map(asRetransmission))))
  t.same(again.json.duplicate, vectors.length, 'each vector retransmitted is a duplicate')
  const firstAgain = await server.ingest(Buffer.concat(vectors[0].frames))
  t.match(firstAgain.json.frames, [{ status: 'accepted', sequence_reused: true }], 'sent again as a first transmission, it is a new boot\'s chunk')
})

t.test('CBOR map keys outside the schema are dropped, never stored over the server’s own fields', async t => {
  const server = await telemetryServer(t)
  const device = '0123456789abcdef'
  const [info, , fault] = SAMPLES
  const extra = { id: 'ffffffffffffffff', registered: true, sequence: 999, received_at: 0, symbol: 'forged' }
  const body = Buffer.concat([
    encodeChunk({ device, sequence: 1, cbor: true, payload: { type: 'DeviceInfo', record: { ...info.record, ...extra } as never } }),
    encodeChunk({ device, sequence: 2, cbor: true, payload: { type: 'FaultRecord', record: { ...fault.record, ...extra } as never } })
  ])
  t.equal((await server.ingest(body)).json.accepted, 2)
  t.equal((await server.api('GET', `/devices/${extra.id}`, 'viewer')).status, 404, 'no device under the forged id')
  t.match(await (await server.api('GET', `/devices/${device}`, 'viewer')).json(), { id: device, registered: false, serial: 'SN-0042' })
  const faults = await (await server.api('GET', `/devices/${device}/faults`, 'viewer')).json() as { items: Array<Record<string, unknown>> }
  t.same(faults.items.map(f => [f.sequence, typeof f.received_at === 'number' && f.received_at > 0, f.symbol, 'id' in f]), [[2, true, null, false]])
})

t.test('a FaultRecord of firmware before stack snapshots (nine fields) is read with an empty stack; a cut-off stack is refused', async t => {
  const { serialized, record } = JSON.parse(readFileSync(join(VECTOR_DIR, 'fault-record-avro.json'), 'utf8')) as { serialized: string, record: { stack: string } }
  const stackField = `20${record.stack}` // its length (16, zigzag 0x20), then its bytes
  t.ok(serialized.endsWith(stackField), 'the stack is the last field')
  const nineFields = Buffer.from(serialized.slice(0, -stackField.length), 'hex')
  const older = decodePayload('FaultRecord', nineFields, false)
  t.match(older, { ok: true, payload: { type: 'FaultRecord', record: { pc: 0x0800abcd, uptime_ms: 123456 } } })
  t.same(older.ok && older.payload.type === 'FaultRecord' && [...older.payload.record.stack ?? [0]], [], 'Avro: an empty stack')
  const { stack: _stack, ...registers } = SAMPLES[2].record as FaultRecord
  const cbor = decodePayload('FaultRecord', encodeCbor(registers), true)
  t.same(cbor.ok && cbor.payload.type === 'FaultRecord' && [...cbor.payload.record.stack ?? [0]], [], 'CBOR without the key: an empty stack')
  const withStack = decodePayload('FaultRecord', Buffer.from(serialized, 'hex'), false)
  t.equal(withStack.ok && withStack.payload.type === 'FaultRecord' && Buffer.from(withStack.payload.record.stack ?? []).toString('hex'), record.stack, 'the stack as sent')
  t.match(decodePayload('FaultRecord', Buffer.from(serialized.slice(0, -8), 'hex'), false), { ok: false, reason: /FaultRecord payload is not valid Avro: truncated/ }, 'a stack cut short is an error, not an empty stack')
})
