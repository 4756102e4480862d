// CRC-32: check value, zlib agreement, and WASM vs reference on every tail length and alignment.
import t from 'tap'
import fc from 'fast-check'
import { crc32 as zlibCrc32 } from 'node:zlib'
import { createCodecs } from '../../wasm/index.js'

const wasm = createCodecs({ backend: 'wasm' })
const reference = createCodecs({ backend: 'reference' })
const ascii = (text: string): Uint8Array => new TextEncoder().encode(text)

t.test('standard check values', async (t) => {
  for (const codecs of [wasm, reference]) {
    t.equal(codecs.crc32(ascii('123456789')), 0xcbf43926, `${codecs.backend}: "123456789"`)
    t.equal(codecs.crc32(new Uint8Array(0)), 0, `${codecs.backend}: empty input`)
    t.equal(codecs.crc32(ascii('The quick brown fox jumps over the lazy dog')), 0x414fa339, `${codecs.backend}: fox`)
  }
})

t.test('every length 0..80 and every start offset 0..7 matches zlib', async (t) => {
  const data = Uint8Array.from({ length: 96 }, (_, i) => (i * 37 + 11) & 0xff)
  let mismatches = 0
  for (let offset = 0; offset < 8; offset++) {
    for (let length = 0; length <= 80; length++) {
      const slice = data.subarray(offset, offset + length)
      const expected = zlibCrc32(slice)
      if (wasm.crc32(slice) !== expected || reference.crc32(slice) !== expected) mismatches++
    }
  }
  t.equal(mismatches, 0)
})

t.test('random inputs agree with zlib', async (t) => {
  t.doesNotThrow(() => fc.assert(
    fc.property(fc.uint8Array({ maxLength: 4096 }), (bytes) => {
      const expected = zlibCrc32(bytes)
      return wasm.crc32(bytes) === expected && reference.crc32(bytes) === expected
    }),
    { numRuns: 300 },
  ))
})

t.test('large input that grows WASM memory', async (t) => {
  const big = Uint8Array.from({ length: 3 * 1024 * 1024 }, (_, i) => (i * 2654435761) >>> 24)
  t.equal(wasm.crc32(big), zlibCrc32(big))
  t.equal(wasm.crc32(ascii('123456789')), 0xcbf43926, 'still correct after growth')
})
