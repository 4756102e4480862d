// The proxy's fast lane against a replica that writes its answers as given here: every framing an
// answer can have (length, chunked, ended by close, HEAD, an interim 103, empty lines before it, a
// head and a body split across reads), heads passed on as they came with their hop-by-hop lines cut
// or written anew, a slow client's 64 MiB answer intact (over HTTP/2 too, and a 64 MiB upload to a
// replica slow to read it), kept connections reused
// and a stale one retried, and a client connection handed to the general path mid-way (a body,
// pipelined requests, HTTP/1.0) without losing or reordering a byte.
import t, { type Test } from 'tap'
import { Agent, request } from 'node:http'
import { connect as connectHttp2, type ClientHttp2Session } from 'node:http2'
import { connect, createServer, type Socket } from 'node:net'
import { connect as tlsConnect } from 'node:tls'
import { pollUntil } from '../../support/poll.js'
import { container, get, listen, spec, startProxy, type TestProxy } from '../../support/proxy.js'
import type { Upstream } from '../../../plugins/proxy/route-table.js'

interface ReplicaState { connections: number, requests: string[], big?: Socket, held?: Socket }

/** Answers by path, exactly as written here; `/once` answers only the first request of a connection. */
const ANSWERS: Record<string, string> = {
  '/len': 'HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: keep-alive\r\n\r\nhello',
  '/chunked': 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n',
  '/eof': 'HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil the end',
  '/head': 'HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n',
  '/hints': 'HTTP/1.1 103 Early Hints\r\nLink: </style.css>\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok',
  '/none': 'HTTP/1.1 204 No Content\r\n\r\n',
  '/once': 'HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nonce',
  // The head only: the test writes the body when it chooses (state.held).
  '/held': 'HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n',
  '/lead': '\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nlead',
  '/big': `HTTP/1.1 200 OK\r\nContent-Length: ${64 << 20}\r\n\r\n`,
  // Heads with hop-by-hop lines to cut, written the usual way or otherwise.
  '/hop': 'HTTP/1.1 200 OK\r\nConnection: keep-alive, X-Private\r\nX-Private: secret\r\nKeep-Alive: timeout=5\r\nServer: raw\r\nProxy-Connection: keep-alive\r\nContent-Length: 2\r\n\r\nok',
  '/spaced': 'HTTP/1.1 200 OK\r\nServer:raw \r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok',
  '/shifted': 'HTTP/1.1 200 OK\r\nX-A:b\r\nConnection:  keep-alive\r\nContent-Length: 2\r\n\r\nok',
  '/old': 'HTTP/1.0 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok',
  // 15 bytes of spaces in one line, a byte short in 15 others: where the Connection line would begin, the one before spells it.
  '/crafted': `HTTP/1.1 200 OK\r\nX-A:${' '.repeat(16)}Connection: y\r\nConnection: x\r\n${'ABCDEFGHIJKLMNO'.replace(/./g, c => `X-${c}:1\r\n`)}Content-Length: 2\r\n\r\nok`
}
/** Answers written in pieces, a few milliseconds apart, so that the proxy reads them apart: a head split inside its empty line, a body in three reads. */
const SPLIT: Record<string, string[]> = {
  '/split': ['HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r', '\nhel', 'lo wo', 'rld'],
  '/split-head': ['HTTP/1.1 200 OK\r\nCont', 'ent-Length: 5\r\n\r\nhel', 'lo']
}
/** A body whose every 64 KiB differs, so that a piece passed on twice or out of place shows. */
const BIG = Buffer.alloc(64 << 20)
for (let i = 0; i < BIG.length; i += 4) BIG.writeUInt32LE(i, i)

function rawReplica (state: ReplicaState): ReturnType<typeof createServer> {
  return createServer(socket => {
    state.connections++
    let pending = ''
    let served = 0
    socket.on('data', (chunk: Buffer) => {
      pending += chunk.toString('latin1')
      let end
      while ((end = pending.indexOf('\r\n\r\n')) !== -1) {
        const head = pending.slice(0, end)
        pending = pending.slice(end + 4)
        const [method, path] = head.split(' ')
        state.requests.push(`${method} ${path}`)
        if (path === '/once' && served > 0) {
          socket.destroy() // a kept connection the replica dropped: the proxy must not lose the request
          return
        }
        served++
        const pieces = SPLIT[path]
        if (pieces !== undefined) {
          socket.setNoDelay(true)
          pieces.forEach((piece, i) => { setTimeout(() => socket.write(piece), 5 * i) })
          continue
        }
        socket.write(ANSWERS[path] ?? 'HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n')
        if (path === '/big') {
          socket.write(BIG)
          state.big = socket
        }
        if (path === '/eof') socket.end()
        if (path === '/held') state.held = socket
      }
    })
    socket.on('error', () => {})
  })
}

/**
 * Write each of `writes` on a new connection to the proxy (`stepwise`: each once the answer before
 * it is whole) and read until `done` says the answers are complete or the proxy closes.
 */
async function exchange (proxy: TestProxy, writes: string[], done: (text: string) => boolean, stepwise = false): Promise<{ text: string, socket: Socket }> {
  const socket = connect(Number(proxy.url.port), '127.0.0.1')
  let text = ''
  socket.on('data', (chunk: Buffer) => { text += chunk.toString('latin1') })
  for (const [i, bytes] of writes.entries()) {
    socket.write(bytes)
    if (stepwise) await pollUntil(() => answersIn(text) > i && /(hello|0\r\n\r\n)$/.test(text), { what: `answer ${i + 1}` })
    else await new Promise(resolve => setImmediate(resolve))
  }
  await pollUntil(() => done(text) || socket.destroyed, { what: 'the answers through the proxy' })
  return { text, socket }
}

const answersIn = (text: string): number => text.match(/HTTP\/1\.1 \d{3} /g)?.length ?? 0

t.test('every framing of an answer passes the fast lane intact; kept connections are reused, a stale one retried', async t => {
  const state: ReplicaState = { connections: 0, requests: [] }
  const proxy = await startProxy(t, [{ domain: 'raw.test', ports: [await listen(t, rawReplica(state))] }])
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  t.teardown(() => { agent.destroy() })
  const fetchOne = async (path: string, method = 'GET'): Promise<{ status: number, headers: Record<string, unknown>, body: string }> => await new Promise((resolve, reject) => {
    request(new URL(path, proxy.url), { method, agent, headers: { host: 'raw.test' } }, response => {
      let body = ''
      response.on('data', (chunk: Buffer) => { body += chunk.toString() })
      response.on('end', () => { resolve({ status: response.statusCode ?? 0, headers: response.headers, body }) })
    }).on('error', reject).end()
  })

  for (let i = 0; i < 5; i++) t.same(await fetchOne('/len'), { status: 200, headers: { 'content-length': '5' }, body: 'hello' }, 'a length-framed answer; the replica\'s Connection header is dropped')
  t.equal(state.connections, 1, 'five requests, one kept connection to the replica')
  const chunked = await fetchOne('/chunked')
  t.same([chunked.status, chunked.body, chunked.headers['transfer-encoding']], [200, 'hello world', 'chunked'], 'a chunked answer is passed on chunked')
  const eof = await fetchOne('/eof')
  t.same([eof.status, eof.body, eof.headers['transfer-encoding']], [200, 'until the end', 'chunked'], 'an answer ended by the replica\'s close reaches the client whole, chunked, on a kept connection')
  const head = await fetchOne('/head', 'HEAD')
  t.same([head.status, head.headers['content-length'], head.body], [200, '100', ''], 'HEAD: the length of the body that is not sent')
  const hints = await fetchOne('/hints')
  t.same([hints.status, hints.body], [201, 'ok'], 'an interim 103 is not passed on; the final answer is')
  t.same((await fetchOne('/none')).status, 204)
  t.same(await fetchOne('/lead'), { status: 200, headers: { 'content-length': '4' }, body: 'lead' }, 'empty lines before the status line are skipped')
  t.same(await fetchOne('/split'), { status: 200, headers: { 'content-length': '11' }, body: 'hello world' }, 'a head split inside its empty line, a body in pieces')
  t.same(await fetchOne('/split-head'), { status: 200, headers: { 'content-length': '5' }, body: 'hello' }, 'a head in two reads')
  t.same(await fetchOne('/once'), { status: 200, headers: { 'content-length': '4' }, body: 'once' })
  t.same(await fetchOne('/once'), { status: 200, headers: { 'content-length': '4' }, body: 'once' }, 'the replica dropped the kept connection: the request went again on a new one')
  t.equal(state.requests.filter(r => r === 'GET /once').length, 4, 'each went on a kept connection the replica dropped, then on a new one')
  t.match(await proxy.exposition(), /^berth_proxy_requests_total\{route="raw\.test",class="2xx"\} 15$/m, 'counted per route')
  const deleted = await fetchOne('/once', 'DELETE')
  t.same([deleted.status, state.requests.filter(r => r === 'DELETE /once').length], [502, 1], 'a DELETE is not sent again: the replica may have acted on it')

  // One client connection across a change of the table: the next request follows it.
  const first = proxy.table.upstream('raw-1') as Upstream
  first.healthy = true // the failed DELETE took it out of rotation
  const moved: ReplicaState = { connections: 0, requests: [] }
  const movedPort = await listen(t, rawReplica(moved))
  const client = connect(Number(proxy.url.port), '127.0.0.1')
  t.teardown(() => { client.destroy() })
  let text = ''
  client.on('data', (chunk: Buffer) => { text += chunk.toString('latin1') })
  client.write('GET /len HTTP/1.1\r\nHost: raw.test\r\n\r\n')
  await pollUntil(() => text.endsWith('hello'), { what: 'the first answer' })
  proxy.table.replace([spec('raw.test', 1)], [container('raw', 2, movedPort)], '')
  const second = proxy.table.upstream('raw-2') as Upstream
  second.healthy = true // as its first probe would
  client.write('GET /len HTTP/1.1\r\nHost: raw.test\r\n\r\n')
  await pollUntil(() => answersIn(text) === 2 && text.endsWith('hello'), { what: 'the second answer' })
  t.same(moved.requests, ['GET /len'], 'the second request on the same connection went to the replica the new table names')
})

t.test('a connection moves to the general path for a body, pipelined requests or HTTP/1.0, and nothing is lost or reordered', async t => {
  const state: ReplicaState = { connections: 0, requests: [] }
  const proxy = await startProxy(t, [{ domain: 'raw.test', ports: [await listen(t, rawReplica(state))] }])

  // A GET on the lane, then a POST with a body (general path), then a GET on the same connection.
  // node:http's answers carry its Keep-Alive header; the lane passes on the replica's headers only.
  const mixed = await exchange(proxy, [
    'GET /len HTTP/1.1\r\nHost: raw.test\r\n\r\n',
    'POST /len HTTP/1.1\r\nHost: raw.test\r\nContent-Length: 3\r\n\r\nabc',
    'GET /chunked HTTP/1.1\r\nHost: raw.test\r\n\r\n'
  ], text => answersIn(text) === 3 && text.endsWith('0\r\n\r\n'), true)
  mixed.socket.destroy()
  const [lane, general, after] = mixed.text.split(/(?=HTTP\/1\.1 200 OK)/)
  t.match(lane, /^HTTP\/1\.1 200 OK\r\nContent-Length: 5\r\n\r\nhello$/, 'the GET on the lane')
  t.match(general, /^HTTP\/1\.1 200 OK\r\n[^]*Keep-Alive: timeout=30\r\n\r\nhello$/, 'the POST on the general path')
  t.match(after, /^HTTP\/1\.1 200 OK\r\n[^]*Keep-Alive: timeout=30\r\n[^]*5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n$/, 'the connection stays there')
  t.same(state.requests.slice(0, 3), ['GET /len', 'POST /len', 'abcGET /chunked'], 'the body went with its request')

  // A request and the start of the next in one write; the rest of the next once the first is answered.
  const pipelined = await exchange(proxy, ['GET /len HTTP/1.1\r\nHost: raw.test\r\n\r\nGET /chunked HTTP/1.1\r\nHo', 'st: raw.test\r\n\r\n'],
    text => answersIn(text) === 2 && text.endsWith('0\r\n\r\n'), true)
  pipelined.socket.destroy()
  t.match(pipelined.text, /^HTTP\/1\.1 200 OK\r\n[^]*Keep-Alive: timeout=30\r\n\r\nhello/, 'the read held the start of a second request: the general path answered from the first')
  t.match(pipelined.text, /hello[^]*HTTP\/1\.1 200 OK[^]*hello[^]*world/, 'pipelined requests answered in order')

  // A head split across three writes stays on the lane.
  const split = await exchange(proxy, ['GET /len HT', 'TP/1.1\r\nHost: ra', 'w.test\r\n\r\n'], text => text.endsWith('hello'))
  split.socket.destroy()
  t.match(split.text, /^HTTP\/1\.1 200 OK\r\n/)

  // Other spacing, and an empty line before the request line: one request all the same, on the lane.
  const spaced = await exchange(proxy, ['\r\nGET /len HTTP/1.1\r\nHost:raw.test  \r\n\r\n'], text => text.endsWith('hello'))
  spaced.socket.destroy()
  t.match(spaced.text, /^HTTP\/1\.1 200 OK\r\nContent-Length: 5\r\n\r\nhello$/, 'other spacing, an empty line before it: the lane answered')

  // HTTP/1.0 and Connection: close: the connection ends after the answer.
  for (const version of ['HTTP/1.0', 'HTTP/1.1']) {
    const closing = await exchange(proxy, [`GET /len ${version}\r\nHost: raw.test\r\nConnection: close\r\n\r\n`], () => false)
    t.match(closing.text, /^HTTP\/1\.1 200 OK\r\n[^]*\r\n\r\nhello$/, `${version}, Connection: close: answered, then closed`)
  }

  // A request the lane cannot route goes to the general path, which answers 404 on the same connection.
  const unknown = await exchange(proxy, ['GET / HTTP/1.1\r\nHost: nobody.test\r\nAccept: application/json\r\n\r\n', 'GET /len HTTP/1.1\r\nHost: raw.test\r\n\r\n'],
    text => answersIn(text) === 2 && text.endsWith('hello'))
  unknown.socket.destroy()
  t.match(unknown.text, /^HTTP\/1\.1 404 Not Found[^]*\{"error":"no service is served at nobody\.test","code":"BERTH_NOT_FOUND"\}HTTP\/1\.1 200 OK/)
  t.same((await get(proxy, 'raw.test', '/len')).body, 'hello')
})

t.test('an answer\'s head goes on as it came, its hop-by-hop lines cut; one written another way is written anew', async t => {
  const state: ReplicaState = { connections: 0, requests: [] }
  const proxy = await startProxy(t, [{ domain: 'raw.test', ports: [await listen(t, rawReplica(state))] }])
  const answer = async (path: string): Promise<string> => {
    const { text, socket } = await exchange(proxy, [`GET ${path} HTTP/1.1\r\nHost: raw.test\r\n\r\n`], text => text.endsWith('\r\n\r\nok'))
    socket.destroy()
    return text
  }
  const twice = async (path: string): Promise<string[]> => [await answer(path), await answer(path)]
  t.same(await twice('/hop'), Array(2).fill('HTTP/1.1 200 OK\r\nServer: raw\r\nContent-Length: 2\r\n\r\nok'),
    'Connection, the header it names, Keep-Alive and Proxy-Connection are cut; the rest is as the replica wrote it')
  t.same(await twice('/spaced'), Array(2).fill('HTTP/1.1 200 OK\r\nServer:raw \r\nContent-Length: 2\r\n\r\nok'),
    'other spacing within a line that keeps its usual length: the line goes on as it came')
  t.same(await twice('/shifted'), Array(2).fill('HTTP/1.1 200 OK\r\nX-A: b\r\nContent-Length: 2\r\n\r\nok'),
    'lines shorter and longer than usual: the head is written anew, the Connection line where it is and not a byte beside it')
  t.same(await twice('/crafted'), Array(2).fill(`HTTP/1.1 200 OK\r\nX-A: Connection: y\r\n${'ABCDEFGHIJKLMNO'.replace(/./g, c => `X-${c}: 1\r\n`)}Content-Length: 2\r\n\r\nok`),
    'a header\'s name inside another line, where a line would begin if all were written the usual way: written anew')
  t.same(await twice('/old'), Array(2).fill('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok'), 'an HTTP/1.0 answer is written anew as HTTP/1.1')
})

t.test('a kept connection silent for the idle timeout is closed; one in use is not', async t => {
  const state: ReplicaState = { connections: 0, requests: [] }
  const proxy = await startProxy(t, [{ domain: 'raw.test', ports: [await listen(t, rawReplica(state))] }], { settings: { client_idle_timeout_secs: 1 } })
  const open = async (): Promise<{ socket: Socket, answers: () => number, closedAt: () => number }> => {
    const socket = connect(Number(proxy.url.port), '127.0.0.1')
    t.teardown(() => { socket.destroy() })
    let text = ''
    let closedAt = 0
    socket.on('data', (chunk: Buffer) => { text += chunk.toString('latin1') })
    socket.on('close', () => { closedAt = Date.now() })
    return { socket, answers: () => answersIn(text), closedAt: () => closedAt }
  }
  const silent = await open()
  const busy = await open()
  const started = Date.now()
  for (const { socket } of [silent, busy]) socket.write('GET /len HTTP/1.1\r\nHost: raw.test\r\n\r\n')
  await pollUntil(() => silent.answers() === 1 && busy.answers() === 1, { what: 'the first answers' })
  // One connection asks again every 200 ms for 3 s; the other says nothing after its answer.
  for (let i = 2; i <= 15; i++) {
    await pollUntil(() => Date.now() - started >= i * 200, { interval: 20, what: 'the next turn' })
    busy.socket.write('GET /len HTTP/1.1\r\nHost: raw.test\r\n\r\n')
    await pollUntil(() => busy.answers() === i, { what: `answer ${i}` })
  }
  t.ok(silent.closedAt() > 0, 'the silent connection was closed')
  t.ok(silent.closedAt() - started >= 1000, `not before its idle timeout (${silent.closedAt() - started} ms)`)
  t.equal(busy.closedAt(), 0, 'the connection in use stays open')
})

t.test('a listener closing while an answer is on its way: the connection its head kept alive serves the next request, which says close', async t => {
  const state: ReplicaState = { connections: 0, requests: [] }
  const proxy = await startProxy(t, [{ domain: 'raw.test', ports: [await listen(t, rawReplica(state))] }])
  const socket = connect(Number(proxy.url.port), '127.0.0.1')
  t.teardown(() => { socket.destroy() })
  let text = ''
  let closed = false
  socket.on('data', (chunk: Buffer) => { text += chunk.toString('latin1') })
  socket.on('close', () => { closed = true })
  socket.on('error', () => {})
  socket.write('GET /held HTTP/1.1\r\nHost: raw.test\r\n\r\n')
  await pollUntil(() => state.held !== undefined && text.includes('\r\n\r\n'), { what: 'the head of the held answer' })
  t.notMatch(text, /connection: close/i, 'the head went out keeping the connection alive')
  proxy.front.drain()
  state.held?.write('hello')
  await pollUntil(() => text.endsWith('hello'), { what: 'the body after the drain began' })
  // The client may reuse the connection at once: it must be answered there, not reset.
  socket.write('GET /len HTTP/1.1\r\nHost: raw.test\r\n\r\n')
  await pollUntil(() => answersIn(text) === 2 && text.endsWith('hello') && closed, { what: 'the second answer, then the close' })
  t.match(text.slice(text.lastIndexOf('HTTP/1.1 ')), /^HTTP\/1\.1 200 [^]*connection: close\r\n/i, 'the second answer says close')
  t.same(state.requests, ['GET /held', 'GET /len'])
})

for (const scheme of ['http', 'https'] as const) {
  t.test(`${scheme}: a client that does not read holds the replica back instead of filling the proxy's memory, then gets all of it`, async t => {
    const state: ReplicaState = { connections: 0, requests: [] }
    const proxy = await startProxy(t, [{ domain: 'raw.test', ports: [await listen(t, rawReplica(state))] }], { tls: scheme === 'https' })
    const socket = scheme === 'http' ? connect(Number(proxy.url.port), '127.0.0.1') : tlsConnect({ port: proxy.tlsPort, host: '127.0.0.1', servername: 'raw.test', rejectUnauthorized: false })
    t.teardown(() => { socket.destroy() })
    socket.pause()
    socket.write('GET /big HTTP/1.1\r\nHost: raw.test\r\n\r\n')
    await pollUntil(() => state.big !== undefined, { what: 'the replica to start its answer' })
    // Kernel buffers take some megabytes; past them the proxy stops reading and the replica keeps the rest.
    await pollUntil(() => (state.big?.writableLength ?? 0) > 32 << 20 && state.big?.writableNeedDrain === true, { what: 'the replica to be held back' })
    const chunks: Buffer[] = []
    let received = 0
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk)
      received += chunk.length
    })
    socket.resume()
    await pollUntil(() => received >= (64 << 20) + 40, { timeout: 30_000, what: 'the whole answer at the client' })
    t.equal(state.big?.writableLength, 0, 'the replica wrote all of it once the client read')
    const answer = Buffer.concat(chunks)
    const body = answer.subarray(answer.indexOf('\r\n\r\n') + 4)
    t.ok(body.equals(BIG), 'the client got the 64 MiB body byte for byte')
  })
}

/** Wait until `measure` gives the same figure twice, a quarter of a second apart. */
async function settled (measure: () => number, what: string): Promise<void> {
  let last = -1
  await pollUntil(() => {
    const now = measure()
    const same = now === last
    last = now
    return same
  }, { interval: 250, what })
}

/** An HTTP/2 session with the proxy's HTTPS listener for raw.test, closed when the test ends. */
function http2Session (t: Test, proxy: TestProxy): ClientHttp2Session {
  const session = connectHttp2(`https://127.0.0.1:${proxy.tlsPort as number}`, { servername: 'raw.test', rejectUnauthorized: false })
  session.on('error', () => {})
  t.teardown(() => { session.destroy() })
  return session
}

t.test('HTTP/2: a client that does not read holds the replica back instead of filling the proxy\'s memory, then gets all of it', async t => {
  const state: ReplicaState = { connections: 0, requests: [] }
  const proxy = await startProxy(t, [{ domain: 'raw.test', ports: [await listen(t, rawReplica(state))] }], { tls: true })
  const stream = http2Session(t, proxy).request({ ':path': '/big' })
  stream.pause()
  await pollUntil(() => state.big !== undefined, { what: 'the replica to start its answer' })
  // The client's flow-control window stays shut: the lane stops reading the replica, which keeps the
  // rest unwritten (its handle's queue) once kernel buffers are full.
  const unwritten = (): number => (state.big as unknown as { _handle?: { writeQueueSize: number } | null })._handle?.writeQueueSize ?? 0
  await settled(unwritten, 'the answer to stall')
  t.ok(unwritten() > 32 << 20, `the replica still holds ${unwritten() >> 20} MiB of its 64`)
  const chunks: Buffer[] = []
  stream.on('data', (chunk: Buffer) => { chunks.push(chunk) })
  stream.resume()
  await new Promise(resolve => stream.once('end', resolve))
  t.equal(state.big?.writableLength, 0, 'the replica wrote all of it once the client read')
  t.ok(Buffer.concat(chunks).equals(BIG), 'the client got the 64 MiB body byte for byte')
})

t.test('HTTP/2: an upload to a replica that does not read holds the client back instead of filling the proxy\'s memory, then arrives whole', async t => {
  let sink: Socket | undefined
  const body: Buffer[] = []
  let received = 0
  const replica = createServer(socket => {
    let head = ''
    socket.on('data', (chunk: Buffer) => {
      if (sink === undefined) {
        head += chunk.toString('latin1')
        const end = head.indexOf('\r\n\r\n')
        if (end === -1) return
        // The head is read; the body waits until the test says.
        sink = socket
        socket.pause()
        chunk = chunk.subarray(chunk.length - (head.length - end - 4))
      }
      body.push(chunk)
      received += chunk.length
      if (received === BIG.length) socket.write('HTTP/1.1 201 Created\r\nContent-Length: 6\r\n\r\nstored')
    })
    socket.on('error', () => {})
  })
  const proxy = await startProxy(t, [{ domain: 'raw.test', ports: [await listen(t, replica)] }], { tls: true })
  const stream = http2Session(t, proxy).request({ ':method': 'PUT', ':path': '/sink', 'content-length': String(BIG.length) })
  for (let at = 0; at < BIG.length; at += 1 << 20) stream.write(BIG.subarray(at, at + (1 << 20)))
  stream.end()
  await pollUntil(() => sink !== undefined, { what: 'the request\'s head at the replica' })
  // Once kernel buffers and flow-control windows are full, the client's stream keeps the rest.
  await settled(() => stream.writableLength, 'the upload to stall')
  t.ok(stream.writableLength > 32 << 20, `the client still holds ${stream.writableLength >> 20} MiB of its 64`)
  let answer = ''
  stream.on('response', headers => { answer += `${headers[':status']} ` })
  stream.on('data', (chunk: Buffer) => { answer += chunk.toString() })
  sink?.resume()
  await new Promise(resolve => stream.once('end', resolve))
  t.equal(answer, '201 stored', 'the replica answered once it had the body')
  t.ok(Buffer.concat(body).equals(BIG), 'the replica got the 64 MiB body byte for byte')
})
