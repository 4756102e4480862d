// Reference AES-128 block encryption (FIPS-197), byte-oriented, with the S-box derived from its definition.

/** Multiplication in GF(2^8) modulo x^8 + x^4 + x^3 + x + 1. */
function gmul(a: number, b: number): number {
  let product = 0
  for (; b > 0; b >>>= 1) {
    if (b & 1) product ^= a
    a = ((a << 1) ^ (a & 0x80 ? 0x11b : 0)) & 0xff
  }
  return product
}

const rotl8 = (x: number, n: number): number => ((x << n) | (x >>> (8 - n))) & 0xff

/** S(x) = affine(x^-1), with 0^-1 = 0 (x^254 is the inverse). */
const SBOX = Uint8Array.from({ length: 256 }, (_, x) => {
  let inverse = 1
  for (let k = 0; k < 254; k++) inverse = gmul(inverse, x)
  if (x === 0) inverse = 0
  return inverse ^ rotl8(inverse, 1) ^ rotl8(inverse, 2) ^ rotl8(inverse, 3) ^ rotl8(inverse, 4) ^ 0x63
})

/** The 11 round keys (176 bytes) of a 16-byte key. */
export function expandKey(key: Uint8Array): Uint8Array {
  const w = new Uint8Array(176)
  w.set(key)
  let rcon = 1
  for (let i = 16; i < 176; i += 4) {
    let t = [w[i - 4], w[i - 3], w[i - 2], w[i - 1]]
    if (i % 16 === 0) {
      t = [SBOX[t[1]] ^ rcon, SBOX[t[2]], SBOX[t[3]], SBOX[t[0]]]
      rcon = gmul(rcon, 2)
    }
    for (let k = 0; k < 4; k++) w[i + k] = w[i - 16 + k] ^ t[k]
  }
  return w
}

const MUL2 = Uint8Array.from({ length: 256 }, (_, x) => gmul(x, 2))

/** Encrypts one 16-byte block (state byte r + 4c is row r, column c). */
export function encryptBlock(roundKeys: Uint8Array, block: Uint8Array): Uint8Array {
  const s = new Uint8Array(16)
  const t = new Uint8Array(16)
  for (let i = 0; i < 16; i++) s[i] = block[i] ^ roundKeys[i]
  for (let round = 1; round <= 10; round++) {
    // SubBytes and ShiftRows: row r of column c takes the byte of column c + r.
    for (let i = 0; i < 16; i++) t[i] = SBOX[s[(i + 4 * (i % 4)) % 16]]
    for (let c = 0; c < 16; c += 4) {
      const [a0, a1, a2, a3] = [t[c], t[c + 1], t[c + 2], t[c + 3]]
      if (round === 10) {
        s.set([a0, a1, a2, a3], c)
        continue
      }
      // MixColumns: each output byte is 2·a_r + 3·a_{r+1} + a_{r+2} + a_{r+3}, with 3·x = 2·x + x.
      s[c] = MUL2[a0] ^ MUL2[a1] ^ a1 ^ a2 ^ a3
      s[c + 1] = a0 ^ MUL2[a1] ^ MUL2[a2] ^ a2 ^ a3
      s[c + 2] = a0 ^ a1 ^ MUL2[a2] ^ MUL2[a3] ^ a3
      s[c + 3] = MUL2[a0] ^ a0 ^ a1 ^ a2 ^ MUL2[a3]
    }
    for (let i = 0; i < 16; i++) s[i] ^= roundKeys[16 * round + i]
  }
  return s
}
