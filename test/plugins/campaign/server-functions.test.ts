// The server-function layer on its own (no IDP), in a kernel: CBOR in and out, the middleware's
// 404/401/403, argument validation, body limit, content type, malformed CBOR, plain-data decoding,
// hidden 500 details, and CBOR errors for everything under /api that no function answers.
import t, { type Test } from 'tap'
import { encode } from 'cbor-x'
import { definePlugin } from '../../../kernel/index.js'
import { Type } from '../../../kernel/schema.js'
import { accessControl } from '../../../plugins/campaign/access.js'
import { CBOR_ERRORS, decodeCbor, encodeCbor } from '../../../plugins/campaign/cbor.js'
import { callServerFunction, ServerFunctionError } from '../../../plugins/campaign/client.js'
import { functionRoutes } from '../../../plugins/campaign/function-routes.js'
import { FunctionRegistry, serverFunction } from '../../../plugins/campaign/functions.js'
import type { Role } from '../../../plugins/campaign/roles.js'
import { SessionAuth } from '../../../plugins/campaign/session-auth.js'
import { SessionCookie } from '../../../plugins/campaign/session-cookie.js'
import { MemorySessions } from '../../../plugins/campaign/sessions.js'
import { capturedLogger, testKernel } from '../../support/kernel.js'
import { rawRequest } from '../../support/raw-http.js'

const LIMIT = 1024

async function server (t: Test): Promise<{ url: URL, cookieFor: (role: Role) => Promise<string>, logs: () => string }> {
  const { logger, lines } = capturedLogger()
  const registry = new FunctionRegistry()
  registry.register([
    serverFunction({ name: 'echo', module: 'test', access: ['staff', 'volunteer', 'readonly'], args: Type.Object({ text: Type.String(), times: Type.Integer({ minimum: 1, default: 1 }) }, { additionalProperties: false }), handler: ({ text, times }, { session }) => ({ text: text.repeat(times), by: session?.sub }) }),
    serverFunction({ name: 'staff-only', module: 'test', access: ['staff'], args: Type.Object({}), handler: () => 'ok' }),
    serverFunction({ name: 'hello', module: 'test', access: 'public', args: Type.Object({}), handler: (_a, { session }) => ({ signedIn: session !== undefined }) }),
    serverFunction({ name: 'broken', module: 'test', access: ['staff'], args: Type.Object({}), handler: () => { throw new Error('secret detail /etc/passwd') } }),
    serverFunction({ name: 'bytes', module: 'test', access: ['staff'], args: Type.Object({ data: Type.Uint8Array() }), handler: ({ data }) => ({ length: data.length }) })
  ])
  const sessions = new MemorySessions({ idleMs: 60_000, maxSessions: 10 })
  const cookie = new SessionCookie({ secure: false })
  const auth = new SessionAuth({ sessions, cookie })
  const functions = definePlugin({
    name: 'functions',
    version: '1.0.0',
    listeners: [{ name: 'app', port: 6882 }],
    setup (ctx) {
      ctx.http('app', async app => {
        app.addHook('onRequest', accessControl(auth, registry))
        await app.register(functionRoutes({ registry, auth, maxRequestBytes: LIMIT }))
      }, { prefix: '/api', errors: CBOR_ERRORS })
    }
  })
  const kernel = await testKernel(t, { plugins: [functions], logger })
  return {
    logs: lines,
    url: kernel.url('app'),
    cookieFor: async role => cookie.issue(await sessions.create({ sub: `${role}-1`, email: '', name: '', role, access_token: '', refresh_token: '', id_token: '' })).split(';')[0]
  }
}

async function post (url: URL, name: string, body: Uint8Array | string, headers: Record<string, string> = {}): Promise<{ status: number, type: string, body: unknown }> {
  const response = await fetch(new URL(`/api/${name}`, url), { method: 'POST', headers: { 'content-type': 'application/cbor', ...headers }, body })
  const bytes = new Uint8Array(await response.arrayBuffer())
  return { status: response.status, type: response.headers.get('content-type') ?? '', body: bytes.length > 0 ? decodeCbor(bytes) : undefined }
}

t.test('a call: CBOR arguments with defaults filled in, CBOR result', async t => {
  const { url, cookieFor } = await server(t)
  const headers = { cookie: await cookieFor('volunteer') }
  t.same(await callServerFunction('echo', { text: 'ab' }, { baseUrl: url, headers }), { text: 'ab', by: 'volunteer-1' })
  t.same(await callServerFunction('echo', { text: 'ab', times: 3 }, { baseUrl: url, headers }), { text: 'ababab', by: 'volunteer-1' })
  const raw = await post(url, 'bytes', encodeCbor({ data: new Uint8Array([1, 2, 3]) }), { cookie: await cookieFor('staff') })
  t.same(raw, { status: 200, type: 'application/cbor', body: { length: 3 } }, 'byte strings arrive as bytes')
})

t.test('statuses: 404 unknown, 401 without session, 403 for a role not allowed, public without session', async t => {
  const { url, cookieFor } = await server(t)
  const call = async (name: string, args: object, cookie?: string): Promise<number> => {
    try {
      await callServerFunction(name, args, { baseUrl: url, headers: cookie === undefined ? {} : { cookie } })
      return 200
    } catch (err) {
      t.type(err, ServerFunctionError)
      return (err as ServerFunctionError).status
    }
  }
  t.equal(await call('nope', {}, await cookieFor('admin')), 404)
  t.equal(await call('staff-only', {}), 401)
  t.equal(await call('staff-only', {}, 'campaign_session=forged.signature'), 401, 'a forged cookie is no session')
  t.equal(await call('staff-only', {}, await cookieFor('volunteer')), 403)
  t.equal(await call('staff-only', {}, await cookieFor('readonly')), 403)
  t.equal(await call('staff-only', {}, await cookieFor('staff')), 200)
  t.equal(await call('staff-only', {}, await cookieFor('admin')), 200, 'admin passes every role check')
  t.same(await callServerFunction('hello', {}, { baseUrl: url }), { signedIn: false })
  const denied = await post(url, 'staff-only', encodeCbor({}))
  t.same(denied, { status: 401, type: 'application/cbor', body: { error: 'sign in first: no valid session', code: 'BERTH_UNAUTHORIZED' } }, 'errors are CBOR {error}')
  const forbidden = await post(url, 'staff-only', encodeCbor({}), { cookie: await cookieFor('volunteer') })
  t.same(forbidden.body, { error: 'role volunteer may not call staff-only', code: 'BERTH_ROLE_TOO_LOW' })
})

t.test('bad requests: arguments, malformed CBOR, unsupported values, size, content type', async t => {
  const { url, cookieFor } = await server(t)
  const headers = { cookie: await cookieFor('staff') }
  const invalid = await post(url, 'echo', encodeCbor({ text: 5 }), headers)
  t.same(invalid, { status: 400, type: 'application/cbor', body: { error: 'invalid arguments: /text: Expected string', code: 'BERTH_BAD_REQUEST' } })
  t.equal((await post(url, 'echo', encodeCbor({ text: 'x', extra: 1 }), headers)).status, 400, 'unknown arguments refused')
  t.equal((await post(url, 'echo', encodeCbor([1, 2]), headers)).status, 400, 'arguments must be a map')
  const malformed = await post(url, 'echo', new Uint8Array([0xa1, 0x61]), headers)
  t.equal(malformed.status, 400)
  t.match(malformed.body, { error: /^malformed CBOR body: / })
  t.equal((await post(url, 'echo', new Uint8Array([0xff]), headers)).status, 400, 'a stray break code')
  t.equal((await post(url, 'echo', new Uint8Array(0), headers)).status, 400, 'an empty body')
  t.equal((await post(url, 'echo', Buffer.concat([encodeCbor({ text: 'x' }), Buffer.from([0])]), headers)).status, 400, 'trailing bytes')
  t.match((await post(url, 'echo', encode({ text: new Date() }), headers)).body, { error: /unsupported CBOR value \(Date\)/ })
  t.match((await post(url, 'echo', new Uint8Array([0xa1, 0x01, 0x02]), headers)).body, { error: /map keys must be text strings/ })
  const tooLarge = await post(url, 'echo', encodeCbor({ text: 'x'.repeat(LIMIT) }), headers)
  t.same(tooLarge, { status: 413, type: 'application/cbor', body: { error: `the request body is larger than ${LIMIT} bytes, the most echo takes`, code: 'BERTH_PAYLOAD_TOO_LARGE' } })
  const json = await post(url, 'echo', JSON.stringify({ text: 'x' }), { ...headers, 'content-type': 'application/json' })
  t.same(json, { status: 415, type: 'application/cbor', body: { error: 'unsupported content type: application/json', code: 'BERTH_UNSUPPORTED_MEDIA_TYPE' } })
  const none = await fetch(new URL('/api/echo', url), { method: 'POST', headers })
  t.equal(none.status, 415, 'no content type at all')
})

t.test('unauthenticated bodies are not read: 401 comes before 413 and 400', async t => {
  const { url } = await server(t)
  t.equal((await post(url, 'staff-only', new Uint8Array(LIMIT * 4))).status, 401)
  t.equal((await post(url, 'staff-only', new Uint8Array([0xff]))).status, 401)
})

t.test('every error under /api is CBOR {error}: other methods, unknown routes, bad URLs, requests node refuses', async t => {
  const { url, cookieFor } = await server(t)
  const cbor = async (response: Response): Promise<[number, string | null, unknown]> =>
    [response.status, response.headers.get('content-type'), decodeCbor(new Uint8Array(await response.arrayBuffer()))]
  const get = await fetch(new URL('/api/echo', url), { headers: { cookie: await cookieFor('staff') } })
  t.equal(get.headers.get('allow'), 'POST')
  t.same(await cbor(get), [405, 'application/cbor', { error: 'server functions are called with POST, not GET', code: 'BERTH_METHOD_NOT_ALLOWED' }])
  t.same(await cbor(await fetch(new URL('/api/echo', url), { method: 'DELETE' })), [405, 'application/cbor', { error: 'server functions are called with POST, not DELETE', code: 'BERTH_METHOD_NOT_ALLOWED' }])
  t.same(await cbor(await fetch(new URL('/api/nope', url))), [404, 'application/cbor', { error: 'no server function "nope"', code: 'BERTH_NO_SUCH_FUNCTION' }])
  t.same(await cbor(await fetch(new URL('/api/', url), { method: 'POST' })), [404, 'application/cbor', { error: 'no server function ""', code: 'BERTH_NO_SUCH_FUNCTION' }])
  for (const path of ['/api', '/api/echo/more']) {
    t.same(await cbor(await fetch(new URL(path, url), { method: 'POST' })), [404, 'application/cbor', { error: `no route for POST ${path}`, code: 'BERTH_NO_ROUTE' }], path)
  }
  t.same(await cbor(await fetch(new URL(`/api/${'x'.repeat(101)}`, url), { method: 'POST' })), [400, 'application/cbor', { error: 'a path parameter is longer than 100 characters', code: 'BERTH_BAD_REQUEST' }])
  t.same(await cbor(await fetch(new URL('/api/%zz', url), { method: 'POST' })), [400, 'application/cbor', { error: 'the URL path is not valid percent-encoding', code: 'BERTH_BAD_REQUEST' }])
  const refused: Array<[string, number, RegExp]> = [
    [`POST /api/echo HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431, /^the request headers are too large/],
    [`POST /api/${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`, 414, /^the URL is too long/],
    ['NOPE /api/echo HTTP/1.1\r\nHost: x\r\n\r\n', 400, /^malformed HTTP request: /]
  ]
  for (const [request, status, error] of refused) {
    const answer = await rawRequest(url, request)
    t.match([answer.status, answer.headers['content-type'], decodeCbor(answer.body)], [status, 'application/cbor', { error }], `${status} before routing`)
  }
  const outside = await fetch(new URL('/elsewhere', url))
  t.same([outside.status, await outside.json()], [404, { error: 'no route for GET /elsewhere', code: 'BERTH_NO_ROUTE' }], 'JSON outside /api')
})

t.test('a failing handler answers 500 without its details, which go to the log', async t => {
  const { url, cookieFor, logs } = await server(t)
  t.same(await post(url, 'broken', encodeCbor({}), { cookie: await cookieFor('staff') }), { status: 500, type: 'application/cbor', body: { error: 'internal server error', code: 'BERTH_INTERNAL' } })
  const failed = logs().trim().split('\n').map(line => JSON.parse(line) as { msg: string }).find(entry => entry.msg === 'request failed')
  t.match(failed, { path: '/api/broken', err: { message: 'secret detail /etc/passwd' } })
})

t.test('decoding gives plain data: a __proto__ key is an own property, never a prototype', async t => {
  const decoded = decodeCbor(new Uint8Array([0xa1, 0x69, ...Buffer.from('__proto__'), 0xa1, 0x61, 0x78, 0x01])) as Record<string, unknown>
  t.equal(Object.getPrototypeOf(decoded), Object.prototype)
  t.ok(Object.hasOwn(decoded, '__proto__'))
  t.equal((decoded as { x?: number }).x, undefined)
})

t.test('the registry refuses a name registered twice', async t => {
  const registry = new FunctionRegistry()
  const fn = serverFunction({ name: 'generate-briefing', module: 'a', access: ['staff'], args: Type.Object({}), handler: () => 1 })
  t.throws(() => { registry.register([fn, { ...fn, module: 'b' }]) }, /server function "generate-briefing" is registered twice/)
})
