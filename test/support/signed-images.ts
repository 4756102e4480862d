// Signed firmware images for the firmware tests (docs/firmware-updates.md): the 64-byte header, the
// payload and an Ed25519 signature over both, made with node:crypto, and the raw 32-byte public key
// the device is built with.
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto'

export interface ImageFields {
  version: string
  softwareType: string
  loadAddress: number
}

/** A fleet key pair: the private key for signing, the public key's 32 raw bytes for the device. */
export function fleetKey (): { privateKey: KeyObject, publicRaw: Buffer } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519')
  return { privateKey, publicRaw: Buffer.from(publicKey.export({ format: 'jwk' }).x ?? '', 'base64url') }
}

/** The signed image of `payload`. */
export function signImage (payload: Buffer, fields: ImageFields, privateKey: KeyObject): Buffer {
  const header = Buffer.alloc(64)
  header.writeUInt32LE(0x4D495442, 0) // "BTIM"
  header.writeUInt16LE(64, 4)
  header.writeUInt16LE(1, 6)
  header.writeUInt32LE(payload.length, 8)
  header.writeUInt32LE(fields.loadAddress, 12)
  header.write(fields.version, 16, 24, 'utf8')
  header.write(fields.softwareType, 40, 24, 'utf8')
  const signed = Buffer.concat([header, payload])
  return Buffer.concat([signed, sign(null, signed, privateKey)])
}
