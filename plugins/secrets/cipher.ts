// AES-256-GCM for secret values at rest: a 32-byte key kept base64 in a 0600 file in the state
// directory, a random 96-bit IV per value, and the secret's name as additional data (a value
// copied under another name does not decrypt).
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs'

export interface Sealed {
  iv: Uint8Array
  tag: Uint8Array
  data: Uint8Array
}

const KEY_BYTES = 32

/** Read the key file, or create it (0600) with a random key; refuses anything but 32 bytes. */
export function loadKey (file: string): Buffer {
  if (!existsSync(file)) {
    const key = randomBytes(KEY_BYTES)
    writeFileSync(file, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' })
    return key
  }
  chmodSync(file, 0o600)
  const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64')
  if (key.length !== KEY_BYTES) throw new Error(`the key file ${file} does not hold a base64 ${KEY_BYTES}-byte key`)
  return key
}

export function seal (key: Buffer, name: string, value: string): Sealed {
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', key, iv)
  cipher.setAAD(Buffer.from(name))
  const data = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()])
  return { iv, tag: cipher.getAuthTag(), data }
}

/** The plaintext, or a throw when the key, the name or the bytes are not the ones sealed. */
export function open (key: Buffer, name: string, sealed: Sealed): string {
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.iv)
  decipher.setAAD(Buffer.from(name))
  decipher.setAuthTag(sealed.tag)
  try {
    return Buffer.concat([decipher.update(sealed.data), decipher.final()]).toString('utf8')
  } catch {
    throw new Error(`secret "${name}" cannot be decrypted (a different key file, or damaged data)`)
  }
}
