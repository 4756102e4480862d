// AES-128-CCM: RFC 3610 and NIST SP 800-38C vectors, property tests against Node's OpenSSL (including
// tampering), WASM vs reference, and argument handling.
import t from 'tap'
import fc from 'fast-check'
import { readFileSync } from 'node:fs'
import { createCipheriv } from 'node:crypto'
import { createCodecs, defaultWasmPath, nodeCcm, CCM_MAX_MESSAGE } from '../../wasm/index.js'
import type { CcmCodec } from '../../wasm/index.js'
import { createWasmEngine } from '../../wasm/wasm-engine.js'
import { referenceCcm } from '../../wasm/ref-ccm.js'
import { nodeCcmEngine } from '../../wasm/node-ccm.js'

const wasm = createCodecs({ backend: 'wasm' })
const reference = createCodecs({ backend: 'reference' })
const wasmCcm = createWasmEngine(readFileSync(defaultWasmPath())).ccm
const codecs: ReadonlyArray<readonly [string, CcmCodec]> = [['wasm', wasm], ['reference', reference], ['node', nodeCcm]]
const engines = [['wasm', wasmCcm], ['reference', referenceCcm], ['node', nodeCcmEngine]] as const

const hex = (text: string): Uint8Array => Uint8Array.from(Buffer.from(text.replace(/\s+/g, ''), 'hex'))
const toHex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex')
const sequence = (n: number): Uint8Array => Uint8Array.from({ length: n }, (_, i) => i & 0xff)

/** RFC 3610 section 8, packet vectors #1..#3: M = 8, L = 2, 8-byte header as AAD. */
const RFC3610 = [
  { name: '#1', nonce: '00000003020100A0A1A2A3A4A5', packet: 31, out: '588C979A61C663D2F066D0C2C0F989806D5F6B61DAC38417E8D12CFDF926E0' },
  { name: '#2', nonce: '00000004030201A0A1A2A3A4A5', packet: 32, out: '72C91A36E135F8CF291CA894085C87E3CC15C439C9E43A3BA091D56E10400916' },
  { name: '#3', nonce: '00000005040302A0A1A2A3A4A5', packet: 33, out: '51B1E5F44A197D1DA46B0F8E2D282AE871E838BB64DA8596574ADAA76FBD9FB0C5' },
]
const RFC_KEY = hex('C0C1C2C3C4C5C6C7C8C9CACBCCCDCECF')

/** NIST SP 800-38C appendix C, examples 1..4 (tag lengths 4, 6, 8, 14; example 4 has 65536 AAD bytes). */
const NIST_KEY = hex('404142434445464748494a4b4c4d4e4f')
const NIST = [
  { name: 'example 1', tag: 4, nonce: '10111213141516', aad: hex('0001020304050607'), pt: '20212223', out: '7162015b4dac255d' },
  { name: 'example 2', tag: 6, nonce: '1011121314151617', aad: hex('000102030405060708090a0b0c0d0e0f'),
    pt: '202122232425262728292a2b2c2d2e2f', out: 'd2a1f0e051ea5f62081a7792073d593d1fc64fbfaccd' },
  { name: 'example 3', tag: 8, nonce: '101112131415161718191a1b', aad: hex('000102030405060708090a0b0c0d0e0f10111213'),
    pt: '202122232425262728292a2b2c2d2e2f3031323334353637',
    out: 'e3b201a9f5b71a7a9b1ceaeccd97e70b6176aad9a4428aa5484392fbc1b09951' },
  { name: 'example 4', tag: 14, nonce: '101112131415161718191a1b1c', aad: sequence(65536),
    pt: '202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f',
    out: '69915dad1e84c6376a68c2967e4dab615ae0fd1faec44cc484828529463ccf72b4ac6bec93e8598e7f0dadbcea5b' },
]

t.test('RFC 3610 packet vectors #1..#3 (13-byte nonce, 8-byte tag)', async (t) => {
  for (const v of RFC3610) {
    const packet = sequence(v.packet)
    const [aad, plaintext] = [packet.subarray(0, 8), packet.subarray(8)]
    for (const [name, ccm] of codecs) {
      const sealed = ccm.ccmSeal(RFC_KEY, hex(v.nonce), aad, plaintext)
      t.equal(toHex(sealed), v.out.toLowerCase(), `${name} seals ${v.name}`)
      const opened = ccm.ccmOpen(RFC_KEY, hex(v.nonce), aad, hex(v.out))
      t.ok(opened.ok && toHex(opened.value) === toHex(plaintext), `${name} opens ${v.name}`)
    }
  }
})

t.test('NIST SP 800-38C examples through the generic engines (other tag and nonce lengths)', async (t) => {
  for (const v of NIST) {
    for (const [name, engine] of engines) {
      t.equal(toHex(engine.seal(NIST_KEY, hex(v.nonce), v.aad, hex(v.pt), v.tag)), v.out, `${name} seals ${v.name}`)
      const opened = engine.open(NIST_KEY, hex(v.nonce), v.aad, hex(v.out), v.tag)
      t.equal(opened === null ? null : toHex(opened), v.pt, `${name} opens ${v.name}`)
    }
  }
})

const key = fc.uint8Array({ minLength: 16, maxLength: 16 })
const nonce = fc.uint8Array({ minLength: 13, maxLength: 13 })
const aad = fc.uint8Array({ maxLength: 64 })
const message = fc.uint8Array({ maxLength: 2048 })

function nodeSeal(k: Uint8Array, n: Uint8Array, a: Uint8Array, p: Uint8Array): Uint8Array {
  const cipher = createCipheriv('aes-128-ccm', k, n, { authTagLength: 8 })
  cipher.setAAD(a, { plaintextLength: p.length })
  return Buffer.concat([cipher.update(p), cipher.final(), cipher.getAuthTag()])
}

t.test('WASM seal equals node:crypto and both sides open each other', async (t) => {
  t.doesNotThrow(() => fc.assert(
    fc.property(key, nonce, aad, message, (k, n, a, p) => {
      const sealed = wasm.ccmSeal(k, n, a, p)
      const opened = wasm.ccmOpen(k, n, a, nodeSeal(k, n, a, p))
      const byNode = nodeCcm.ccmOpen(k, n, a, sealed)
      return toHex(sealed) === toHex(nodeSeal(k, n, a, p)) &&
        opened.ok && toHex(opened.value) === toHex(p) && byNode.ok && toHex(byNode.value) === toHex(p)
    }),
    { numRuns: 150 },
  ))
})

t.test('any single-bit change of ciphertext, tag, AAD or nonce fails authentication', async (t) => {
  const target = fc.constantFrom('sealed', 'aad', 'nonce')
  t.doesNotThrow(() => fc.assert(
    fc.property(key, nonce, fc.uint8Array({ minLength: 1, maxLength: 64 }), message, target, fc.nat(), fc.integer({ min: 0, max: 7 }),
      (k, n, a, p, where, position, bit) => {
        const sealed = nodeSeal(k, n, a, p)
        const copies = { sealed: Uint8Array.from(sealed), aad: Uint8Array.from(a), nonce: Uint8Array.from(n) }
        const victim = copies[where]
        victim[position % victim.length] ^= 1 << bit
        return [wasm, nodeCcm, reference].every((ccm) => {
          const result = ccm.ccmOpen(k, copies.nonce, copies.aad, copies.sealed)
          return !result.ok && result.code === 'auth-failed'
        })
      }),
    { numRuns: 60 },
  ))
})

t.test('WASM equals the reference for tag lengths 4..16 and nonce lengths 7..13', async (t) => {
  t.doesNotThrow(() => fc.assert(
    fc.property(key, fc.integer({ min: 7, max: 13 }), fc.integer({ min: 2, max: 8 }), aad, fc.uint8Array({ maxLength: 100 }),
      (k, nonceLength, halfTag, a, p) => {
        const n = sequence(nonceLength)
        const sealed = wasmCcm.seal(k, n, a, p, halfTag * 2)
        const opened = wasmCcm.open(k, n, a, sealed, halfTag * 2)
        return toHex(sealed) === toHex(referenceCcm.seal(k, n, a, p, halfTag * 2)) &&
          toHex(sealed) === toHex(nodeCcmEngine.seal(k, n, a, p, halfTag * 2)) &&
          opened !== null && toHex(opened) === toHex(p)
      }),
    { numRuns: 60 },
  ))
})

t.test('length limits and argument errors', async (t) => {
  const k = new Uint8Array(16)
  const n = new Uint8Array(13)
  for (const [name, ccm] of codecs) {
    const max = ccm.ccmSeal(k, n, new Uint8Array(0), new Uint8Array(CCM_MAX_MESSAGE))
    t.equal(max.length, CCM_MAX_MESSAGE + 8, `${name}: 65535-byte message seals`)
    t.throws(() => ccm.ccmSeal(k, n, new Uint8Array(0), new Uint8Array(CCM_MAX_MESSAGE + 1)), RangeError, `${name}: 65536 bytes rejected`)
    t.throws(() => ccm.ccmSeal(new Uint8Array(15), n, new Uint8Array(0), new Uint8Array(1)), RangeError, `${name}: short key`)
    t.throws(() => ccm.ccmOpen(k, new Uint8Array(12), new Uint8Array(0), new Uint8Array(8)), RangeError, `${name}: short nonce`)
    t.match(ccm.ccmOpen(k, n, new Uint8Array(0), new Uint8Array(7)), { ok: false, code: 'bad-length' }, `${name}: shorter than the tag`)
    const empty = ccm.ccmSeal(k, n, new Uint8Array(0), new Uint8Array(0))
    t.equal(empty.length, 8, `${name}: empty message is just the tag`)
    t.match(ccm.ccmOpen(k, n, new Uint8Array(0), empty), { ok: true }, `${name}: empty message opens`)
  }
})

t.test('the WASM engine refuses parameters outside CCM', async (t) => {
  const k = new Uint8Array(16)
  for (const [nonceLength, tagLength] of [[13, 5], [13, 18], [13, 2], [6, 8], [14, 8]]) {
    t.throws(() => wasmCcm.seal(k, new Uint8Array(nonceLength), new Uint8Array(0), new Uint8Array(4), tagLength), RangeError,
      `nonce ${nonceLength}, tag ${tagLength}`)
  }
  t.throws(() => wasmCcm.seal(k, new Uint8Array(13), new Uint8Array(0), new Uint8Array(65536), 8), RangeError, 'message too long for L = 2')
})
