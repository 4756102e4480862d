// Hostile HTTP requests for the listener fuzz test, drawn with fast-check from a seed: paths from a
// listener's route table with mutated parameters, query strings, methods, headers and bodies; sent
// with undici (which sends a path as written, `..` and bad percent-encoding included); and the check
// every answer must pass (no 5xx, errors as {"error": string, "code": CODE} in the format of their path).
import fc from 'fast-check'
import { Kind, OptionalKind, type TSchema } from '@sinclair/typebox'
import type { Agent } from 'undici'
import { decodeCbor, encodeCbor } from '../../plugins/campaign/cbor.js'

export interface FuzzRequest {
  method: string
  /** Path and query, as sent. */
  path: string
  headers: Record<string, string>
  body?: Buffer
  /** Who sends it: a name from the listener's credentials. */
  as: string
}

export interface FuzzAnswer {
  status: number
  type: string
  body: Buffer
}

/** Strings that break naive code: long, control characters, traversal, odd numbers, unicode. */
export const hostileText: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'grapheme', maxLength: 12 }),
  fc.string({ unit: 'binary', maxLength: 8 }),
  fc.constantFrom(101, 300, 2_000).chain(n => fc.constantFrom('x', 'é', '💥', '/').map(c => c.repeat(n))),
  fc.constantFrom('', ' ', '.', '..', '../../../../etc/passwd', '..\\..\\windows', '%2e%2e%2f%2e%2e%2fetc', '%00', '\u0000', '\r\n', 'a\nb', '\u202e', '\ud800', '\uffff',
    '-1', '0', '-0', '1.5', '1e309', '99999999999999999999999', 'NaN', 'Infinity', '0x10', 'null', 'true', '[]', '{}', '%', '%zz', '?', '#', '&', '=', '\\', '*', '$', '__proto__', 'constructor')
)

/** Numbers out of every range: negative, fractional, huge, not finite. */
const hostileNumber: fc.Arbitrary<number> = fc.oneof(
  fc.integer({ min: -5, max: 1_000 }),
  fc.constantFrom(-1, 0, 0.5, 1e9, 2 ** 31, 2 ** 53, -(2 ** 53), 1e308, Number.MAX_VALUE, Number.NaN, Number.POSITIVE_INFINITY),
  fc.double()
)

/** Any small JSON-like value, hostile at the leaves. */
export const hostileValue: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>(tie => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    hostileText,
    hostileNumber,
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(hostileText, tie('value'), { maxKeys: 4 })
  )
})).value

/** Bytes as they would be sent: percent-encoded except unreserved characters, or raw where undici lets them through. */
export function encodeSegment (text: string, raw = false): string {
  return [...Buffer.from(text, 'utf8')].map(byte => {
    const char = String.fromCharCode(byte)
    if (/[A-Za-z0-9\-._~]/.test(char) || (raw && byte > 0x20 && byte < 0x7f)) return char
    return `%${byte.toString(16).toUpperCase().padStart(2, '0')}`
  }).join('')
}

/** A path segment: a known good value of the parameter, or hostile text, encoded or raw. */
function segment (samples: readonly string[]): fc.Arbitrary<string> {
  const text = samples.length > 0 ? fc.oneof({ weight: 2, arbitrary: fc.constantFrom(...samples) }, { weight: 3, arbitrary: hostileText }) : hostileText
  return fc.tuple(text, fc.integer({ min: 0, max: 4 })).map(([value, mode]) => encodeSegment(value, mode === 0))
}

const QUERY_KEYS = ['limit', 'cursor', 'from', 'to', 'kind', 'key', 'points', 'group', 'software_type', 'software_version', 'state', 'q',
  'service', 'project', 'tail', 'follow', 'last_event_id', 'redirect_url', 'code', 'error', 'id', 'name']

const query: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constant('') },
  { weight: 6, arbitrary: fc.array(fc.tuple(fc.oneof(fc.constantFrom(...QUERY_KEYS), hostileText), fc.oneof(hostileText, hostileNumber.map(String))), { minLength: 1, maxLength: 4 })
    .map(pairs => `?${pairs.map(([k, v]) => `${encodeSegment(k)}=${encodeSegment(v)}`).join('&')}`) },
  { weight: 1, arbitrary: fc.constantFrom('?', '?&&=', '?=%zz', '?a=1&a=2&a=3', '?__proto__[x]=1', '?limit=1&limit=2', `?q=${'x'.repeat(10_000)}`) }
)

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']
const ODD_METHODS = ['PROPFIND', 'SEARCH', 'QUERY', 'FOO', 'get']

/** A header value undici will send: what it refuses (control characters, code points over 0xff) replaced. */
const headerValue: fc.Arbitrary<string> = hostileText.map(text => text.replace(/[^\t\x20-\x7e\x80-\xff]/g, '?'))

const CONTENT_TYPES = ['application/json', 'application/cbor', 'application/octet-stream', 'text/plain', 'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x', 'application/json; charset=utf-16', 'application/cbor; x=y', 'garbage', '']

/** A body with the content type it claims: JSON or CBOR (objects often with `fields`, the names the routes read), bytes, empty, or over the limits. */
export function bodies (fields: readonly string[]): fc.Arbitrary<Drawn['body']> {
  const object = fc.dictionary(fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...fields) }, hostileText), hostileValue, { maxKeys: 5 })
  const value = fc.oneof(object, hostileValue)
  const claimed = (natural: string): fc.Arbitrary<string> => fc.oneof({ weight: 5, arbitrary: fc.constant(natural) }, fc.constantFrom(...CONTENT_TYPES))
  return fc.oneof(
    { weight: 4, arbitrary: fc.constant({}) },
    { weight: 5, arbitrary: fc.tuple(value, claimed('application/json')).map(([v, type]) => ({ type, body: Buffer.from(JSON.stringify(v) ?? 'null') })) },
    { weight: 3, arbitrary: fc.tuple(value, claimed('application/cbor')).map(([v, type]) => ({ type, body: encodeCbor(v) })) },
    { weight: 2, arbitrary: fc.tuple(fc.uint8Array({ maxLength: 256 }), claimed('application/octet-stream')).map(([bytes, type]) => ({ type, body: Buffer.from(bytes) })) },
    { weight: 1, arbitrary: claimed('application/json').map(type => ({ type, body: Buffer.alloc(0) })) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom(300_000, 1_100_000), claimed('application/json')).map(([size, type]) => ({ type, body: Buffer.alloc(size, 0x61) })) }
  )
}

/** A request before the listener-wide mutations (query, extra headers, caller) are added. */
export interface Drawn {
  method: string
  path: string
  body: { type?: string, body?: Buffer }
  /** The caller, when the request only makes sense from one. */
  as?: string
  /** Headers of its own (a signature), besides the caller's. */
  headers?: Record<string, string>
}

export interface ListenerModel {
  /** The listener's routes (method and URL pattern), from the kernel. */
  routes: ReadonlyArray<{ method: string, url: string }>
  /** Known good values of path parameters, by parameter name. */
  samples: Record<string, readonly string[]>
  /** Headers that authenticate each caller (empty for anonymous). */
  credentials: Record<string, Record<string, string>>
  body: fc.Arbitrary<Drawn['body']>
  /** Extra header names this listener reads. */
  headers: readonly string[]
  /** The requests its clients make most (a server function with arguments of its schema, frames), drawn as often as the route table. */
  typical?: fc.Arbitrary<Drawn>
}

/** A request against one listener: a route from its table (each path equally) or a typical request, mutated, sent as one of its callers. */
export function requests (model: ListenerModel): fc.Arbitrary<FuzzRequest> {
  const methodsByUrl = new Map<string, string[]>()
  for (const { method, url } of model.routes) methodsByUrl.set(url, [...methodsByUrl.get(url) ?? [], method])
  const method = (own: string[]): fc.Arbitrary<string> => fc.oneof({ weight: 12, arbitrary: fc.constantFrom(...own) }, { weight: 3, arbitrary: fc.constantFrom(...METHODS) }, { weight: 1, arbitrary: fc.constantFrom(...ODD_METHODS) })
  const fromTable: fc.Arbitrary<Drawn> = fc.constantFrom(...methodsByUrl).chain(([url, methods]) => {
    const parts = url.split('/').map(part => part.startsWith(':')
      ? segment(model.samples[part.slice(1)] ?? [])
      : part === '*' ? fc.array(segment([]), { minLength: 1, maxLength: 3 }).map(s => `/${s.join('/')}`) : fc.constant(part))
    return fc.record({ method: method(methods), path: fc.tuple(...parts).map(s => s.join('/') === '' ? '/' : s.join('/')), body: model.body })
  })
  const extra = fc.dictionary(
    fc.oneof(fc.constantFrom('accept', 'accept-version', 'authorization', 'cookie', 'origin', 'x-forwarded-for', 'x-api-key', 'last-event-id', 'range', ...model.headers), fc.constantFrom('x-fuzz', 'x-a')),
    fc.oneof({ weight: 40, arbitrary: headerValue }, { weight: 1, arbitrary: fc.constant('h'.repeat(20_000)) }),
    { maxKeys: 2 }
  )
  const drawn = model.typical === undefined ? fromTable : fc.oneof(fromTable, model.typical)
  return fc.record({ drawn, query, extra, as: fc.constantFrom(...Object.keys(model.credentials)) }).map(({ drawn, query, extra, as }) => {
    const caller = drawn.as ?? as
    const headers: Record<string, string> = { ...model.credentials[caller], ...drawn.headers, ...extra }
    if (drawn.body.type !== undefined && drawn.body.type !== '') headers['content-type'] = drawn.body.type
    return { method: drawn.method, path: `${drawn.path}${query}`, headers, body: drawn.body.body, as: caller }
  })
}

/**
 * Arguments for a TypeBox schema: valid ones half the time (every constraint kept, text of words), which
 * reach the handler; otherwise the right shape with hostile leaves and, now and then, a wrong type.
 */
export function fromSchema (schema: TSchema): fc.Arbitrary<unknown> {
  return fc.oneof(fitting(schema, 0, false), fitting(schema, 0, true))
}

const instants = fc.date({ min: new Date('2000-01-01'), max: new Date('2040-01-01'), noInvalidDate: true }).map(d => d.toISOString())

/** Valid text for a string schema (of the field `key`): a day or an instant when its pattern, description or name asks for one, else what the pattern matches, else words. */
function validText (s: Record<string, unknown>, max: number, key: string): fc.Arbitrary<string> {
  const pattern = typeof s.pattern === 'string' ? new RegExp(s.pattern) : undefined
  const description = typeof s.description === 'string' ? s.description : ''
  if (pattern?.test('2026-05-17') === true || description.startsWith('YYYY-MM-DD')) return instants.map(iso => iso.slice(0, 10))
  if (pattern?.test('2026-05-17T10:20:30.000Z') === true || description.includes('ISO 8601') || key.endsWith('_at')) return instants
  if (pattern !== undefined) return fc.stringMatching(pattern)
  return fc.lorem({ maxCount: Math.max(1, Math.min(40, Math.floor(max / 8))), mode: 'sentences' })
}

function fitting (schema: TSchema, depth: number, hostile: boolean, key = ''): fc.Arbitrary<unknown> {
  const s = schema as TSchema & Record<string, unknown>
  const number = (key: string, fallback: number): number => typeof s[key] === 'number' ? s[key] : fallback
  const child = (sub: TSchema, name = ''): fc.Arbitrary<unknown> => hostile ? fc.oneof({ weight: 12, arbitrary: fitting(sub, depth + 1, true, name) }, { weight: 1, arbitrary: hostileValue }) : fitting(sub, depth + 1, false, name)
  const leaf = (good: fc.Arbitrary<unknown>, bad: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> => hostile ? fc.oneof({ weight: 2, arbitrary: good }, bad) : good
  switch (schema[Kind]) {
    case 'Object': {
      const properties = Object.entries(s.properties as Record<string, TSchema>)
      const requiredKeys = properties.filter(([, value]) => value[OptionalKind] === undefined).map(([name]) => name)
      return fc.record(Object.fromEntries(properties.map(([name, value]) => [name, child(value, name)])), { requiredKeys })
    }
    case 'String': {
      const [min, max] = [number('minLength', 0), number('maxLength', 400)]
      const good = validText(s, max, key).map(text => typeof s.pattern === 'string' ? text : text.slice(0, max).padEnd(min, 'x')).filter(text => text.length >= min && text.length <= max)
      return leaf(good, fc.oneof(hostileText, fc.constant('w '.repeat(Math.ceil((max + 1) / 2)))))
    }
    case 'Integer':
    case 'Number': {
      const min = Math.max(Math.ceil(number('minimum', -10)), -1e9)
      const max = Math.min(Math.floor(number('maximum', 10_000)), 1e9)
      return leaf(fc.integer({ min, max: Math.max(min, max) }), hostileNumber)
    }
    case 'Boolean': return fc.boolean()
    case 'Null': return fc.constant(null)
    case 'Literal': return fc.constant(s.const)
    case 'Uint8Array': return fc.uint8Array({ maxLength: 64 })
    case 'Array': {
      const min = number('minItems', 0)
      return fc.array(child(s.items as TSchema), { minLength: min, maxLength: Math.max(min, Math.min(number('maxItems', 8), depth > 1 ? 2 : 8)) })
    }
    case 'Union': return fc.oneof(...(s.anyOf as TSchema[]).map(option => fitting(option, depth, hostile, key)))
    default: return hostileValue
  }
}

/** Send one request; a stream (server-sent events) is closed once its head arrived. */
export async function send (dispatcher: Agent, base: URL, fuzz: FuzzRequest): Promise<FuzzAnswer> {
  const answer = await dispatcher.request({
    origin: base.origin,
    path: fuzz.path,
    method: fuzz.method,
    headers: fuzz.headers,
    body: fuzz.body,
    headersTimeout: 20_000,
    bodyTimeout: 20_000
  })
  const type = String(answer.headers['content-type'] ?? '')
  if (type.startsWith('text/event-stream')) {
    answer.body.on('error', () => {}).destroy()
    return { status: answer.statusCode, type, body: Buffer.alloc(0) }
  }
  return { status: answer.statusCode, type, body: Buffer.from(await answer.body.arrayBuffer()) }
}

/** What is wrong with an error answer's body, if anything: it must be exactly {"error": string, "code": CODE}, in JSON or CBOR. */
export function errorBodyProblem (answer: FuzzAnswer, format: 'json' | 'cbor'): string | undefined {
  const expected = format === 'cbor' ? 'application/cbor' : 'application/json'
  if (!answer.type.startsWith(expected)) return `content type ${JSON.stringify(answer.type)}, not ${expected}`
  let value: unknown
  try {
    value = format === 'cbor' ? decodeCbor(answer.body) : JSON.parse(answer.body.toString('utf8'))
  } catch (err) {
    return `an error body that is not ${format}: ${(err as Error).message}`
  }
  const keys = typeof value === 'object' && value !== null ? Object.keys(value).sort() : []
  const { error, code } = value as { error?: unknown, code?: unknown }
  if (keys.join() !== 'code,error' || typeof error !== 'string' || typeof code !== 'string' || !/^[A-Z][A-Z0-9_]*$/.test(code)) return `an error body that is not {"error": string, "code": CODE}: ${JSON.stringify(value)?.slice(0, 200)}`
  return undefined
}

/** One line describing a request, for a report: long parts cut. */
export function describe (fuzz: FuzzRequest): string {
  const cut = (text: string): string => text.length > 160 ? `${text.slice(0, 160)}…(${text.length})` : text
  const headers = Object.entries(fuzz.headers).map(([k, v]) => `${k}: ${cut(v)}`).join('; ')
  return `${fuzz.method} ${cut(fuzz.path)} as ${fuzz.as} [${cut(headers)}] body ${fuzz.body === undefined ? 'none' : `${fuzz.body.length} bytes ${JSON.stringify(cut(fuzz.body.toString('latin1')))}`}`
}
