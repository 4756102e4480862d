// Compression of text answers (`compress = true`): brotli when the client accepts it, else gzip, for
// textual content types of at least MIN_LENGTH bytes (or of unknown length) that the service did not
// encode itself. Not for HEAD, 204, 206, 304 or event streams (compressed, their events would wait
// for a block to fill). The answer's length goes (it is chunked now), its ETag becomes weak and Vary
// names Accept-Encoding, as Caddy's `encode` does.
import { constants, createBrotliCompress, createGzip, type BrotliCompress, type Gzip } from 'node:zlib'

export type Encoding = 'br' | 'gzip'

/** Smaller answers gain too little to be worth it. */
const MIN_LENGTH = 512
const TEXTUAL = /^\s*(text\/|application\/(json|javascript|ecmascript|xml|x-javascript|manifest\+json|[\w.-]+\+(json|xml))|image\/svg\+xml)/i
const EVENT_STREAM = /^\s*text\/event-stream/i

/** The encodings of an Accept-Encoding value the client takes (q > 0), brotli first. */
function accepted (acceptEncoding: string): Encoding | undefined {
  let gzip = false
  for (const part of acceptEncoding.toLowerCase().split(',')) {
    const [token, ...params] = part.split(';').map(p => p.trim())
    const q = params.find(p => p.startsWith('q='))
    if (q !== undefined && !(Number(q.slice(2)) > 0)) continue
    if (token === 'br') return 'br'
    if (token === 'gzip' || token === '*') gzip = true
  }
  return gzip ? 'gzip' : undefined
}

function one (value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value
}

/** The encoding for this answer to this request, if it is to be compressed. */
export function encodingFor (method: string, acceptEncoding: string | undefined, status: number, headers: Record<string, string | string[]>): Encoding | undefined {
  if (acceptEncoding === undefined || method === 'HEAD' || status < 200 || status === 204 || status === 206 || status === 304) return undefined
  if (headers['content-encoding'] !== undefined || headers['content-range'] !== undefined) return undefined
  const type = one(headers['content-type']) ?? ''
  if (!TEXTUAL.test(type) || EVENT_STREAM.test(type)) return undefined
  const length = one(headers['content-length'])
  if (length !== undefined && Number(length) < MIN_LENGTH) return undefined
  return accepted(acceptEncoding)
}

/** The answer's headers once encoded: no length, the encoding named, Vary and a weak ETag. */
export function encodedHeaders (headers: Record<string, string | string[]>, encoding: Encoding): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = { ...headers, 'content-encoding': encoding }
  delete out['content-length']
  const vary = one(headers.vary)
  if (vary === undefined) out.vary = 'accept-encoding'
  else if (!/(^|,)\s*(accept-encoding|\*)\s*(,|$)/i.test(vary)) out.vary = `${vary}, accept-encoding`
  const etag = one(headers.etag)
  if (etag !== undefined && !etag.startsWith('W/')) out.etag = `W/${etag}`
  return out
}

/** A stream that encodes what is written to it. */
export function encoder (encoding: Encoding): BrotliCompress | Gzip {
  return encoding === 'br'
    ? createBrotliCompress({ params: { [constants.BROTLI_PARAM_QUALITY]: 4, [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT } })
    : createGzip({ level: 6 })
}
