// AES-CCM (RFC 3610 / NIST SP 800-38C): CBC-MAC over B0 || encoded AAD || message, CTR with A_i.
// Generic in tag length M (4..16, even) and nonce length N (7..13, L = 15 - N).
import { CCM_OK, CCM_AUTH_FAILED, CCM_BAD_PARAMS } from "../layout"
import { aesSetKey, aesEncryptBlock } from "./aes"

// Working blocks: the CBC-MAC state, the counter block A_i and one keystream block.
const MAC: usize = memory.data(16, 16)
const CTR: usize = memory.data(16, 16)
const STREAM: usize = memory.data(16, 16)

// @ts-ignore: decorator
@inline function xorInto(dst: usize, src: usize, len: usize): void {
  if (len == 16) {
    store<u64>(dst, load<u64>(dst) ^ load<u64>(src))
    store<u64>(dst, load<u64>(dst, 8) ^ load<u64>(src, 8), 8)
  } else {
    for (let i: usize = 0; i < len; i++) store<u8>(dst + i, load<u8>(dst + i) ^ load<u8>(src + i))
  }
}

/** Absorbs `len` bytes into the CBC-MAC, zero-padding the final partial block. */
function macAbsorb(src: usize, len: usize): void {
  while (len > 0) {
    const n = min(len, 16)
    xorInto(MAC, src, n)
    aesEncryptBlock(MAC, MAC)
    src += n
    len -= n
  }
}

/** Writes a big-endian counter/length into the last `width` bytes of the block at `block`. */
function putBigEndian(block: usize, width: u32, value: u32): void {
  for (let i: u32 = 0; i < width; i++) store<u8>(block + 15 - i, i < 4 ? value >>> (i << 3) : 0)
}

function paramsValid(nonceLen: u32, tagLen: u32, msgLen: u32): bool {
  if (tagLen < 4 || tagLen > 16 || (tagLen & 1) != 0 || nonceLen < 7 || nonceLen > 13) return false
  const l = 15 - nonceLen
  return l >= 4 || msgLen < (<u32>1 << (l << 3))
}

/** Starts the MAC with B0 and the encoded AAD, and sets CTR to A_0 (flags || nonce || 0). */
function begin(nonce: usize, nonceLen: u32, aad: usize, aadLen: u32, msgLen: u32, tagLen: u32): void {
  const l = 15 - nonceLen
  memory.fill(MAC, 0, 16)
  store<u8>(MAC, (aadLen > 0 ? 0x40 : 0) | (((tagLen - 2) >>> 1) << 3) | (l - 1))
  memory.copy(MAC + 1, nonce, nonceLen)
  putBigEndian(MAC, l, msgLen)
  aesEncryptBlock(MAC, MAC)
  if (aadLen > 0) {
    // The length prefix and the first AAD bytes share one block: 2 bytes below 2^16 - 2^8, else 0xFFFE + 4 bytes.
    memory.fill(STREAM, 0, 16)
    let prefix: usize
    if (aadLen < 0xff00) {
      store<u16>(STREAM, bswap(<u16>aadLen))
      prefix = 2
    } else {
      store<u16>(STREAM, 0xfeff)
      store<u32>(STREAM, bswap(aadLen), 2)
      prefix = 6
    }
    const first = min(<usize>aadLen, 16 - prefix)
    memory.copy(STREAM + prefix, aad, first)
    macAbsorb(STREAM, 16)
    macAbsorb(aad + first, <usize>aadLen - first)
  }
  memory.fill(CTR, 0, 16)
  store<u8>(CTR, l - 1)
  memory.copy(CTR + 1, nonce, nonceLen)
}

/** CTR-transforms `len` bytes from `src` to `dst`, MACing the plaintext side (`src` when sealing, `dst` when opening). */
function crypt(src: usize, dst: usize, len: u32, l: u32, sealing: bool): void {
  let counter: u32 = 1
  for (let off: u32 = 0; off < len; off += 16) {
    const n = min(len - off, 16)
    const from = src + off
    const to = dst + off
    putBigEndian(CTR, l, counter++)
    aesEncryptBlock(CTR, STREAM)
    if (sealing) macAbsorb(from, n)
    if (n == 16) {
      store<u64>(to, load<u64>(from) ^ load<u64>(STREAM))
      store<u64>(to, load<u64>(from, 8) ^ load<u64>(STREAM, 8), 8)
    } else {
      for (let i: usize = 0; i < n; i++) store<u8>(to + i, load<u8>(from + i) ^ load<u8>(STREAM + i))
    }
    if (!sealing) macAbsorb(to, n)
  }
}

/** Computes the encrypted tag U = T xor first M bytes of E(A_0) into STREAM. */
function finishTag(l: u32): void {
  putBigEndian(CTR, l, 0)
  aesEncryptBlock(CTR, STREAM)
  xorInto(STREAM, MAC, 16)
}

/** Seals `len` bytes at `src` into `dst` as ciphertext || tag (len + tagLen bytes). */
export function ccmSeal(
  key: usize, nonce: usize, nonceLen: u32, aad: usize, aadLen: u32, src: usize, len: u32, dst: usize, tagLen: u32,
): u32 {
  if (!paramsValid(nonceLen, tagLen, len)) return CCM_BAD_PARAMS
  aesSetKey(key)
  begin(nonce, nonceLen, aad, aadLen, len, tagLen)
  crypt(src, dst, len, 15 - nonceLen, true)
  finishTag(15 - nonceLen)
  memory.copy(dst + len, STREAM, tagLen)
  return CCM_OK
}

/**
 * Opens `len` ciphertext bytes at `src` followed by a `tagLen`-byte tag into `dst`. The tag is compared
 * in constant time; on mismatch the output is zeroed and CCM_AUTH_FAILED returned.
 */
export function ccmOpen(
  key: usize, nonce: usize, nonceLen: u32, aad: usize, aadLen: u32, src: usize, len: u32, dst: usize, tagLen: u32,
): u32 {
  if (!paramsValid(nonceLen, tagLen, len)) return CCM_BAD_PARAMS
  aesSetKey(key)
  begin(nonce, nonceLen, aad, aadLen, len, tagLen)
  crypt(src, dst, len, 15 - nonceLen, false)
  finishTag(15 - nonceLen)
  let diff: u32 = 0
  for (let i: u32 = 0; i < tagLen; i++) diff |= load<u8>(STREAM + i) ^ load<u8>(src + len + i)
  if (diff == 0) return CCM_OK
  memory.fill(dst, 0, len)
  return CCM_AUTH_FAILED
}
