// callServerFunction: call a campaign server function (POST /api/{name}, CBOR both ways) from the web UI
// (same origin, the browser's session cookie) or from another program (baseUrl plus a Cookie header).
import { Encoder } from 'cbor-x'

const codec = new Encoder({ useRecords: false, mapsAsObjects: true })
const CBOR_TYPE = 'application/cbor'

/** A failed call: the HTTP status and the server's `error` message. */
export class ServerFunctionError extends Error {
  readonly status: number
  /** The answer's stable code (docs/api.md, Error codes), to branch on instead of the message's words. */
  readonly code: string

  constructor (status: number, message: string, code = '') {
    super(message)
    this.name = 'ServerFunctionError'
    this.status = status
    this.code = code
  }
}

export interface CallOptions {
  /** The application's base URL; omit in the browser (same origin). */
  baseUrl?: string | URL
  /** Extra request headers, e.g. `{ cookie: 'campaign_session=…' }` outside a browser. */
  headers?: Record<string, string>
}

export async function callServerFunction<T = unknown> (name: string, args: object = {}, options: CallOptions = {}): Promise<T> {
  const path = `/api/${encodeURIComponent(name)}`
  const response = await fetch(options.baseUrl === undefined ? path : new URL(path, options.baseUrl), {
    method: 'POST',
    headers: { 'content-type': CBOR_TYPE, accept: CBOR_TYPE, ...options.headers },
    body: codec.encode(args),
    credentials: 'same-origin'
  })
  const bytes = new Uint8Array(await response.arrayBuffer())
  const type = response.headers.get('content-type') ?? ''
  const body: unknown = type.startsWith(CBOR_TYPE) && bytes.length > 0 ? codec.decode(bytes) : undefined
  if (!response.ok) {
    const answer = typeof body === 'object' && body !== null ? body as { error?: unknown, code?: unknown } : {}
    const message = typeof answer.error === 'string' ? answer.error : `HTTP ${response.status}`
    throw new ServerFunctionError(response.status, message, typeof answer.code === 'string' ? answer.code : '')
  }
  return body as T
}
