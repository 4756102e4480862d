// Frame parser: every status, resynchronisation, limits, and WASM records identical to the reference.
import t, { type Test } from 'tap'
import { createCodecs, encodeFrame, FrameType, FrameFlag, FRAME_MAX_RECORDS, FRAME_MAX_PAYLOAD } from '../../wasm/index.js'
import type { FrameFields, FrameIndex } from '../../wasm/index.js'

const wasm = createCodecs({ backend: 'wasm' })
const reference = createCodecs({ backend: 'reference' })
const DEVICE = '0123456789abcdef'

function frame(overrides: Partial<FrameFields> = {}): Uint8Array {
  return encodeFrame({ type: FrameType.Metrics, deviceId: DEVICE, sequence: 1, payload: Uint8Array.of(1, 2, 3), ...overrides })
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  parts.reduce((at, p) => (out.set(p, at), at + p.length), 0)
  return out
}

/** Parses with both backends, checks their raw records are identical, returns the WASM index. */
function parse(t: Test, body: Uint8Array): FrameIndex {
  const index = wasm.parseFrames(body)
  const expected = reference.parseFrames(body)
  t.equal(Buffer.compare(Buffer.from(index.words.buffer), Buffer.from(expected.words.buffer)), 0, 'WASM records equal reference records')
  return index
}

const statuses = (index: FrameIndex): string[] => [...index].map((r) => r.status)

t.test('a valid frame decodes every field and its payload is a view, not a copy', async (t) => {
  const payload = Uint8Array.from({ length: 40 }, (_, i) => i)
  const f = frame({ type: FrameType.Trace, flags: FrameFlag.Encrypted | FrameFlag.Cbor, fragmentIndex: 2, fragmentCount: 5, sequence: 0xfffffffe, payload })
  const index = parse(t, f)
  t.equal(index.count, 1)
  t.ok(index.complete)
  const r = index.at(0)
  t.match(r, {
    status: 'ok', reason: undefined, start: 0, end: 66, hasHeader: true, type: FrameType.Trace, flags: 0x05,
    fragmentIndex: 2, fragmentCount: 5, deviceId: DEVICE, sequence: 0xfffffffe, payloadOffset: 22, payloadLength: 40,
  })
  const view = index.payload(r)
  t.same([...view], [...payload])
  t.equal(view.buffer, f.buffer, 'payload shares the body buffer')
})

t.test('empty body', async (t) => {
  const index = parse(t, new Uint8Array(0))
  t.equal(index.count, 0)
  t.equal(index.consumed, 0)
  t.ok(index.complete)
})

t.test('zero-length and maximum-length payloads', async (t) => {
  const empty = frame({ payload: new Uint8Array(0) })
  const max = frame({ payload: new Uint8Array(FRAME_MAX_PAYLOAD).fill(0x42) })
  const index = parse(t, concat(empty, max))
  t.same(statuses(index), ['ok', 'ok'])
  t.match(index.at(0), { start: 0, end: 26, payloadLength: 0 })
  t.match(index.at(1), { start: 26, end: 26 + 26 + FRAME_MAX_PAYLOAD, payloadLength: FRAME_MAX_PAYLOAD })
})

t.test('garbage before, between and after frames is one bad-magic span each', async (t) => {
  const garbage = Uint8Array.of(0x00, 0x42, 0x54, 0x03, 0x42, 0xff) // holds "BT" + version 3: still garbage mid-span
  const body = concat(garbage, frame({ sequence: 1 }), garbage, garbage, frame({ sequence: 2 }), garbage)
  const index = parse(t, body)
  t.same(statuses(index), ['bad-magic', 'ok', 'bad-magic', 'ok', 'bad-magic'])
  t.match(index.at(0), { start: 0, end: 6, hasHeader: false, deviceId: '' })
  t.match(index.at(2), { start: 35, end: 47 })
  t.match(index.at(1), { sequence: 1 })
  t.match(index.at(3), { sequence: 2 })
  t.equal(index.at(4).end, body.length)
  t.match(index.at(2).reason, /skipped 12 byte\(s\)/)
})

t.test('a trailing "BT" without a version byte is garbage', async (t) => {
  const index = parse(t, concat(frame(), Uint8Array.of(0x42, 0x54)))
  t.same(statuses(index), ['ok', 'bad-magic'])
})

t.test('unsupported version skips to the next frame', async (t) => {
  const index = parse(t, concat(frame({ version: 3 }), frame({ sequence: 9 })))
  t.same(statuses(index), ['unsupported-version', 'ok'])
  t.match(index.at(0).reason, /unsupported frame version 3/)
  t.equal(index.at(1).sequence, 9)
})

t.test('unknown type, reserved bits and bad fragments skip the frame by its length', async (t) => {
  const cases: Array<[Partial<FrameFields>, string, RegExp]> = [
    [{ type: 0 }, 'unknown-type', /unknown frame type 0/],
    [{ type: 7 }, 'unknown-type', /unknown frame type 7/],
    [{ flags: 0x08 }, 'reserved-bits', /flags 0x08/],
    [{ version: 2, flags: 0x10 | FrameFlag.Retransmitted }, 'reserved-bits', /flags 0x18/],
    [{ flags: 0x80 | FrameFlag.Compressed }, 'reserved-bits', /flags 0x82/],
    [{ reserved: 1 }, 'reserved-bits', /reserved byte 7 is 0x01/],
    [{ fragmentIndex: 1, fragmentCount: 0 }, 'bad-fragment', /index 1, count 0/],
    [{ fragmentIndex: 0, fragmentCount: 1 }, 'bad-fragment', /index 0, count 1/],
    [{ fragmentIndex: 3, fragmentCount: 3 }, 'bad-fragment', /index 3, count 3/],
  ]
  for (const [fields, status, reason] of cases) {
    const bad = frame(fields)
    const index = parse(t, concat(bad, frame({ sequence: 7 })))
    t.same(statuses(index), [status, 'ok'], `${JSON.stringify(fields)} → ${status}`)
    t.match(index.at(0), { start: 0, end: bad.length, hasHeader: true, reason })
    t.equal(index.at(1).sequence, 7)
  }
  const okFragments = parse(t, concat(frame({ fragmentIndex: 1, fragmentCount: 2 }), frame({ fragmentIndex: 254, fragmentCount: 255 })))
  t.same(statuses(okFragments), ['ok', 'ok'], 'index < count with count >= 2 is valid')
})

t.test('version 2 frames: the retransmission flag (bit 3) is known, and each record says its version', async (t) => {
  const index = parse(t, concat(frame({ version: 2, flags: FrameFlag.Retransmitted | FrameFlag.Compressed }), frame({ sequence: 5 }), Uint8Array.of(1, 2)))
  t.same(statuses(index), ['ok', 'ok', 'bad-magic'])
  t.match(index.at(0), { version: 2, flags: 0x0a })
  t.match(index.at(1), { version: 1, sequence: 5 })
  t.match(index.at(2), { version: 0, hasHeader: false })
})

t.test('bad CRC skips the frame by its length and parsing continues', async (t) => {
  const bad = frame({ payload: new Uint8Array(10) })
  bad[25] ^= 0x01
  const index = parse(t, concat(bad, frame({ sequence: 3 })))
  t.same(statuses(index), ['bad-crc', 'ok'])
  t.match(index.at(0), { end: bad.length, hasHeader: true })
  t.match(index.at(0).reason, /CRC mismatch at offset 0: stored 0x[0-9a-f]{8}, computed 0x[0-9a-f]{8}/)
  t.equal(index.at(1).sequence, 3)
  const crcOnly = frame()
  crcOnly[crcOnly.length - 1] ^= 0x80
  t.same(statuses(parse(t, crcOnly)), ['bad-crc'], 'a flipped CRC byte is detected')
})

t.test('truncated frames: payload cut off, header cut off, magic only', async (t) => {
  const full = frame({ payload: new Uint8Array(100) })
  const tail = parse(t, concat(frame(), full.subarray(0, 60)))
  t.same(statuses(tail), ['ok', 'truncated'])
  t.match(tail.at(1), { start: 29, end: 89, hasHeader: true, payloadLength: 100 })
  t.match(tail.at(1).reason, /declares a 100-byte payload \(126 bytes\) but the body holds 60/)
  t.equal(tail.payload(tail.at(1)).length, 38, 'payload view is clamped to the body')

  const header = parse(t, full.subarray(0, 21))
  t.same(statuses(header), ['truncated'])
  t.match(header.at(0), { hasHeader: false, end: 21 })
  t.match(header.at(0).reason, /cut off: 21 of 22 bytes/)

  t.same(statuses(parse(t, Uint8Array.of(0x42, 0x54, 0x01))), ['truncated'])
})

t.test('a truncated frame resynchronises on the next magic inside its declared length', async (t) => {
  const liar = frame({ payload: new Uint8Array(4) })
  liar[20] = 0xff // declares 255 more payload bytes than exist; CRC is irrelevant because the frame is incomplete
  const index = parse(t, concat(liar.subarray(0, 26), frame({ sequence: 5 })))
  t.same(statuses(index), ['truncated', 'ok'])
  t.match(index.at(0), { start: 0, end: 26 })
  t.equal(index.at(1).sequence, 5)
})

t.test('many frames with varied payloads parse in order', async (t) => {
  const frames = Array.from({ length: 1000 }, (_, i) => frame({ sequence: i, payload: new Uint8Array(i % 97).fill(i & 0xff) }))
  const index = parse(t, concat(...frames))
  t.equal(index.count, 1000)
  t.ok([...index].every((r, i) => r.status === 'ok' && r.sequence === i && r.payloadLength === i % 97))
  t.ok(index.complete)
})

t.test(`parsing stops after FRAME_MAX_RECORDS (${FRAME_MAX_RECORDS}) records and reports where`, async (t) => {
  const one = frame({ payload: new Uint8Array(0) })
  const total = FRAME_MAX_RECORDS + 5
  const body = new Uint8Array(total * one.length)
  for (let i = 0; i < total; i++) body.set(one, i * one.length)
  const first = parse(t, body)
  t.equal(first.count, FRAME_MAX_RECORDS)
  t.notOk(first.complete)
  t.equal(first.consumed, FRAME_MAX_RECORDS * one.length)
  const rest = parse(t, body.subarray(first.consumed))
  t.equal(rest.count, 5)
  t.ok(rest.complete)
})

t.test('at() rejects out-of-range indexes', async (t) => {
  const index = parse(t, frame())
  t.throws(() => index.at(1), RangeError)
  t.throws(() => index.at(-1), RangeError)
})

t.test('encodeFrame rejects what cannot be encoded', async (t) => {
  t.throws(() => frame({ deviceId: '0123' }), RangeError, 'short hex device id')
  t.throws(() => frame({ deviceId: '0123456789abcdeg' }), RangeError, 'non-hex device id')
  t.throws(() => frame({ deviceId: new Uint8Array(7) }), RangeError, '7-byte device id')
  t.throws(() => frame({ payload: new Uint8Array(FRAME_MAX_PAYLOAD + 1) }), RangeError, 'payload over 65535 bytes')
  const raw = parse(t, frame({ deviceId: Uint8Array.of(0xde, 0xad, 0xbe, 0xef, 0, 1, 2, 3) }))
  t.equal(raw.at(0).deviceId, 'deadbeef00010203', 'raw device id bytes keep their order')
})
