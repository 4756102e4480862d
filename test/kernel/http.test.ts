// Listeners: the {"error"} format for every failure (a path parameter too long included), in JSON or
// a plugin's format for its prefix, node's refusals before routing, body limits, health and metrics on
// control.
import t from 'tap'
import { connect } from 'node:net'
import type { FastifyPluginAsync } from 'fastify'
import { definePlugin, NotFound, Forbidden } from '../../kernel/index.js'
import { Type } from '../../kernel/schema.js'
import { capturedLogger, testKernel } from '../support/kernel.js'
import { pollUntil } from '../support/poll.js'
import { rawRequest } from '../support/raw-http.js'

const demo = definePlugin({
  name: 'demo',
  version: '2.0.0',
  listeners: [{ name: 'public', port: 6890 }],
  setup (ctx) {
    ctx.http('public', async app => {
      app.get('/missing', async () => { throw new NotFound('device 42 not found') })
      app.get('/forbidden', async () => { throw new Forbidden('viewer may not delete') })
      app.get('/crash', async () => { throw new Error('database password=hunter2 leaked') })
      app.get('/things/:name', async request => request.params)
      app.post('/echo', {
        schema: { body: Type.Object({ n: Type.Integer() }) }
      }, async request => request.body)
    }, { prefix: '/v1' })
  }
})

t.test('errors are {"error": "..."} with the right status', async t => {
  const { logger, lines } = capturedLogger()
  const kernel = await testKernel(t, { plugins: [demo], logger, config: { server: { listeners: { control: { host: '127.0.0.1', port: 0 }, public: { host: '127.0.0.1', port: 0, body_limit: 64 } } } } })
  const base = kernel.url('public')
  const get = async (path: string, init?: RequestInit): Promise<[number, unknown]> => {
    const response = await fetch(new URL(path, base), init)
    return [response.status, await response.json()]
  }
  t.same(await get('/v1/missing'), [404, { error: 'device 42 not found', code: 'BERTH_NOT_FOUND' }])
  t.same(await get('/v1/forbidden'), [403, { error: 'viewer may not delete', code: 'BERTH_FORBIDDEN' }])
  t.same(await get('/v1/crash'), [500, { error: 'internal server error', code: 'BERTH_INTERNAL' }])
  t.match(lines(), /database password=hunter2 leaked/, 'the cause of a 500 is logged')
  t.same(await get('/v1/nothing'), [404, { error: 'no route for GET /v1/nothing', code: 'BERTH_NO_ROUTE' }])
  t.same(await get(`/v1/things/${'x'.repeat(100)}`), [200, { name: 'x'.repeat(100) }])
  t.same(await get(`/v1/things/${'x'.repeat(101)}`), [400, { error: 'a path parameter is longer than 100 characters', code: 'BERTH_BAD_REQUEST' }], 'not an unknown route')
  t.same(await get('/v1/forbidden?a=1&b=2&a=3'), [400, { error: 'invalid querystring: a is given more than once', code: 'BERTH_BAD_REQUEST' }], 'a query parameter given twice, before the route runs')
  const json = { method: 'POST', headers: { 'content-type': 'application/json' } }
  t.same(await get('/v1/echo', { ...json, body: '{"n":3}' }), [200, { n: 3 }])
  const [status, body] = await get('/v1/echo', { ...json, body: '{"n":"three"}' })
  t.equal(status, 400)
  t.match(body, { error: /^invalid body: .*n/ })
  t.same(await get('/v1/echo', { ...json, body: '{"n":' }), [400, { error: 'Body is not valid JSON but content-type is set to \'application/json\'', code: 'BERTH_BAD_REQUEST' }])
  t.same(await get('/v1/echo', { ...json, body: JSON.stringify({ n: 1, pad: 'x'.repeat(100) }) }), [413, { error: 'request body is too large', code: 'BERTH_PAYLOAD_TOO_LARGE' }])
  t.same(await get('/v1/echo', { method: 'POST', headers: { 'content-type': 'application/x-nope' }, body: 'x' }), [415, { error: 'unsupported content type: application/x-nope', code: 'BERTH_UNSUPPORTED_MEDIA_TYPE' }])
})

t.test('an empty body sent as application/json is no body, on every listener; a JSON body is parsed as before', async t => {
  const bodies: unknown[] = []
  const actions = definePlugin({
    name: 'actions',
    version: '1.0.0',
    listeners: [{ name: 'public', port: 6890 }],
    setup (ctx) {
      const routes: FastifyPluginAsync = async app => {
        app.post('/things/:id/promote', async request => { bodies.push(request.body); return { promoted: true } })
        app.delete('/things/:id', async request => { bodies.push(request.body); return { deleted: true } })
        app.post('/echo', { schema: { body: Type.Object({ n: Type.Integer() }) } }, async request => request.body)
      }
      ctx.http('public', routes, { prefix: '/v1' })
      ctx.http('control', routes, { prefix: '/api/v1/actions' })
    }
  })
  const kernel = await testKernel(t, { plugins: [actions] })
  const json = { 'content-type': 'application/json' }
  for (const [listener, prefix] of [['public', '/v1'], ['control', '/api/v1/actions']] as const) {
    const url = (path: string): URL => new URL(`${prefix}${path}`, kernel.url(listener))
    const call = async (method: string, path: string, body?: string): Promise<[number, unknown]> => {
      const response = await fetch(url(path), { method, headers: json, body })
      return [response.status, await response.json()]
    }
    bodies.length = 0
    t.same(await call('POST', '/things/a/promote'), [200, { promoted: true }], `${listener}: POST with the header and no body`)
    t.same(await call('POST', '/things/a/promote', ''), [200, { promoted: true }], `${listener}: Content-Length: 0`)
    t.same(await call('DELETE', '/things/a'), [200, { deleted: true }], `${listener}: DELETE with the header and no body`)
    const bare = await rawRequest(url('/things/a/promote'), `POST ${prefix}/things/a/promote HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n`)
    t.same([bare.status, JSON.parse(bare.body.toString())], [200, { promoted: true }], `${listener}: neither Content-Length nor a body (curl -X POST -H ...)`)
    t.same(bodies, [undefined, undefined, undefined, undefined], 'the routes see no body')
    t.same(await call('POST', '/things/a/promote', '{"weight":5}'), [200, { promoted: true }])
    t.same(bodies.at(-1), { weight: 5 }, 'a body is parsed as before')
    t.same(await call('POST', '/echo', '{"n":2}'), [200, { n: 2 }])
    t.same(await call('POST', '/echo'), [400, { error: 'invalid body: must be object', code: 'BERTH_BAD_REQUEST' }], `${listener}: a route that needs a body still says so`)
    t.same(await call('POST', '/echo', '{"n":'), [400, { error: 'Body is not valid JSON but content-type is set to \'application/json\'', code: 'BERTH_BAD_REQUEST' }])
    t.same(await call('POST', '/echo', '{"n":1,"__proto__":{"x":1}}'), [400, { error: 'Body is not valid JSON but content-type is set to \'application/json\'', code: 'BERTH_BAD_REQUEST' }], 'prototype poisoning is still refused')
  }
})

t.test('a plugin\'s error format for its prefix: route failures, unknown routes, bad URLs, and requests node refuses', async t => {
  const text = { type: 'text/x-error', encode: ({ error, code }: { error: string, code: string }) => `E ${code} ${error}` }
  const formatted = definePlugin({
    name: 'formatted',
    version: '1.0.0',
    listeners: [{ name: 'public', port: 6890 }],
    setup (ctx) {
      ctx.http('public', async app => { app.get('/:id', async () => { throw new NotFound('no such thing') }) }, { prefix: '/fmt/', errors: text })
      ctx.http('public', async app => { app.get('/plain/:id', async () => { throw new NotFound('no such thing') }) })
    }
  })
  const kernel = await testKernel(t, { plugins: [formatted] })
  const base = kernel.url('public')
  t.same(kernel.routes('public').filter(route => route.method === 'GET').map(route => route.url), ['/fmt/:id', '/plain/:id'], 'the routes are listed')
  const answer = async (path: string): Promise<[number, string | null, string]> => {
    const response = await fetch(new URL(path, base))
    return [response.status, response.headers.get('content-type'), await response.text()]
  }
  t.same(await answer('/fmt/1'), [404, 'text/x-error', 'E BERTH_NOT_FOUND no such thing'])
  t.same(await answer('/fmt'), [404, 'text/x-error', 'E BERTH_NO_ROUTE no route for GET /fmt'], 'the prefix itself')
  t.same(await answer('/fmt/1/2'), [404, 'text/x-error', 'E BERTH_NO_ROUTE no route for GET /fmt/1/2'], 'an unknown route under the prefix')
  t.same(await answer(`/fmt/${'x'.repeat(101)}`), [400, 'text/x-error', 'E BERTH_BAD_REQUEST a path parameter is longer than 100 characters'])
  t.same(await answer('/fmt/%zz'), [400, 'text/x-error', 'E BERTH_BAD_REQUEST the URL path is not valid percent-encoding'])
  t.same(await answer('/fmtx'), [404, 'application/json; charset=utf-8', '{"error":"no route for GET /fmtx","code":"BERTH_NO_ROUTE"}'], 'a path that only begins like the prefix')
  t.same(await answer('/plain/1'), [404, 'application/json; charset=utf-8', '{"error":"no such thing","code":"BERTH_NOT_FOUND"}'])
  t.same(await answer('/plain/%zz'), [400, 'application/json; charset=utf-8', '{"error":"the URL path is not valid percent-encoding","code":"BERTH_BAD_REQUEST"}'])

  const big = `X-Big: ${'a'.repeat(20_000)}\r\n`
  const refused: Array<[request: string, status: number, type: string, body: RegExp]> = [
    [`GET /fmt/1 HTTP/1.1\r\nHost: x\r\n${big}\r\n`, 431, 'text/x-error', /^E BERTH_HEADERS_TOO_LARGE the request headers are too large: the request line and headers may have \d+ bytes$/],
    [`GET /plain/1 HTTP/1.1\r\nHost: x\r\n${big}\r\n`, 431, 'application/json; charset=utf-8', /^\{"error":"the request headers are too large.*","code":"BERTH_HEADERS_TOO_LARGE"\}$/],
    [`GET /fmt/${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`, 414, 'text/x-error', /^E BERTH_URI_TOO_LONG the URL is too long/],
    ['GET /fmt/1 HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n\r\n', 400, 'text/x-error', /^E BERTH_BAD_REQUEST malformed HTTP request: /],
    ['get /fmt/1 HTTP/1.1\r\nHost: x\r\n\r\n', 400, 'text/x-error', /^E BERTH_BAD_REQUEST malformed HTTP request: /],
    ['NOPE /plain/1 HTTP/1.1\r\n\r\n', 400, 'application/json; charset=utf-8', /^\{"error":"malformed HTTP request: .*","code":"BERTH_BAD_REQUEST"\}$/],
    ['\x16\x03\x01 not HTTP at all\r\n\r\n', 400, 'application/json; charset=utf-8', /^\{"error":"malformed HTTP request: /]
  ]
  for (const [request, status, type, body] of refused) {
    const raw = await rawRequest(base, request)
    t.match([raw.status, raw.headers['content-type'], raw.body.toString()], [status, type, body], `${status}: ${request.slice(0, 24)}`)
  }
  const withBody = await rawRequest(base, `NOPE /plain/1 HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n${'a'.repeat(1_000_000)}`)
  t.match([withBody.status, withBody.body.toString()], [400, /^\{"error":"malformed HTTP request: /], 'the whole answer arrives while the client is still sending (no reset)')
  // A client that never stops sending (and ignores the server's end) is cut off after a while.
  const endless = connect({ port: Number(base.port), host: '127.0.0.1', allowHalfOpen: true })
  let closed = false
  endless.on('close', () => { closed = true }).on('error', () => {}).resume()
  endless.write('NOPE /plain/1 HTTP/1.1\r\n\r\n')
  const drip = setInterval(() => { if (!endless.destroyed) endless.write('more') }, 100)
  t.teardown(() => { clearInterval(drip) })
  await pollUntil(() => closed, { timeout: 6000, what: 'a refused connection the client keeps sending on to be closed' })
  t.match((await kernel.exposition('public')).body, /berth_http_requests_total\{listener="public",status="431"\} 2/, 'refusals are counted')
})

t.test('an error format needs a prefix', async t => {
  const unprefixed = definePlugin({
    name: 'unprefixed',
    version: '1.0.0',
    listeners: [{ name: 'public', port: 6890 }],
    setup (ctx) { ctx.http('public', async () => {}, { errors: { type: 'text/plain', encode: ({ error }) => error } }) }
  })
  await t.rejects(testKernel(t, { plugins: [unprefixed] }), /plugin "unprefixed": an error format for the public listener needs a prefix/)
})

t.test('access_log: off, no line per request; on, two lines with request id and path, never the query or headers', async t => {
  for (const accessLog of [false, true]) {
    const { logger, lines } = capturedLogger()
    const kernel = await testKernel(t, { plugins: [demo], logger, config: { server: { access_log: accessLog } } })
    const base = kernel.url('public')
    const forbidden = await fetch(new URL('/v1/forbidden?token=abc123', base), { headers: { authorization: 'Bearer hunter2' } })
    t.equal(forbidden.status, 403)
    t.equal((await fetch(new URL('/v1/crash?code=xyz789', base))).status, 500)
    await kernel.stop()
    const entries = lines().trim().split('\n').map(line => JSON.parse(line) as Record<string, unknown>)
    const failure = entries.find(e => e.msg === 'request failed')
    t.match(failure, { listener: 'public', method: 'GET', path: '/v1/crash', reqId: String, err: { message: /hunter2 leaked/ } }, 'a 5xx is logged either way')
    const perRequest = entries.filter(e => e.msg === 'incoming request' || e.msg === 'request completed')
    if (!accessLog) {
      t.equal(perRequest.length, 0, 'off: no per-request lines')
      continue
    }
    t.equal(perRequest.length, 4, 'on: two lines per request')
    t.match(perRequest[0], { listener: 'public', reqId: String, req: { method: 'GET', path: '/v1/forbidden', remoteAddress: '127.0.0.1' } })
    t.match(perRequest[1], { reqId: perRequest[0].reqId, res: { statusCode: 403 }, responseTime: Number })
    t.notMatch(lines(), /abc123|xyz789|Bearer|authorization/, 'neither query strings nor headers are logged')
  }
})

t.test('health reports each plugin; each listener exposes its own product\'s metrics and process metrics, nothing else', async t => {
  const scraped = definePlugin({
    name: 'scraped',
    version: '1.0.0',
    listeners: [{ name: 'product', port: 6891 }],
    setup (ctx) {
      const hits = ctx.metrics.counter({ name: 'berth_scraped_hits_total', help: 'Hits.' })
      ctx.http('product', async app => {
        app.get('/hit', async () => { hits.inc(); return { ok: true } })
        app.get('/scrape', async (_request, reply) => {
          const { contentType, body } = await ctx.metrics.expose()
          reply.type(contentType)
          return body
        })
      })
      ctx.schedule.every('fails', 5, () => { throw new Error('scheduled failure') })
    }
  })
  const operations = definePlugin({
    name: 'operations',
    version: '1.0.0',
    setup (ctx) {
      ctx.metrics.gauge({ name: 'berth_operations_queue', help: 'Queue.' }).set(3)
      ctx.http('control', async app => { app.get('/ops', async () => ({ ok: true })) })
    }
  })
  // Serves nothing itself and builds on the product: its metrics are the product's.
  const extension = definePlugin({
    name: 'extension',
    version: '1.0.0',
    dependsOn: ['scraped'],
    setup (ctx) {
      ctx.metrics.counter({ name: 'berth_extension_runs_total', help: 'Runs.' }).inc(2)
    }
  })
  const kernel = await testKernel(t, { plugins: [demo, scraped, operations, extension] })
  const control = kernel.url('control')
  const health = await fetch(new URL('/api/v1/health', control))
  t.equal(health.status, 200)
  t.match(await health.json(), { status: 'ok', version: /^\d+\.\d+\.\d+/, plugins: { demo: { version: '2.0.0', state: 'running' } } })
  t.equal((await fetch(new URL('/hit', kernel.url('product')))).status, 200)
  t.equal((await fetch(new URL('/nothing', kernel.url('product')))).status, 404)
  const metrics = await fetch(new URL('/metrics', control))
  t.match(metrics.headers.get('content-type'), /^text\/plain; version=0\.0\.4/)
  const product = await pollUntil(async () => {
    const body = await (await fetch(new URL('/scrape', kernel.url('product')))).text()
    return /^berth_schedule_failures_total\{job="scraped.fails"\} [1-9]/m.test(body) && body.includes('status="404"') && body
  }, { what: 'the product listener to count its 404 and the failing job' })
  const text = await (await fetch(new URL('/metrics', control))).text()

  t.match(text, /^berth_plugin_up\{plugin="operations"\} 1$/m, 'control: plugins of the control plane')
  t.match(text, /^berth_operations_queue 3$/m)
  t.match(text, /^berth_http_requests_total\{listener="control",status="200"\} [1-9]\d*$/m, 'the health answer is counted')
  t.match(text, /^process_cpu_seconds_total \d/m)
  t.match(text, /^nodejs_heap_size_used_bytes \d/m)
  t.notMatch(text, /berth_scraped_|berth_extension_|plugin="(scraped|extension|demo)"|listener="product"|listener="public"|job="scraped/, 'control shows nothing of the other products')

  t.match(product, /^berth_scraped_hits_total 1$/m, 'the product listener: its plugin\'s metrics')
  t.match(product, /^berth_plugin_up\{plugin="scraped"\} 1$/m)
  t.match(product, /^berth_extension_runs_total 2$/m, 'and those of a plugin that serves nothing and depends on it')
  t.match(product, /^berth_plugin_up\{plugin="extension"\} 1$/m)
  t.match(product, /^berth_http_requests_total\{listener="product",status="404"\} 1$/m)
  t.match(product, /^process_cpu_seconds_total \d/m)
  t.notMatch(product, /berth_operations_|plugin="operations"|plugin="demo"|listener="control"|listener="public"/, 'and nothing of the control plane or another product')
})

t.test('a listener without routes is not opened', async t => {
  const quiet = definePlugin({ name: 'quiet', version: '1', listeners: [{ name: 'quiet', port: 6892 }] })
  const kernel = await testKernel(t, { plugins: [quiet] })
  t.throws(() => kernel.url('quiet'), { message: 'the quiet listener is not open' })
  t.ok(kernel.url('control'))
})

t.test('a port in use stops start-up with a line naming listener and port', async t => {
  const first = await testKernel(t, { plugins: [demo] })
  const port = Number(first.url('control').port)
  const second = await testKernel(t, { noStart: true, config: { server: { listeners: { control: { host: '127.0.0.1', port } } } } })
  await t.rejects(second.start(), { message: `control listener: port ${port} on 127.0.0.1 is already in use (set [server.listeners.control].port)` })
  t.equal(second.state, 'failed')
})
