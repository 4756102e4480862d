// Path routing and route middleware through the proxy, with curl as the client and real Node servers
// as replicas: the longest prefix wins (and strips it when asked, WebSocket handshakes too), basic auth
// with bcrypt hashes, IP allow-lists, rate limits, body limits (with and without a length), extra
// headers and HSTS (on the fast lane's HTTPS answers too), and brotli/gzip compression of text.
import t from 'tap'
import { execFile } from 'node:child_process'
import { createServer, type Server } from 'node:http'
import { promisify } from 'node:util'
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import bcrypt from 'bcryptjs'
import type { ServiceSpec } from '../../../plugins/reconciler/spec.js'
import { ensureDebianPackages, requireComponent } from '../../support/component.js'
import { listen, startProxy, type TestProxy } from '../../support/proxy.js'

const run = promisify(execFile)
await requireComponent(t, 'curl', async () => { await ensureDebianPackages(['curl']) })
const TEXT = `<!doctype html><p>${'berth '.repeat(1000)}</p>`

/** A replica that answers with its name, the path it got and the headers, or text, events, or the size of a body. */
function replica (name: string): Server {
  return createServer((req, res) => {
    if (req.url === '/text') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': Buffer.byteLength(TEXT), etag: '"v1"' })
      res.end(req.method === 'HEAD' ? undefined : TEXT)
      return
    }
    if (req.url === '/events') {
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.end(`data: ${'x'.repeat(2000)}\n\n`)
      return
    }
    if (req.url === '/small') {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': 5 })
      res.end('small')
      return
    }
    if (req.url === '/own-hsts') {
      res.writeHead(200, { 'strict-transport-security': 'max-age=60', 'x-frame-options': 'SAMEORIGIN', 'content-length': 2 })
      res.end('ok')
      return
    }
    let bytes = 0
    req.on('data', (chunk: Buffer) => { bytes += chunk.length })
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ name, url: req.url, bytes }))
    })
  })
}

interface Answer { status: number, headers: Record<string, string>, body: Buffer }

/** curl through the proxy (`--resolve` sends the name to loopback); `args` before the URL. */
async function curl (proxy: TestProxy, url: string, args: string[] = []): Promise<Answer> {
  const { protocol, hostname, pathname, search } = new URL(url)
  const to = protocol === 'https:' ? proxy.tlsPort as number : Number(proxy.url.port)
  const target = `${protocol}//${hostname}:${to}${pathname}${search}`
  const { stdout } = await run('curl', ['-sk', '-D', '-', '--resolve', `${hostname}:${to}:127.0.0.1`, ...args, target], { encoding: 'buffer', maxBuffer: 1 << 24 })
  const split = stdout.indexOf('\r\n\r\n')
  const [statusLine, ...lines] = stdout.subarray(0, split).toString('latin1').split('\r\n')
  const headers: Record<string, string> = {}
  for (const line of lines) headers[line.slice(0, line.indexOf(':')).toLowerCase()] = line.slice(line.indexOf(':') + 1).trim()
  return { status: Number(statusLine.split(' ')[1]), headers, body: stdout.subarray(split + 4) }
}

const json = (answer: Answer): { name: string, url: string, bytes: number } => JSON.parse(answer.body.toString()) as { name: string, url: string, bytes: number }
const middleware = (m: ServiceSpec['middleware']): Partial<ServiceSpec> => ({ middleware: m })

t.test('path routing: the longest prefix of a name wins, on segment boundaries; strip_prefix takes it off', async t => {
  const [site, api, v2] = [await listen(t, replica('site')), await listen(t, replica('api')), await listen(t, replica('v2'))]
  const proxy = await startProxy(t, [
    { domain: 'shop.test', service: 'site', ports: [site] },
    { domain: 'shop.test', service: 'api', ports: [api], spec: { path_prefix: '/api', strip_prefix: true } },
    { domain: 'shop.test', service: 'v2', ports: [v2], spec: { path_prefix: '/api/v2' } },
    { domain: 'only.test', service: 'only', ports: [api], spec: { path_prefix: '/app' } }
  ])
  const cases: Array<[string, string, string]> = [
    ['/', 'site', '/'],
    ['/apix', 'site', '/apix'],
    ['/api', 'api', '/'],
    ['/api?q=1', 'api', '/?q=1'],
    ['/api/users/7?full=1', 'api', '/users/7?full=1'],
    ['/api/v2', 'v2', '/api/v2'],
    ['/api/v2/items', 'v2', '/api/v2/items'],
    ['/api/v20', 'api', '/v20']
  ]
  for (const [path, name, url] of cases) {
    const answer = await curl(proxy, `http://shop.test${path}`)
    t.same({ status: answer.status, ...json(answer) }, { status: 200, name, url, bytes: 0 }, `${path} → ${name} ${url}`)
  }
  const post = await curl(proxy, 'http://shop.test/api/upload', ['--data-binary', 'hello'])
  t.same(json(post), { name: 'api', url: '/upload', bytes: 5 }, 'a request with a body is routed the same way')
  t.equal((await curl(proxy, 'http://only.test/elsewhere')).status, 404, 'a path under no prefix of a name nobody serves whole is 404')
  t.equal(json(await curl(proxy, 'http://only.test/app/x')).url, '/app/x', 'kept when not stripped')
  t.equal(proxy.table.route('shop.test')?.prefix, '/api/v2', 'without a path, the longest prefix first: the fast lane hands the name to the general path')
})

t.test('basic auth: bcrypt hashes, 401 with a challenge otherwise, WebSocket handshakes included', async t => {
  const port = await listen(t, replica('private'))
  const hash = await bcrypt.hash('open sesame', 4)
  const proxy = await startProxy(t, [{ domain: 'private.test', ports: [port], spec: middleware({ basic_auth: [`alice:${hash}`] }) }])
  const none = await curl(proxy, 'http://private.test/')
  t.equal(none.status, 401)
  t.equal(none.headers['www-authenticate'], 'Basic realm="private", charset="UTF-8"')
  t.equal((await curl(proxy, 'http://private.test/', ['-u', 'alice:wrong'])).status, 401, 'wrong password')
  t.equal((await curl(proxy, 'http://private.test/', ['-u', 'bob:open sesame'])).status, 401, 'unknown user')
  for (let i = 0; i < 2; i++) t.equal((await curl(proxy, 'http://private.test/', ['-u', 'alice:open sesame'])).status, 200, 'the right password, again from memory')
  const handshake = ['-H', 'connection: Upgrade', '-H', 'upgrade: websocket', '-H', 'sec-websocket-version: 13', '-H', 'sec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==']
  t.equal((await curl(proxy, 'http://private.test/ws', handshake)).status, 401, 'an upgrade without credentials is refused too')
})

t.test('allow-lists by address and CIDR; a rate limit per address answers 429 with Retry-After', async t => {
  const port = await listen(t, replica('x'))
  const proxy = await startProxy(t, [
    { domain: 'inside.test', ports: [port], spec: middleware({ allow: ['127.0.0.0/8', '::1'] }) },
    { domain: 'outside.test', ports: [port], spec: middleware({ allow: ['10.0.0.0/8', '192.168.1.7'] }) },
    { domain: 'limited.test', ports: [port], spec: middleware({ rate_limit: { requests: 3, per_seconds: 60, burst: 3 } }) }
  ])
  t.equal((await curl(proxy, 'http://inside.test/')).status, 200)
  const outside = await curl(proxy, 'http://outside.test/', ['-H', 'accept: application/json', '-H', 'x-forwarded-for: 10.1.2.3'])
  t.equal(outside.status, 403, 'the connection\'s address counts, not a header the client sends')
  t.match(JSON.parse(outside.body.toString()), { error: '127.0.0.1 is not allowed here' })
  const statuses: number[] = []
  for (let i = 0; i < 5; i++) statuses.push((await curl(proxy, 'http://limited.test/')).status)
  t.same(statuses, [200, 200, 200, 429, 429])
  t.equal((await curl(proxy, 'http://limited.test/')).headers['retry-after'], '20', 'one request back every 20 s')
  t.match(await proxy.exposition(), /^berth_proxy_requests_total\{route="limited\.test",class="4xx"\} 3$/m)
})

t.test('a body limit: 413 by Content-Length before the replica is asked, and for a chunked body once past it', async t => {
  const port = await listen(t, replica('x'))
  const proxy = await startProxy(t, [{ domain: 'upload.test', ports: [port], spec: middleware({ max_body_bytes: 1024 }) }])
  t.same(json(await curl(proxy, 'http://upload.test/', ['--data-binary', 'x'.repeat(1024)])), { name: 'x', url: '/', bytes: 1024 }, 'at the limit it passes')
  t.equal((await curl(proxy, 'http://upload.test/', ['--data-binary', 'x'.repeat(1025)])).status, 413)
  const chunked = ['-H', 'transfer-encoding: chunked', '--data-binary']
  t.equal(json(await curl(proxy, 'http://upload.test/', [...chunked, 'y'.repeat(500)])).bytes, 500)
  t.equal((await curl(proxy, 'http://upload.test/', [...chunked, 'y'.repeat(100_000)])).status, 413)
})

t.test('extra headers replace the service\'s; HSTS on HTTPS by default (fast lane and general path), unless the service sets its own or turns it off', async t => {
  const port = await listen(t, replica('x'))
  const proxy = await startProxy(t, [
    { domain: 'plain.test', ports: [port] },
    { domain: 'framed.test', ports: [port], spec: middleware({ headers: { 'x-frame-options': 'DENY' } }) },
    { domain: 'nohsts.test', ports: [port], spec: middleware({ hsts: false, compress: true }) }
  ], { tls: true })
  const plain = await curl(proxy, 'https://plain.test/')
  t.equal(plain.headers['strict-transport-security'], 'max-age=31536000', 'the fast lane adds it')
  t.equal(json(plain).name, 'x')
  const small = await curl(proxy, 'https://plain.test/small')
  t.same([small.headers['strict-transport-security'], small.headers['content-length'], small.body.toString()], ['max-age=31536000', '5', 'small'], 'an answer with a length passed on as received, the header put before its end')
  t.equal((await curl(proxy, 'https://plain.test/own-hsts')).headers['strict-transport-security'], 'max-age=60', 'as received, the service\'s own HSTS kept')
  t.notOk('strict-transport-security' in (await curl(proxy, 'http://plain.test/')).headers, 'never on plain HTTP')
  const own = await curl(proxy, 'https://framed.test/own-hsts')
  t.same([own.headers['strict-transport-security'], own.headers['x-frame-options'], own.body.toString()], ['max-age=60', 'DENY', 'ok'], 'the service\'s HSTS is kept, its X-Frame-Options replaced')
  t.equal((await curl(proxy, 'http://framed.test/')).headers['x-frame-options'], 'DENY', 'extra headers on HTTP too')
  t.notOk('strict-transport-security' in (await curl(proxy, 'https://nohsts.test/')).headers, 'hsts = false')
})

t.test('compression: brotli or gzip for text the client accepts, with Vary and a weak ETag; never for small answers, event streams or HEAD', async t => {
  const port = await listen(t, replica('x'))
  const proxy = await startProxy(t, [{ domain: 'zip.test', ports: [port], spec: middleware({ compress: true }) }, { domain: 'raw.test', ports: [port] }])
  const br = await curl(proxy, 'http://zip.test/text', ['-H', 'accept-encoding: gzip, br'])
  t.match(br.headers, { 'content-encoding': 'br', vary: 'accept-encoding', etag: 'W/"v1"', 'transfer-encoding': 'chunked' })
  t.equal(brotliDecompressSync(br.body).toString(), TEXT)
  t.ok(br.body.length < TEXT.length / 10, `${br.body.length} bytes for ${TEXT.length}`)
  const gzip = await curl(proxy, 'http://zip.test/text', ['-H', 'accept-encoding: gzip, br;q=0'])
  t.equal(gzip.headers['content-encoding'], 'gzip')
  t.equal(gunzipSync(gzip.body).toString(), TEXT)
  t.equal((await curl(proxy, 'http://zip.test/text', ['--compressed'])).body.toString(), TEXT, 'curl --compressed reads it')
  const none = await curl(proxy, 'http://zip.test/text')
  t.same([none.headers['content-encoding'], none.headers['content-length']], [undefined, String(Buffer.byteLength(TEXT))], 'not asked for: as sent')
  t.notOk('content-encoding' in (await curl(proxy, 'http://zip.test/small', ['-H', 'accept-encoding: br'])).headers, 'a small answer stays as it is')
  t.notOk('content-encoding' in (await curl(proxy, 'http://zip.test/events', ['-H', 'accept-encoding: br'])).headers, 'an event stream stays as it is')
  t.notOk('content-encoding' in (await curl(proxy, 'http://zip.test/text', ['-I', '-H', 'accept-encoding: br'])).headers, 'HEAD')
  t.notOk('content-encoding' in (await curl(proxy, 'http://raw.test/text', ['-H', 'accept-encoding: br'])).headers, 'only where the route asks')
})
