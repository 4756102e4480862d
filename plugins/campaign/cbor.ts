// CBOR in and out of server functions (cbor-x). Decoding yields plain data only: maps with text keys
// become own-property objects (never prototypes), and tags such as dates or typed records are refused.
import { Encoder } from 'cbor-x'
import type { ErrorFormat } from '../../kernel/index.js'

const codec = new Encoder({ useRecords: false, mapsAsObjects: false })

export const CBOR_TYPE = 'application/cbor'

export function encodeCbor (value: unknown): Buffer {
  return Buffer.from(codec.encode(value))
}

/** Error bodies as CBOR {error}: the server functions' format, for everything under their prefix. */
export const CBOR_ERRORS: ErrorFormat = { type: CBOR_TYPE, encode: encodeCbor }

/** Decode one complete CBOR item into plain data; throws on malformed input or unsupported values. */
export function decodeCbor (bytes: Uint8Array): unknown {
  return plain(codec.decode(bytes))
}

function plain (value: unknown): unknown {
  if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) return value
  if (Array.isArray(value)) return value.map(plain)
  if (value instanceof Map) {
    return Object.fromEntries([...value].map(([key, item]) => {
      if (typeof key !== 'string') throw new TypeError('map keys must be text strings')
      return [key, plain(item)]
    }))
  }
  if (value instanceof Uint8Array) return value
  throw new TypeError(`unsupported CBOR value (${Object.prototype.toString.call(value).slice(8, -1)})`)
}
