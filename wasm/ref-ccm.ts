// Reference AES-CCM (RFC 3610 / NIST SP 800-38C), generic in tag length M and nonce length N (L = 15 - N).
import type { CcmEngine } from './types.js'
import { encryptBlock, expandKey } from './ref-aes.js'

/** CBC-MAC input: B0 || encoded AAD (zero-padded) || message (zero-padded). */
function macInput(nonce: Uint8Array, aad: Uint8Array, message: Uint8Array, tagLength: number): Uint8Array {
  const l = 15 - nonce.length
  const b0 = new Uint8Array(16)
  b0[0] = (aad.length > 0 ? 0x40 : 0) | (((tagLength - 2) / 2) << 3) | (l - 1)
  b0.set(nonce, 1)
  for (let i = 0, n = message.length; i < l; i++, n = Math.floor(n / 256)) b0[15 - i] = n % 256
  const prefix = aad.length === 0 ? []
    : aad.length < 0xff00 ? [aad.length >>> 8, aad.length & 0xff]
    : [0xff, 0xfe, aad.length >>> 24, (aad.length >>> 16) & 0xff, (aad.length >>> 8) & 0xff, aad.length & 0xff]
  const pad = (n: number): number => (16 - (n % 16)) % 16
  const aadBlockBytes = prefix.length + aad.length + pad(prefix.length + aad.length)
  const out = new Uint8Array(16 + aadBlockBytes + message.length + pad(message.length))
  out.set(b0)
  out.set(prefix, 16)
  out.set(aad, 16 + prefix.length)
  out.set(message, 16 + aadBlockBytes)
  return out
}

function cbcMac(roundKeys: Uint8Array, input: Uint8Array): Uint8Array {
  let x: Uint8Array = new Uint8Array(16)
  for (let at = 0; at < input.length; at += 16) {
    x = encryptBlock(roundKeys, x.map((b, i) => b ^ input[at + i]))
  }
  return x
}

/** Counter block A_i = flags (L - 1) || nonce || i (big-endian over L bytes). */
function counterBlock(nonce: Uint8Array, i: number): Uint8Array {
  const a = new Uint8Array(16)
  a[0] = 15 - nonce.length - 1
  a.set(nonce, 1)
  for (let k = 15, n = i; k > nonce.length; k--, n = Math.floor(n / 256)) a[k] = n % 256
  return a
}

/** XORs `data` with the keystream E(A_1) || E(A_2) || ... */
function ctr(roundKeys: Uint8Array, nonce: Uint8Array, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(data.length)
  for (let at = 0; at < data.length; at += 16) {
    const stream = encryptBlock(roundKeys, counterBlock(nonce, at / 16 + 1))
    for (let k = 0; k < 16 && at + k < data.length; k++) out[at + k] = data[at + k] ^ stream[k]
  }
  return out
}

function tag(roundKeys: Uint8Array, nonce: Uint8Array, aad: Uint8Array, plaintext: Uint8Array, tagLength: number): Uint8Array {
  const t = cbcMac(roundKeys, macInput(nonce, aad, plaintext, tagLength))
  const s0 = encryptBlock(roundKeys, counterBlock(nonce, 0))
  return t.subarray(0, tagLength).map((b, i) => b ^ s0[i])
}

export const referenceCcm: CcmEngine = {
  seal(key, nonce, aad, plaintext, tagLength) {
    const roundKeys = expandKey(key)
    const out = new Uint8Array(plaintext.length + tagLength)
    out.set(ctr(roundKeys, nonce, plaintext))
    out.set(tag(roundKeys, nonce, aad, plaintext, tagLength), plaintext.length)
    return out
  },
  open(key, nonce, aad, sealed, tagLength) {
    const roundKeys = expandKey(key)
    const length = sealed.length - tagLength
    const plaintext = ctr(roundKeys, nonce, sealed.subarray(0, length))
    const expected = tag(roundKeys, nonce, aad, plaintext, tagLength)
    let diff = 0
    for (let i = 0; i < tagLength; i++) diff |= expected[i] ^ sealed[length + i]
    return diff === 0 ? plaintext : null
  },
}
