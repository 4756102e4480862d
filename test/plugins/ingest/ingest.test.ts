// POST /ingest/chunks end to end: every chunk type in every encoding, idempotency, per-frame errors,
// encryption with provisioned keys, fragments across requests, and the request-level refusals.
import t from 'tap'
import { encodeFrame } from '../../../wasm/index.js'
import { encodeChunk } from '../../../plugins/ingest/wire/encoder.js'
import { API_KEY, framesOf, telemetryServer } from './harness.js'
import { DEVICE, SAMPLES } from './samples.js'

const encodings = [
  { name: 'avro' },
  { name: 'cbor', cbor: true },
  { name: 'avro + rle', compress: true },
  { name: 'cbor + rle', cbor: true, compress: true }
]

t.test('every chunk type is accepted in every encoding and stored once', async t => {
  const server = await telemetryServer(t)
  let sequence = 0
  for (const encoding of encodings) {
    const body = Buffer.concat(SAMPLES.map(payload => encodeChunk({ device: DEVICE, sequence: sequence++, payload, ...encoding })))
    const { status, json } = await server.ingest(body)
    t.equal(status, 200, encoding.name)
    t.same([json.accepted, json.rejected, json.duplicate], [6, 0, 0], `${encoding.name}: ${JSON.stringify(json.frames.filter(f => f.status !== 'accepted'))}`)
    t.same(json.frames.map(f => f.type), ['DeviceInfo', 'RebootReason', 'FaultRecord', 'Metrics', 'Trace', 'Heartbeat'])
  }
  const device = await (await server.api('GET', `/devices/${DEVICE}`, 'viewer')).json()
  t.match(device, { id: DEVICE, serial: 'SN-0042', software_version: '1.4.2', build_id: 'a1b2c3d4e5f60718', boot_count: 17, offline: false, registered: false })
  const faults = await (await server.api('GET', `/devices/${DEVICE}/faults`, 'viewer')).json() as { items: Array<{ pc: number, software_version: string }> }
  t.equal(faults.items.length, 4)
  t.same(faults.items[0].pc, 0x0800abcd)
  t.equal(faults.items[0].software_version, '1.4.2')
  const metrics = await (await server.api('GET', `/devices/${DEVICE}/metrics?kind=gauge`, 'viewer')).json() as { items: Array<{ key: string, value: number }> }
  t.same(metrics.items.map(m => [m.key, m.value]), Array(4).fill(['battery_mv', 3712]))
  const traces = await (await server.api('GET', `/devices/${DEVICE}/traces`, 'viewer')).json() as { items: Array<{ text: string, dropped: number }> }
  t.equal(traces.items[0].text, 'boot ok\nsensor init\nradio up\n')
  const reboots = await (await server.api('GET', `/devices/${DEVICE}/reboots`, 'viewer')).json() as { items: Array<{ reason: string }> }
  t.equal(reboots.items[0].reason, 'watchdog')
})

t.test('a retransmitted chunk is acknowledged as a duplicate and stored once', async t => {
  const server = await telemetryServer(t)
  const chunk = encodeChunk({ device: DEVICE, sequence: 7, payload: SAMPLES[2] })
  t.equal((await server.ingest(chunk)).json.accepted, 1)
  const again = await server.ingest(Buffer.concat([chunk, chunk]))
  t.same(again.json.frames.map(f => f.status), ['duplicate', 'duplicate'])
  const faults = await (await server.api('GET', `/devices/${DEVICE}/faults`, 'viewer')).json() as { items: unknown[] }
  t.equal(faults.items.length, 1)
})

t.test('concurrent retries of the same chunks: each is accepted exactly once, the others are duplicates', async t => {
  const server = await telemetryServer(t)
  const body = Buffer.concat(Array.from({ length: 10 }, (_, i) => encodeChunk({ device: DEVICE, sequence: 100 + i, payload: SAMPLES[2] })))
  const answers = await Promise.all(Array.from({ length: 20 }, async () => (await server.ingest(body)).json))
  t.equal(answers.reduce((sum, a) => sum + a.accepted, 0), 10, 'ten chunks accepted in all')
  t.equal(answers.reduce((sum, a) => sum + a.duplicate, 0), 190, 'every other copy a duplicate')
  t.ok(answers.every(a => a.accepted === 0 || a.accepted === 10), 'a request is all or nothing')
  // The same chunks in two requests arriving together, one of which also carries a new chunk.
  const extra = Buffer.concat([body.subarray(0, body.length / 10), encodeChunk({ device: DEVICE, sequence: 200, payload: SAMPLES[2] })])
  const [a, b] = await Promise.all([server.ingest(extra), server.ingest(extra)])
  t.same([a.json.accepted + b.json.accepted, a.json.duplicate + b.json.duplicate], [1, 3])
  const faults = await (await server.api('GET', `/devices/${DEVICE}/faults?limit=100`, 'viewer')).json() as { items: unknown[] }
  t.equal(faults.items.length, 11, 'stored once each')
})

t.test('a bad frame gets a reason and does not affect the others', async t => {
  const server = await telemetryServer(t)
  const good = (sequence: number): Buffer => Buffer.from(encodeChunk({ device: DEVICE, sequence, payload: SAMPLES[5] }))
  const badCrc = good(2)
  badCrc[badCrc.length - 1] ^= 0xff
  const badAvro = encodeFrame({ type: 6, deviceId: DEVICE, sequence: 3, payload: Uint8Array.of(0x02) })
  const badCbor = encodeFrame({ type: 6, flags: 0x04, deviceId: DEVICE, sequence: 4, payload: Buffer.from([0xa1, 0x61, 0x78, 0x01]) })
  const badRle = encodeFrame({ type: 6, flags: 0x02, deviceId: DEVICE, sequence: 5, payload: Uint8Array.of(0x00) })
  const body = Buffer.concat([good(1), Buffer.from('garbage!'), badCrc, badAvro, badCbor, badRle, good(6), good(7).subarray(0, 25)])
  const { status, json } = await server.ingest(body)
  t.equal(status, 200)
  t.same(json.frames.map(f => f.status), ['accepted', 'rejected', 'rejected', 'rejected', 'rejected', 'rejected', 'accepted', 'rejected'])
  const reasons = json.frames.filter(f => f.status === 'rejected').map(f => f.reason)
  t.match(reasons, [/no frame magic/, /CRC mismatch/, /Heartbeat payload is not valid Avro/, /Heartbeat CBOR payload does not match the schema/, /^RLE: /, /declares a \d+-byte payload/])
  t.same([json.accepted, json.rejected], [2, 6])
})

t.test('the encoder refuses chunks the format cannot carry', async t => {
  const huge = { type: 'Trace' as const, record: { uptime_ms: 1, dropped: 0, data: Buffer.alloc(70_000, 7) } }
  t.throws(() => encodeChunk({ device: DEVICE, sequence: 1, payload: huge }), { name: 'RangeError', message: /at most 65535 bytes/ })
  const nearLimit = { type: 'Trace' as const, record: { uptime_ms: 1, dropped: 0, data: Buffer.alloc(65_525, 7) } }
  t.throws(() => encodeChunk({ device: DEVICE, sequence: 1, payload: nearLimit, key: Buffer.alloc(16) }), { message: /at most 65527 bytes of plaintext/ })
})

t.test('request-level refusals', async t => {
  const server = await telemetryServer(t, { max_body_bytes: 4096 })
  const chunk = encodeChunk({ device: DEVICE, sequence: 1, payload: SAMPLES[5] })
  t.equal((await server.ingest(chunk, null)).status, 401, 'no key')
  const wrong = await server.ingest(chunk, `${API_KEY}x`)
  t.same([wrong.status, wrong.json.error], [401, 'missing or invalid X-API-Key'])
  t.equal((await server.ingest(Buffer.alloc(0))).status, 400, 'empty body')
  const big = await server.ingest(Buffer.alloc(5000))
  t.same([big.status, big.json.error], [413, 'request body is too large'])
  const text = await fetch(new URL('/ingest/chunks', server.base), { method: 'POST', headers: { 'x-api-key': API_KEY, 'content-type': 'text/plain' }, body: 'x' })
  t.same([text.status, await text.json()], [415, { error: 'unsupported content type: text/plain; send one or more frames as application/octet-stream', code: 'BERTH_UNSUPPORTED_MEDIA_TYPE' }])
})

t.test('unknown devices: auto-registered by default, refused when that is off until registered', async t => {
  const server = await telemetryServer(t, { auto_register: false })
  const chunk = encodeChunk({ device: DEVICE, sequence: 1, payload: SAMPLES[5] })
  const refused = await server.ingest(chunk)
  t.same(refused.json.frames[0], { index: 0, offset: 0, status: 'rejected', device: DEVICE, sequence: 1, type: 'Heartbeat', reason: `unknown device ${DEVICE}: register it first`, retry: true })
  const fragment = Buffer.from(encodeChunk({ device: DEVICE, sequence: 2, payload: SAMPLES[4], mtu: 16 })).subarray(0, 42)
  t.equal((await server.ingest(fragment)).json.frames[0].reason, `unknown device ${DEVICE}: register it first`, 'fragments of unknown devices are not buffered')
  const registered = await server.api('POST', '/devices/register', 'provisioner', { id: DEVICE, name: 'lab unit' })
  t.equal(registered.status, 201)
  t.equal((await server.ingest(chunk)).json.accepted, 1)
})

t.test('encrypted chunks open with the key issued at registration; a wrong key or an altered chunk does not', async t => {
  const server = await telemetryServer(t)
  const response = await server.api('POST', '/devices/register', 'provisioner', { id: DEVICE, encrypted: true })
  const { key, device } = await response.json() as { key: string, device: { encrypted: boolean } }
  t.match(key, /^[0-9a-f]{32}$/)
  t.equal(device.encrypted, true)
  const listing = await (await server.api('GET', '/devices', 'admin')).text()
  t.notMatch(listing, key, 'the key is never listed')
  const sealed = (sequence: number, k: string, compress = false, mtu?: number): Uint8Array =>
    encodeChunk({ device: DEVICE, sequence, payload: SAMPLES[3], key: Buffer.from(k, 'hex'), compress, mtu })
  const fragmented = sealed(3, key, true, 20)
  const fragments = fragmented[6]
  t.ok(fragments >= 2, 'the third chunk is fragmented')
  const ok = await server.ingest(Buffer.concat([sealed(1, key), sealed(2, key, true), fragmented]))
  t.same(ok.json.frames.map(f => f.status), ['accepted', 'accepted', ...Array(fragments - 1).fill('partial'), 'accepted'])
  const wrong = await server.ingest(sealed(4, '00'.repeat(16)))
  t.equal(wrong.json.frames[0].reason, 'authentication failed: wrong key or altered chunk')
  const altered = Buffer.from(sealed(5, key))
  altered[30] ^= 0x01
  const fixedCrc = encodeFrame({ type: altered[3], flags: altered[4], deviceId: DEVICE, sequence: 5, payload: altered.subarray(22, altered.length - 4) })
  t.equal((await server.ingest(fixedCrc)).json.frames[0].reason, 'authentication failed: wrong key or altered chunk')
  const plaintext = await server.ingest(encodeChunk({ device: DEVICE, sequence: 6, payload: SAMPLES[5] }))
  t.equal(plaintext.json.frames[0].reason, `device ${DEVICE} is registered for encrypted chunks; an unencrypted one is refused`)
  const stranger = encodeChunk({ device: 'ffffffffffffffff', sequence: 1, payload: SAMPLES[5], key: Buffer.from(key, 'hex') })
  t.equal((await server.ingest(stranger)).json.frames[0].reason, 'encrypted chunk from a device without a registered key')
})

t.test('fragments arrive over several requests, are bounded, and expire', async t => {
  const server = await telemetryServer(t, { fragments: { max_chunks: 2, max_bytes: 100000, ttl_seconds: 60 } })
  const frames = (sequence: number): Buffer[] => framesOf(encodeChunk({ device: DEVICE, sequence, payload: SAMPLES[4], mtu: 16 }))
  const parts = frames(1)
  t.ok(parts.length >= 3)
  t.same((await server.ingest(parts[0])).json.frames[0], { index: 0, offset: 0, status: 'partial', device: DEVICE, sequence: 1, type: 'Trace', fragment: `1/${parts.length}` })
  t.equal((await server.ingest(parts[0])).json.frames[0].status, 'partial', 'a repeated fragment is harmless')
  const conflicting = Buffer.from(parts[1])
  conflicting[24] ^= 0xff
  const rewritten = encodeFrame({ type: 5, deviceId: DEVICE, sequence: 1, fragmentIndex: 1, fragmentCount: parts.length, payload: conflicting.subarray(22, conflicting.length - 4) })
  t.equal((await server.ingest(parts[1])).json.frames[0].status, 'partial')
  t.match((await server.ingest(rewritten)).json.frames[0].reason, /fragment 1 differs from the copy received before/)
  const rest = await server.ingest(Buffer.concat(parts.slice(2).reverse()))
  t.equal(rest.json.frames.at(-1)?.status, 'accepted', 'complete in any order')
  t.equal((await server.ingest(parts[0])).json.frames[0].status, 'partial', 'a late fragment of a stored chunk waits for the rest: chunks are compared whole')

  await server.ingest(frames(2)[0])
  await server.ingest(frames(3)[0])
  t.match((await server.ingest(frames(4)[0])).json.frames[0].reason, /2 chunks are already being reassembled/)
  t.equal(await server.service.expireFragments(Date.now() + 61_000), 2)
  t.equal((await server.ingest(frames(4)[0])).json.frames[0].status, 'partial', 'room again after expiry')
})
