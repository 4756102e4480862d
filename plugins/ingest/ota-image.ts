// The signed firmware image of docs/firmware-updates.md: a 64-byte header (magic "BTIM", sizes, load
// address, version, software type), the payload, and an Ed25519 signature over both. Built by
// `berth ota sign`, checked by `berth ota verify` and by the server when it has the fleet's public key.
// The fleet's public key is 32 raw bytes, written as 64 hex characters (or given as a PEM key).
import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { resolve } from 'node:path'

export const IMAGE_MAGIC = 0x4D495442
export const HEADER_SIZE = 64
export const IMAGE_FORMAT = 1
export const SIGNATURE_SIZE = 64
/** Bytes of the version and software type fields (NUL-padded). */
export const FIELD_SIZE = 24

export interface ImageHeader {
  payloadSize: number
  loadAddress: number
  version: string
  softwareType: string
}

/** An image, key or field that is not what it must be; the message says what. */
export class ImageError extends Error {}

/** The 24-byte NUL-padded field of `text`, refused when empty, too long, or holding control characters. */
function field (name: string, text: string): Buffer {
  const bytes = Buffer.from(text, 'utf8')
  if (bytes.length === 0 || bytes.length > FIELD_SIZE) throw new ImageError(`${name} "${text}" must be 1-${FIELD_SIZE} bytes, it is ${bytes.length}`)
  if (/\p{Cc}/u.test(text)) throw new ImageError(`${name} must not hold control characters`)
  return Buffer.concat([bytes, Buffer.alloc(FIELD_SIZE - bytes.length)])
}

/** The text of a NUL-padded field, or undefined when it is empty or has bytes after its padding began. */
function fieldText (bytes: Buffer): string | undefined {
  const end = bytes.indexOf(0)
  const used = end < 0 ? bytes : bytes.subarray(0, end)
  if (used.length === 0 || (end >= 0 && bytes.subarray(end).some(b => b !== 0))) return undefined
  return used.toString('utf8')
}

/** The signed image of `payload`. */
export function buildImage (header: Omit<ImageHeader, 'payloadSize'>, payload: Buffer, privateKey: KeyObject): Buffer {
  if (payload.length === 0) throw new ImageError('the payload is empty')
  if (!Number.isInteger(header.loadAddress) || header.loadAddress < 0 || header.loadAddress > 0xffffffff) throw new ImageError(`load address ${header.loadAddress} is not a 32-bit address`)
  const head = Buffer.alloc(HEADER_SIZE)
  head.writeUInt32LE(IMAGE_MAGIC, 0)
  head.writeUInt16LE(HEADER_SIZE, 4)
  head.writeUInt16LE(IMAGE_FORMAT, 6)
  head.writeUInt32LE(payload.length, 8)
  head.writeUInt32LE(header.loadAddress, 12)
  field('version', header.version).copy(head, 16)
  field('software type', header.softwareType).copy(head, 40)
  const signed = Buffer.concat([head, payload])
  return Buffer.concat([signed, sign(null, signed, privateKey)])
}

/** The header of an image whose layout holds together (its signature not checked). */
export function parseImage (image: Buffer): ImageHeader {
  if (image.length < HEADER_SIZE + SIGNATURE_SIZE) throw new ImageError(`${image.length} bytes are too few for a signed image (header and signature alone are ${HEADER_SIZE + SIGNATURE_SIZE})`)
  if (image.readUInt32LE(0) !== IMAGE_MAGIC) throw new ImageError('not a signed image: its first bytes are not "BTIM"')
  const headerSize = image.readUInt16LE(4)
  const format = image.readUInt16LE(6)
  if (headerSize !== HEADER_SIZE || format !== IMAGE_FORMAT) throw new ImageError(`header size ${headerSize} and format ${format}; this reads header size ${HEADER_SIZE}, format ${IMAGE_FORMAT}`)
  const payloadSize = image.readUInt32LE(8)
  if (HEADER_SIZE + payloadSize + SIGNATURE_SIZE !== image.length) throw new ImageError(`the header says ${payloadSize} payload bytes, the image holds ${image.length - HEADER_SIZE - SIGNATURE_SIZE}`)
  if (payloadSize === 0) throw new ImageError('the payload is empty')
  const version = fieldText(image.subarray(16, 40))
  const softwareType = fieldText(image.subarray(40, 64))
  if (version === undefined || softwareType === undefined) throw new ImageError(`the header's ${version === undefined ? 'version' : 'software type'} is not a NUL-padded text`)
  return { payloadSize, loadAddress: image.readUInt32LE(12), version, softwareType }
}

/** The header of an image signed by `publicKey`; refused when its layout or its signature is wrong. */
export function verifyImage (image: Buffer, publicKey: KeyObject): ImageHeader {
  const header = parseImage(image)
  const end = image.length - SIGNATURE_SIZE
  if (!verify(null, image.subarray(0, end), publicKey, image.subarray(end))) throw new ImageError('the signature does not verify with the fleet\'s public key')
  return header
}

/** A new key pair: the private key as PKCS#8 PEM, the public key as 64 hex characters. */
export function generateFleetKey (): { privatePem: string, publicHex: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519')
  return { privatePem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(), publicHex: rawPublicKey(publicKey).toString('hex') }
}

/** The 32 raw bytes of an Ed25519 public key. */
export function rawPublicKey (key: KeyObject): Buffer {
  return Buffer.from(key.export({ format: 'jwk' }).x ?? '', 'base64url')
}

const ed25519 = (key: KeyObject, what: string): KeyObject => {
  if (key.asymmetricKeyType !== 'ed25519') throw new ImageError(`${what} is a${key.asymmetricKeyType === undefined ? ' symmetric' : `n ${key.asymmetricKeyType}`} key, not an Ed25519 one`)
  return key
}

/** An Ed25519 public key from 64 hex characters or a PEM public (or private) key. */
export function parsePublicKey (text: string, what: string): KeyObject {
  const trimmed = text.trim()
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(trimmed, 'hex').toString('base64url') }, format: 'jwk' })
  if (!trimmed.startsWith('-----BEGIN')) throw new ImageError(`${what} is neither 64 hex characters nor a PEM key`)
  try {
    return ed25519(createPublicKey(trimmed), what)
  } catch (err) {
    if (err instanceof ImageError) throw err
    throw new ImageError(`${what} is not a readable PEM key (${(err as Error).message})`)
  }
}

/**
 * The fleet's public key as an operator gives it (`[ingest].ota_public_key`, `berth ota verify --pub`):
 * 64 hex characters, or the path (from `cwd`) of a file holding them or a PEM key; undefined when empty.
 */
export function fleetPublicKey (given: string, cwd: string): KeyObject | undefined {
  if (given.trim() === '') return undefined
  if (/^[0-9a-fA-F]{64}$/.test(given.trim())) return parsePublicKey(given, 'the public key')
  const path = resolve(cwd, given)
  if (!existsSync(path)) throw new ImageError(`public key ${given} is neither 64 hex characters nor a file that exists`)
  return parsePublicKey(readFileSync(path, 'utf8'), given)
}

/** An Ed25519 private key from PEM. */
export function parsePrivateKey (pem: string, what: string): KeyObject {
  let key: KeyObject
  try {
    key = createPrivateKey(pem)
  } catch (err) {
    throw new ImageError(`${what} is not a PEM private key (${(err as Error).message})`)
  }
  return ed25519(key, what)
}
