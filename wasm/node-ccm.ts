// AES-CCM through Node's OpenSSL binding, behind the same engine contract as the WASM and reference code.
import { createCipheriv, createDecipheriv } from 'node:crypto'
import type { CcmEngine } from './types.js'

export const nodeCcmEngine: CcmEngine = {
  seal(key, nonce, aad, plaintext, tagLength) {
    const cipher = createCipheriv('aes-128-ccm', key, nonce, { authTagLength: tagLength })
    cipher.setAAD(aad, { plaintextLength: plaintext.length })
    const ciphertext = cipher.update(plaintext)
    cipher.final()
    const tag = cipher.getAuthTag()
    const out = new Uint8Array(ciphertext.length + tag.length)
    out.set(ciphertext)
    out.set(tag, ciphertext.length)
    return out
  },
  open(key, nonce, aad, sealed, tagLength) {
    const length = sealed.length - tagLength
    const decipher = createDecipheriv('aes-128-ccm', key, nonce, { authTagLength: tagLength })
    decipher.setAuthTag(sealed.subarray(length))
    decipher.setAAD(aad, { plaintextLength: length })
    // On a tag mismatch update() yields nothing and only final() throws, so final() is always called.
    const plaintext = decipher.update(sealed.subarray(0, length))
    try {
      decipher.final()
    } catch {
      return null
    }
    return new Uint8Array(plaintext.buffer, plaintext.byteOffset, plaintext.byteLength)
  },
}
