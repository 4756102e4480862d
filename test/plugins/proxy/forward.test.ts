// The proxy's request path against real Node servers as replicas: routing by Host, balancing and
// retries, streamed bodies both ways, server-sent events, WebSocket, forwarding and hop-by-hop headers,
// error answers (404, 414, 431, 502, 503, 504), and the header timeout that cuts off slow clients.
import t from 'tap'
import { createHash } from 'node:crypto'
import { createServer, request, type IncomingMessage, type Server } from 'node:http'
import { connect } from 'node:net'
import { WebSocket } from 'undici'
import { pollUntil } from '../../support/poll.js'
import { get, listen, startProxy } from '../../support/proxy.js'

/** A replica: answers with its name and the headers it received, streams, events, and WebSocket echo. */
function replica (name: string, state: { received: number[], hold?: Promise<void> }): Server {
  const server = createServer((req, res) => {
    if (req.url === '/upload') {
      const hash = createHash('sha256')
      let bytes = 0
      req.on('data', (chunk: Buffer) => { hash.update(chunk); bytes += chunk.length; state.received.push(bytes) })
      req.on('end', () => { res.end(JSON.stringify({ bytes, sha256: hash.digest('hex') })) })
      return
    }
    if (req.url === '/download') {
      res.writeHead(200, { 'content-type': 'application/octet-stream' })
      res.write(Buffer.alloc(65536, 1))
      void state.hold?.then(() => { res.end(Buffer.alloc(65536, 2)) })
      return
    }
    if (req.url === '/events') {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' })
      res.write('data: first\n\n')
      void state.hold?.then(() => { res.end('data: second\n\n') })
      return
    }
    if (req.url === '/silent') return
    res.writeHead(200, { 'content-type': 'application/json', 'keep-alive': 'timeout=5', 'x-hop': 'secret', connection: 'x-hop' })
    res.end(JSON.stringify({ name, headers: req.headers }))
  })
  server.on('upgrade', (req: IncomingMessage, socket) => {
    const accept = createHash('sha1').update(`${req.headers['sec-websocket-key'] ?? ''}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64')
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: Upgrade\r\nsec-websocket-accept: ${accept}\r\n\r\n`)
    socket.on('data', (frame: Buffer) => {
      if ((frame[0] & 0x0f) === 0x8) {
        socket.end(Buffer.from([0x88, 0])) // a close frame: close too
        return
      }
      // One small masked text frame from the client, echoed back unmasked with the replica's name.
      const length = frame[1] & 0x7f
      const mask = frame.subarray(2, 6)
      const text = Buffer.from(frame.subarray(6, 6 + length).map((byte, i) => byte ^ mask[i % 4])).toString()
      const reply = Buffer.from(`${name}: ${text}`)
      socket.write(Buffer.concat([Buffer.from([0x81, reply.length]), reply]))
    })
  })
  return server
}

t.test('routes by Host to the replicas, balancing; forwarding headers set, hop-by-hop headers dropped', async t => {
  const state = { received: [] }
  const [a, b] = [await listen(t, replica('a', state)), await listen(t, replica('b', state))]
  const proxy = await startProxy(t, [{ domain: 'app.test', ports: [a, b] }])
  const names = new Set<string>()
  for (let i = 0; i < 6; i++) {
    const answer = await get(proxy, 'App.Test:8080', '/hello', { 'x-forwarded-for': '6.6.6.6', forwarded: 'for=6.6.6.6', connection: 'x-secret', 'x-secret': 'no', te: 'trailers' })
    t.equal(answer.status, 200)
    const { name, headers } = JSON.parse(answer.body) as { name: string, headers: Record<string, string> }
    names.add(name)
    t.match(headers, { host: 'App.Test:8080', 'x-forwarded-for': '127.0.0.1', 'x-forwarded-proto': 'http', 'x-forwarded-host': 'App.Test:8080', forwarded: 'for=127.0.0.1;host="App.Test:8080";proto=http' })
    t.notOk('x-secret' in headers || 'te' in headers, 'hop-by-hop request headers dropped')
    t.notOk('x-hop' in answer.headers, 'a header named by the replica\'s Connection header is dropped')
    t.not(answer.headers['keep-alive'], 'timeout=5', 'the replica\'s Keep-Alive is not passed on')
  }
  t.same([...names].sort(), ['a', 'b'], 'both replicas served')
  t.match(await proxy.exposition(), /^berth_proxy_requests_total\{route="app\.test",class="2xx"\} 6$/m)
  t.match(await proxy.exposition(), /^berth_proxy_upstream_seconds_count\{route="app\.test"\} 6$/m)
})

t.test('the proxy\'s own answers: unknown host 404, long URL 414, large headers 431, HTML or JSON', async t => {
  const proxy = await startProxy(t, [{ domain: 'app.test', ports: [await listen(t, replica('a', { received: [] }))] }])
  const unknown = await get(proxy, 'nobody.test')
  t.equal(unknown.status, 404)
  t.match(unknown.headers['content-type'], /^text\/html/)
  t.match(unknown.body, /<h1>404 Not Found<\/h1><p>no service is served at nobody\.test<\/p>/)
  const json = await get(proxy, 'nobody.test', '/', { accept: 'application/json' })
  t.same(JSON.parse(json.body), { error: 'no service is served at nobody.test', code: 'BERTH_NOT_FOUND' })
  t.equal((await get(proxy, 'app.test', `/${'x'.repeat(300)}`)).status, 414)
  t.equal((await get(proxy, 'app.test', '/', { 'x-big': 'y'.repeat(5000) })).status, 431)
  t.match(await proxy.exposition(), /^berth_proxy_requests_total\{route="-",class="4xx"\} 2$/m)
})

t.test('dead replicas: a GET is retried once on another, then a dead route is 502, no replica 503, a silent one 504', async t => {
  const live = await listen(t, replica('live', { received: [] }))
  const silent = await listen(t, replica('silent', { received: [] }))
  const closed = createServer()
  const closedPort = await listen(t, closed)
  closed.close() // nothing listens on its port any more
  const proxy = await startProxy(t, [{ domain: 'mixed.test', ports: [closedPort, live] }, { domain: 'gone.test', ports: [closedPort] }, { domain: 'empty.test', ports: [] }, { domain: 'slow.test', ports: [silent] }])
  for (let i = 0; i < 4; i++) t.equal((await get(proxy, 'mixed.test', '/hello')).status, 200, 'the live replica answers, the dead one is skipped or retried')
  t.ok(proxy.failed.some(u => u.port === closedPort), 'the failed connection took the dead replica out of rotation')
  const gone = await get(proxy, 'gone.test', '/hello', { accept: 'application/json' })
  t.same([gone.status, JSON.parse(gone.body)], [502, { error: 'gone could not be reached', code: 'BERTH_BAD_GATEWAY' }])
  t.same([(await get(proxy, 'gone.test')).status], [503], 'once out of rotation: 503 at once')
  t.equal((await get(proxy, 'empty.test')).status, 503)
  const slow = await get(proxy, 'slow.test', '/silent', { accept: 'application/json' })
  t.same([slow.status, JSON.parse(slow.body)], [504, { error: 'slow did not answer in time', code: 'BERTH_GATEWAY_TIMEOUT' }])
})

t.test('a client silent while its request waits for the replica gets the 504 at the upstream timeout, on both paths', async t => {
  // The client's idle timeout (1 s) is shorter than the wait for the replica's head (2 s).
  const proxy = await startProxy(t, [{ domain: 'slow.test', ports: [await listen(t, replica('silent', { received: [] }))] }], { settings: { client_idle_timeout_secs: 1 }, upstreamTimeoutMs: 2000 })
  for (const [path, method] of [['the fast lane', 'GET'], ['the general path', 'POST']]) {
    const started = performance.now()
    const answer = await new Promise<{ status: number, body: string }>((resolve, reject) => {
      request(new URL('/silent', proxy.url), { method, headers: { host: 'slow.test', accept: 'application/json', 'content-length': method === 'POST' ? 1 : 0 }, agent: false }, response => {
        let body = ''
        response.on('data', (chunk: Buffer) => { body += chunk.toString() })
        response.on('end', () => { resolve({ status: response.statusCode ?? 0, body }) })
      }).on('error', reject).end(method === 'POST' ? 'x' : undefined)
    })
    const ms = performance.now() - started
    t.same([answer.status, JSON.parse(answer.body)], [504, { error: 'slow did not answer in time', code: 'BERTH_GATEWAY_TIMEOUT' }], `${path}: 504, not a closed connection`)
    t.ok(ms >= 2000, `${path}: at the upstream timeout, not before`)
    for (const upstream of proxy.table.routes[0].upstreams) upstream.healthy = true // the timeout took it out of rotation
  }
})

t.test('bodies stream both ways; server-sent events arrive as sent', async t => {
  const state: { received: number[], hold?: Promise<void> } = { received: [] }
  let release = (): void => {}
  state.hold = new Promise(resolve => { release = resolve })
  const proxy = await startProxy(t, [{ domain: 'stream.test', ports: [await listen(t, replica('s', state))] }])

  // Upload: the replica has the first part before the client sends the rest.
  const answer = new Promise<string>((resolve, reject) => {
    const req = request(new URL('/upload', proxy.url), { method: 'POST', headers: { host: 'stream.test', 'content-type': 'application/octet-stream' } }, response => {
      let body = ''
      response.on('data', (chunk: Buffer) => { body += chunk.toString() })
      response.on('end', () => { resolve(body) })
    }).on('error', reject)
    req.write(Buffer.alloc(1 << 20, 7))
    void pollUntil(() => state.received.at(-1) === 1 << 20, { what: 'the first MiB at the replica' }).then(() => { req.end(Buffer.alloc(1 << 20, 8)) }, reject)
  })
  const expected = createHash('sha256').update(Buffer.alloc(1 << 20, 7)).update(Buffer.alloc(1 << 20, 8)).digest('hex')
  t.same(JSON.parse(await answer), { bytes: 2 << 20, sha256: expected }, 'the replica had the first MiB before the second was sent')

  // Download and events: the first part arrives while the replica still holds the rest.
  const firstParts = await Promise.all(['/download', '/events'].map(async path => await new Promise<string>((resolve, reject) => {
    request(new URL(path, proxy.url), { headers: { host: 'stream.test' } }, response => {
      response.once('data', (chunk: Buffer) => { resolve(chunk.subarray(0, 13).toString('hex')); response.resume() })
    }).on('error', reject).end()
  })))
  t.same(firstParts, [Buffer.alloc(13, 1).toString('hex'), Buffer.from('data: first\n\n').toString('hex')])
  release()
})

t.test('WebSocket upgrades are tunnelled to a replica', async t => {
  const proxy = await startProxy(t, [{ domain: '127.0.0.1', ports: [await listen(t, replica('ws', { received: [] }))] }])
  const socket = new WebSocket(`ws://127.0.0.1:${proxy.url.port}/chat`)
  const reply = await new Promise<string>((resolve, reject) => {
    socket.addEventListener('open', () => { socket.send('hello') })
    socket.addEventListener('message', event => { resolve(String(event.data)) })
    socket.addEventListener('error', () => { reject(new Error('websocket failed')) })
  })
  const closed = new Promise(resolve => { socket.addEventListener('close', resolve) })
  socket.close()
  await closed
  t.equal(reply, 'ws: hello')
})

t.test('a client that sends its headers too slowly is cut off (408) without starving others', async t => {
  const proxy = await startProxy(t, [{ domain: 'app.test', ports: [await listen(t, replica('a', { received: [] }))] }])
  const slow = connect(Number(proxy.url.port), '127.0.0.1')
  let heard = ''
  slow.on('data', (chunk: Buffer) => { heard += chunk.toString() })
  const closed = new Promise<void>(resolve => slow.once('close', () => { resolve() }))
  slow.write('GET /hello HTTP/1.1\r\nHost: app.test\r\n')
  const drip = setInterval(() => { if (!slow.destroyed) slow.write('X-Drip: 1\r\n') }, 200)
  t.teardown(() => { clearInterval(drip) })
  t.equal((await get(proxy, 'app.test', '/hello')).status, 200, 'others are served meanwhile')
  await Promise.race([closed, pollUntil(() => false, { timeout: 6000, what: 'the slow client to be cut off' })])
  t.match(heard, /^HTTP\/1\.1 408/)
})
