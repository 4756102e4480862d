// RLE: the documented byte format, every decoder error, limits, round trips and WASM vs reference.
import t from 'tap'
import fc from 'fast-check'
import { createCodecs, rleMaxEncodedLength, RLE_MAX_OUTPUT } from '../../wasm/index.js'
import type { RleDecodeResult } from '../../wasm/index.js'
import { RLE_MAX_LITERAL, RLE_MAX_REPEAT } from '../../wasm/layout.js'

const wasm = createCodecs({ backend: 'wasm' })
const reference = createCodecs({ backend: 'reference' })
const both = [wasm, reference]

const bytes = (...values: number[]): Uint8Array => Uint8Array.from(values)
const code = (result: RleDecodeResult): string => (result.ok ? 'ok' : result.code)

/** Mostly runs over a tiny alphabet, so runs of every length and triples are common. */
const runHeavy = fc
  .array(fc.tuple(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 0, max: 3 })), { maxLength: 60 })
  .map((runs) => Uint8Array.from(runs.flatMap(([length, value]) => Array<number>(length).fill(value))))
const anyInput = fc.oneof(fc.uint8Array({ maxLength: 600 }), runHeavy)

t.test('documented example encodes byte for byte and decodes back', async (t) => {
  const input = bytes(0, 0, 0, 0, 0, 1, 2, 3, 4, 4, 4, 4, 5)
  const encoded = bytes(10, 0, 5, 1, 2, 3, 8, 4, 1, 5)
  for (const codecs of both) {
    t.same([...codecs.rleEncode(input)], [...encoded], `${codecs.backend} encode`)
    t.same(codecs.rleDecode(encoded, 100), { ok: true, value: input }, `${codecs.backend} decode`)
  }
})

t.test('runs shorter than 3 stay literal; varint headers widen at 64 and 8192 bytes', async (t) => {
  const sawtooth = (n: number): Uint8Array => Uint8Array.from({ length: n }, (_, i) => i % 2)
  for (const codecs of both) {
    t.same([...codecs.rleEncode(bytes(7, 7, 1))], [5, 7, 7, 1], `${codecs.backend}: pair is literal`)
    t.same([...codecs.rleEncode(bytes(7, 7, 7))], [6, 7], `${codecs.backend}: triple is a repeat`)
    t.same([...codecs.rleEncode(new Uint8Array(0))], [], `${codecs.backend}: empty`)
    t.same([...codecs.rleEncode(sawtooth(64)).subarray(0, 1)], [127], `${codecs.backend}: literal 64 → 1-byte header`)
    t.same([...codecs.rleEncode(sawtooth(65)).subarray(0, 2)], [0x81, 0x01], `${codecs.backend}: literal 65 → 2 bytes`)
    t.same([...codecs.rleEncode(new Uint8Array(8192))], [0x80, 0x80, 0x01, 0], `${codecs.backend}: repeat 8192 → 3 bytes`)
  }
})

t.test('the encoder splits runs at the format maxima', async (t) => {
  const longRun = new Uint8Array(RLE_MAX_REPEAT + 1).fill(9)
  const literal = Uint8Array.from({ length: RLE_MAX_LITERAL + 10 }, (_, i) => (i * 7) & 0xff) // no equal neighbours
  for (const codecs of both) {
    const run = codecs.rleEncode(longRun)
    t.same([...run], [0xfe, 0xff, 0x7f, 9, 1, 9], `${codecs.backend}: repeat of 2^20 - 1, then a 1-byte literal`)
    const lit = codecs.rleEncode(literal)
    t.same([...lit.subarray(0, 3)], [0xff, 0xff, 0x7f], `${codecs.backend}: first literal is 2^20 bytes`)
    t.same([...lit.subarray(3 + RLE_MAX_LITERAL, 4 + RLE_MAX_LITERAL)], [19], `${codecs.backend}: then a 10-byte literal`)
    t.equal(lit.length, 3 + RLE_MAX_LITERAL + 1 + 10)
    const decoded = codecs.rleDecode(lit, literal.length)
    t.ok(decoded.ok && Buffer.from(decoded.value).equals(literal), `${codecs.backend}: round trip`)
  }
})

t.test('decoder errors', async (t) => {
  const cases: Array<[string, Uint8Array, number, string]> = [
    ['zero header', bytes(0x00), 10, 'zero-header'],
    ['zero header after a valid run', bytes(0x06, 0x41, 0x00), 10, 'zero-header'],
    ['literal without its bytes', bytes(0x03, 0x41), 10, 'truncated'],
    ['repeat without its byte', bytes(0x02), 10, 'truncated'],
    ['varint cut after one byte', bytes(0x80), 10, 'truncated'],
    ['varint cut after two bytes', bytes(0x81, 0x80), 10, 'truncated'],
    ['four-byte varint', bytes(0x80, 0x80, 0x80, 0x01, 0x41), 10, 'bad-varint'],
    ['non-minimal two-byte varint', bytes(0x82, 0x00, 0x41), 10, 'bad-varint'],
    ['non-minimal three-byte varint', bytes(0x82, 0x80, 0x00, 0x41), 10, 'bad-varint'],
    ['repeat over the limit', bytes(0x06, 0x41), 2, 'output-limit'],
    ['literal over the limit', bytes(0x05, 1, 2, 3), 2, 'output-limit'],
  ]
  for (const [name, input, max, expected] of cases) {
    for (const codecs of both) {
      const result = codecs.rleDecode(input, max)
      t.equal(code(result), expected, `${codecs.backend}: ${name}`)
      t.ok(result.ok || result.reason.length > 0, `${codecs.backend}: ${name} has a reason`)
    }
  }
  for (const codecs of both) {
    t.equal(code(codecs.rleDecode(bytes(0x06, 0x41), 3)), 'ok', `${codecs.backend}: output exactly at the limit`)
    t.same(codecs.rleDecode(bytes(0x02, 0x41, 0x04, 0x42), 3), { ok: true, value: bytes(0x41, 0x42, 0x42) },
      `${codecs.backend}: repeats of 1 and 2 are accepted`)
  }
})

t.test('a decompression bomb stops at the output limit', async (t) => {
  const run = bytes(0xfe, 0xff, 0x7f, 0x00) // 2^20 - 1 zero bytes
  const bomb = new Uint8Array(run.length * 4096)
  for (let i = 0; i < 4096; i++) bomb.set(run, i * run.length) // ~4 GiB if decoded
  for (const codecs of both) {
    const result = codecs.rleDecode(bomb, 8 * 1024 * 1024)
    t.equal(code(result), 'output-limit', codecs.backend)
  }
})

t.test('maxOutput must be an integer in range', async (t) => {
  for (const codecs of both) {
    for (const bad of [-1, 1.5, RLE_MAX_OUTPUT + 1, Number.NaN]) {
      t.throws(() => codecs.rleDecode(bytes(0x02, 0x41), bad), RangeError, `${codecs.backend}: ${bad}`)
    }
  }
})

t.test('round trip, bound, and WASM output identical to the reference', async (t) => {
  t.doesNotThrow(() => fc.assert(
    fc.property(anyInput, (input) => {
      const encoded = wasm.rleEncode(input)
      const decoded = wasm.rleDecode(encoded, input.length)
      return Buffer.from(encoded).equals(reference.rleEncode(input)) &&
        encoded.length <= rleMaxEncodedLength(input.length) &&
        decoded.ok && Buffer.from(decoded.value).equals(input)
    }),
    { numRuns: 400 },
  ))
})

t.test('decoding arbitrary bytes gives the same result in both backends', async (t) => {
  t.doesNotThrow(() => fc.assert(
    fc.property(fc.uint8Array({ maxLength: 200 }), fc.integer({ min: 0, max: 5000 }), (input, max) => {
      const a = wasm.rleDecode(input, max)
      const b = reference.rleDecode(input, max)
      return a.ok && b.ok ? Buffer.from(a.value).equals(b.value) && a.value.length <= max : code(a) === code(b)
    }),
    { numRuns: 500 },
  ))
})
