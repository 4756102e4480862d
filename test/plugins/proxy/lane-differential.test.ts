// The fast lane against the general path, differentially: the same client bytes (heads split across
// reads, keep-alive sequences, pipelined requests, request bodies in a length or chunked, a WebSocket
// upgrade, HTTP/1.0, bad requests, a slow reader of a large answer) are sent through a proxy with
// [proxy].fast_lane on and one with it off, in front of the same replica, and what the client reads
// and what the replica receives must be the same: start lines, header lines in order and bodies byte
// for byte as framed, except the spelling of header names (the lane keeps the replica's, node:http
// and undici write them in lower case) and the lines each path writes itself (Date, Connection,
// Keep-Alive). The garbage collector runs every few milliseconds meanwhile: a piece of a read buffer
// that a write still needs must stay owned until it is written.
// Over HTTP/2 the same: requests of a node:http2 client (GET, HEAD, POST with bodies by length and
// without one, 4 MiB up and down, chunked and close-delimited answers, 5xx, a replica gone or
// silent, one closing mid-answer, headers HTTP/2 forbids or cannot carry, HSTS and extra headers, an
// unknown host) get the same status, headers (less Date), body and stream reset through both, and
// the replica gets the same requests (header lines as a set: undici puts the body's framing last);
// a client resetting a stream mid-answer closes the replica's connection under it, and the requests
// after it on the same pool get their own answers.
import t, { type Test } from 'tap'
import { createHash } from 'node:crypto'
import { once } from 'node:events'
import { connect as connectHttp2, constants, type ClientHttp2Session, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http2'
import { connect, createServer, type Socket } from 'node:net'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { pollUntil } from '../../support/poll.js'
import { listen, startProxy, type TestProxy, type TestRoute } from '../../support/proxy.js'

/** Answers by path, exactly as the replica writes them. */
const ANSWERS: Record<string, string> = {
  '/len': 'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello',
  '/chunked': 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n',
  '/hop': 'HTTP/1.1 200 OK\r\nConnection: keep-alive, X-Private\r\nX-Private: secret\r\nKeep-Alive: timeout=5\r\nServer: raw\r\nContent-Length: 2\r\n\r\nok',
  '/none': 'HTTP/1.1 204 No Content\r\n\r\n',
  '/missing': 'HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\nnot found',
  '/upload': 'HTTP/1.1 201 Created\r\nContent-Length: 7\r\n\r\nstored\n',
  '/fail': 'HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nRetry-After: 3\r\nContent-Length: 5\r\n\r\nbusy\n',
  '/own-hsts': 'HTTP/1.1 200 OK\r\nStrict-Transport-Security: max-age=60\r\nContent-Length: 2\r\n\r\nok',
  '/cookies': 'HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\nX-Twice: 1\r\nx-twice: 2\r\nContent-Length: 2\r\n\r\nok',
  // Headers HTTP/2 forbids: hop-by-hop ones, and HTTP2-Settings.
  '/h2-forbidden': 'HTTP/1.1 200 OK\r\nConnection: keep-alive, X-Private\r\nX-Private: 1\r\nKeep-Alive: timeout=5\r\nProxy-Connection: keep-alive\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\nServer: raw\r\nContent-Length: 2\r\n\r\nok',
  // A header HTTP/2 allows once, twice: an answer it cannot carry.
  '/dup': 'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Type: text/html\r\nContent-Length: 2\r\n\r\nok',
  // The same with headers the proxy's 502 must not take from it.
  '/dup-cookie': 'HTTP/1.1 200 OK\r\nDate: Thu, 01 Jan 1970 00:00:00 GMT\r\nSet-Cookie: session=refused\r\nStrict-Transport-Security: max-age=60\r\nX-Replica: 1\r\nContent-Type: text/plain\r\nContent-Type: text/html\r\nContent-Length: 2\r\n\r\nok'
}
/** A large answer whose every 4 bytes differ, for the slow reader. */
const LARGE = Buffer.alloc(4 << 20)
for (let i = 0; i < LARGE.length; i += 4) LARGE.writeUInt32LE(i, i)

interface Replica {
  port: number
  received: string[]
  /** Connections on which `/trickle` started a 4 MiB answer of which the replica wrote 64 KiB. */
  trickles: Socket[]
}

/** A chunked body without its framing. */
function dechunk (framed: Buffer): Buffer {
  const pieces: Buffer[] = []
  let at = 0
  for (;;) {
    const line = framed.indexOf('\r\n', at)
    const size = parseInt(framed.subarray(at, line).toString('latin1'), 16)
    if (size === 0 || Number.isNaN(size)) return Buffer.concat(pieces)
    pieces.push(framed.subarray(line + 2, line + 2 + size))
    at = line + 2 + size + 2
  }
}

/**
 * A replica that notes every request as received (head and body) and answers from ANSWERS; `/ws`
 * upgrades and echoes; `/echo` answers the request's body; `/id/<n>` answers `answer <n>`; `/slow`
 * never answers; `/cut` closes after 10 bytes of a 100-byte body; `/eof` ends its answer by closing.
 */
async function replica (t: Test): Promise<Replica> {
  const received: string[] = []
  const trickles: Socket[] = []
  const server = createServer(socket => {
    let pending = Buffer.alloc(0)
    let upgraded = false
    socket.on('data', (chunk: Buffer) => {
      if (upgraded) {
        socket.write(chunk)
        return
      }
      pending = Buffer.concat([pending, chunk])
      for (;;) {
        const end = pending.indexOf('\r\n\r\n')
        if (end === -1) return
        const head = pending.subarray(0, end).toString('latin1')
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0)
        const chunked = /\r\ntransfer-encoding: *chunked/i.test(head)
        let bodyEnd = end + 4 + length
        if (chunked) {
          const last = pending.indexOf('\r\n0\r\n\r\n', end + 2)
          if (last === -1) return
          bodyEnd = last + 7
        }
        if (pending.length < bodyEnd) return
        received.push(pending.subarray(0, bodyEnd).toString('latin1'))
        pending = pending.subarray(bodyEnd)
        const path = head.split(' ')[1].split('?')[0]
        if (path === '/ws') {
          upgraded = true
          socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n')
          if (pending.length > 0) socket.write(pending)
          return
        }
        if (path === '/large' || path === '/trickle') {
          socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${LARGE.length}\r\n\r\n`)
          if (path === '/large') socket.write(LARGE)
          else {
            socket.write(LARGE.subarray(0, 65536))
            trickles.push(socket)
          }
          continue
        }
        if (path === '/echo') {
          const body = received[received.length - 1].slice(end + 4)
          const echoed = chunked ? dechunk(Buffer.from(body, 'latin1')) : Buffer.from(body, 'latin1')
          socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${echoed.length}\r\n\r\n`)
          socket.write(echoed)
          continue
        }
        const id = /^\/id\/(\d+)$/.exec(path)?.[1]
        if (id !== undefined) socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${7 + id.length}\r\n\r\nanswer ${id}`)
        else if (path === '/cut') {
          socket.end('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789')
          return
        } else if (path === '/eof') {
          socket.end('HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil the end')
          return
        } else if (path !== '/slow') socket.write(ANSWERS[path] ?? 'HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n')
      }
    })
    socket.on('error', () => {})
  })
  return { port: await listen(t, server), received, trickles }
}

interface Scenario {
  name: string
  /** Written one after the other, each after the proxy has had a turn to read the one before. */
  writes: string[]
  /** Answers to wait for (the exchange also ends when the proxy closes the connection). */
  answers: number
  /** Each write once the answers before it are whole (else one after the other: pipelined, or one request in parts). */
  stepwise?: boolean
  /** The writes hold several requests at once. */
  pipelined?: boolean
  /** The answers are to HEAD. */
  bodiless?: boolean
  /** The client reads the answers in small steps, holding them back in between. */
  slowRead?: boolean
  /** Written once the answers have come (the upgraded connection's echo). */
  after?: string
}

const get = (path: string, extra = ''): string => `GET ${path} HTTP/1.1\r\nHost: diff.test\r\nUser-Agent: differential\r\n${extra}\r\n`

const SCENARIOS: Scenario[] = [
  { name: 'one request', writes: [get('/len')], answers: 1 },
  { name: 'a keep-alive sequence of every framing', writes: [get('/len'), get('/chunked'), get('/hop'), get('/none'), get('/missing')], answers: 5, stepwise: true },
  { name: 'a head split across reads', writes: ['GET /len HT', 'TP/1.1\r\nHost: di', 'ff.test\r\nUser-Agent: differential\r', '\n\r\n'], answers: 1 },
  { name: 'HEAD', writes: ['HEAD /len HTTP/1.1\r\nHost: diff.test\r\n\r\n'], answers: 1, bodiless: true },
  { name: 'pipelined requests', writes: [get('/len') + get('/chunked') + get('/hop')], answers: 3, pipelined: true },
  { name: 'a body with a length', writes: [get('/len'), 'POST /upload HTTP/1.1\r\nHost: diff.test\r\nContent-Type: text/plain\r\nContent-Length: 11\r\n\r\nhello', ' world', get('/len')], answers: 3 },
  // Without a body nor its framing: a method that gives content a meaning goes on with `content-length: 0`.
  { name: 'POST, PUT and PATCH without a body', writes: ['POST /upload HTTP/1.1\r\nHost: diff.test\r\n\r\n', 'PUT /upload HTTP/1.1\r\nHost: diff.test\r\n\r\n', 'PATCH /upload HTTP/1.1\r\nHost: diff.test\r\n\r\n', 'DELETE /len HTTP/1.1\r\nHost: diff.test\r\n\r\n'], answers: 4, stepwise: true },
  { name: 'a chunked body', writes: ['POST /upload HTTP/1.1\r\nHost: diff.test\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n', '6\r\n world\r\n0\r\n\r\n'], answers: 1 },
  { name: 'a WebSocket upgrade', writes: [get('/ws', 'Connection: Upgrade\r\nUpgrade: websocket\r\n')], answers: 1, after: 'echo me' },
  { name: 'HTTP/1.0', writes: ['GET /len HTTP/1.0\r\nHost: diff.test\r\n\r\n'], answers: 1 },
  { name: 'connection: close', writes: [get('/len', 'Connection: close\r\n')], answers: 1 },
  { name: 'an unknown host', writes: ['GET / HTTP/1.1\r\nHost: nobody.test\r\n\r\n'], answers: 1 },
  { name: 'a malformed request', writes: ['GET /len HTTP/1.1\r\nHost diff.test\r\n\r\n'], answers: 1 },
  { name: 'a slow reader of 4 MiB', writes: [get('/large') + get('/len')], answers: 2, pipelined: true, slowRead: true },
  ...[1, 2, 3].map(n => ({ name: `a slow reader, one request (${n})`, writes: [get('/large')], answers: 1, slowRead: true }))
]

/** Run `scenario` through `proxy`: what the client read, and what the replica received meanwhile. */
async function exchange (proxy: TestProxy, target: Replica, scenario: Scenario): Promise<{ read: string[], received: string[], raw: string }> {
  const before = target.received.length
  const socket: Socket = connect(Number(proxy.url.port), '127.0.0.1')
  const pieces: Buffer[] = []
  socket.on('data', (chunk: Buffer) => { pieces.push(chunk) })
  socket.on('error', () => {})
  const text = (): string => Buffer.concat(pieces).toString('latin1')
  const answered = (count: number): Message[] | undefined => messages(text(), count, scenario.bodiless === true)
  if (scenario.slowRead === true) socket.pause()
  for (const [i, write] of scenario.writes.entries()) {
    socket.write(write)
    if (scenario.stepwise === true) await pollUntil(() => answered(i + 1) !== undefined || socket.destroyed, { what: `answer ${i + 1} of '${scenario.name}'` })
    else await new Promise(resolve => setImmediate(resolve))
  }
  if (scenario.slowRead === true) {
    // The answer waits until the proxy has the request; then it is read in small steps.
    await pollUntil(() => target.received.length > before, { what: 'the large request at the replica' })
    while (!socket.destroyed && answered(scenario.answers) === undefined) {
      socket.resume()
      await new Promise(resolve => setImmediate(resolve))
      socket.pause()
      await pollUntil(() => socket.readableLength > 0 || socket.destroyed || answered(scenario.answers) !== undefined, { what: 'more of the large answer' })
    }
    socket.resume()
  }
  await pollUntil(() => answered(scenario.answers) !== undefined || socket.destroyed, { what: `the answers of '${scenario.name}'` })
  if (scenario.after !== undefined) {
    const upgraded = text().length
    socket.write(scenario.after)
    await pollUntil(() => text().length >= upgraded + scenario.after!.length, { what: 'the echo through the upgraded connection' })
  }
  socket.destroy()
  const received = target.received.slice(before).map(request => {
    const end = request.indexOf('\r\n\r\n')
    return normalised({ head: request.slice(0, end), body: request.slice(end + 4) })
  })
  // Pipelined requests may leave the general path side by side, in any order.
  if (scenario.pipelined === true) received.sort()
  return { read: (messages(text(), scenario.answers, scenario.bodiless === true) ?? [{ head: text(), body: '' }]).map(normalised), received, raw: text() }
}

interface Message { head: string, body: string }

/**
 * Cut `text` into messages (heads with their bodies, by length or chunked, or none; an upgrade's
 * answer takes the rest; `bodiless`: answers to HEAD). Undefined while the last of `count` is incomplete.
 */
function messages (text: string, count: number, bodiless: boolean): Message[] | undefined {
  const found: Message[] = []
  let at = 0
  while (found.length < count && at < text.length) {
    const end = text.indexOf('\r\n\r\n', at)
    if (end === -1) return undefined
    const head = text.slice(at, end)
    let bodyEnd = end + 4
    if (/^HTTP\/1\.[01] 101 /.test(head)) bodyEnd = text.length
    else if (/\r\ntransfer-encoding: *chunked/i.test(head)) {
      const last = text.indexOf('\r\n0\r\n\r\n', end)
      if (last === -1) return undefined
      bodyEnd = last + 7
    } else if (!bodiless) bodyEnd += Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0)
    if (text.length < bodyEnd) return undefined
    found.push({ head, body: text.slice(end + 4, bodyEnd) })
    at = bodyEnd
  }
  return found.length === count ? found : undefined
}

/** Lines both paths may write their own way: node:http adds Date and its keep-alive lines, undici its connection line. */
const OWN_LINES = /^(date|connection|keep-alive):/i

/**
 * A message as both paths must agree on it: the start line, the header lines in order with their
 * names in lower case (names are case-insensitive; the lane keeps the replica's spelling), less the
 * lines each writes itself, and the body byte for byte as framed.
 */
function normalised ({ head, body }: Message): string {
  const [start, ...lines] = head.split('\r\n')
  const kept = lines.filter(line => !OWN_LINES.test(line)).map(line => line.replace(/^[^:]+/, name => name.toLowerCase()))
  return [start, ...kept].join('\n') + '\n\n' + body
}

/** A full collection every `ms` until the test ends. */
function collectGarbageEvery (t: Test, ms: number): void {
  setFlagsFromString('--expose-gc')
  const collect = runInNewContext('gc') as () => void
  const timer = setInterval(collect, ms)
  t.teardown(() => { clearInterval(timer) })
}

t.test('the fast lane and the general path answer the same bytes and forward the same bytes', async t => {
  collectGarbageEvery(t, 2)
  const target = await replica(t)
  const routes = [{ domain: 'diff.test', ports: [target.port] }]
  const lane = await startProxy(t, routes)
  const general = await startProxy(t, routes, { settings: { fast_lane: false } })
  for (const scenario of SCENARIOS) {
    const { raw: laneRaw, ...onLane } = await exchange(lane, target, scenario)
    const { raw: generalRaw, ...onGeneral } = await exchange(general, target, scenario)
    t.ok(onLane.read.length > 0, `${scenario.name}: an answer`)
    t.same(onLane, onGeneral, scenario.name)
    if (scenario.name.startsWith('POST, PUT and PATCH')) {
      t.same(onLane.received.map(request => /\ncontent-length: 0\n/.test(request)), [true, true, true, false], 'a body-less POST, PUT and PATCH say their empty length, a DELETE does not')
    }
    if (scenario.name === 'one request') {
      // Each proxy took its own path: the lane passes the replica's head on as written, node:http writes its own.
      t.match(laneRaw, /^HTTP\/1\.1 200 OK\r\nContent-Type: text\/plain\r\nContent-Length: 5\r\n\r\nhello$/, 'the lane served it')
      t.match(generalRaw, /\r\ncontent-length: 5\r\nDate: /, 'the general path served it')
    }
  }
})

interface Http2Scenario {
  name: string
  /** The request's headers (`:authority` is diff.test unless given). */
  headers: OutgoingHttpHeaders
  /** The body, written in these pieces (with `content-length` when the headers say it). */
  body?: Buffer[]
  /** Headers the paths may set apart on this answer. */
  ignoreHeaders?: string[]
}

/** 4 MiB whose every 4 bytes differ, for an upload and its echo. */
const UPLOAD = Buffer.from(LARGE)

const HTTP2_SCENARIOS: Http2Scenario[] = [
  { name: 'a GET with a query and split cookies', headers: { ':path': '/len?x=1', cookie: ['a=1', 'b=2'], 'user-agent': 'differential' } },
  { name: 'HEAD', headers: { ':method': 'HEAD', ':path': '/len' } },
  { name: 'a chunked answer', headers: { ':path': '/chunked' } },
  { name: 'an answer ended by the replica\'s close', headers: { ':path': '/eof' } },
  { name: 'a 204', headers: { ':path': '/none' } },
  { name: 'a 404 of the replica', headers: { ':path': '/missing', accept: 'application/json' } },
  { name: 'a 503 of the replica', headers: { ':path': '/fail' } },
  { name: 'headers HTTP/2 forbids', headers: { ':path': '/h2-forbidden' } },
  { name: 'repeated headers', headers: { ':path': '/cookies' } },
  { name: 'a header HTTP/2 cannot carry twice: 502', headers: { ':path': '/dup' } },
  { name: 'the same with a cookie and HSTS of the replica: 502', headers: { ':path': '/dup-cookie' } },
  { name: 'the replica\'s own HSTS', headers: { ':path': '/own-hsts' } },
  { name: 'a POST with a length', headers: { ':method': 'POST', ':path': '/upload', 'content-type': 'text/plain', 'content-length': '11' }, body: [Buffer.from('hello'), Buffer.from(' world')] },
  { name: 'a POST without a length', headers: { ':method': 'POST', ':path': '/upload' }, body: [Buffer.from('hello'), Buffer.from(' world')] },
  { name: 'a POST without a body', headers: { ':method': 'POST', ':path': '/upload' } },
  { name: 'a DELETE', headers: { ':method': 'DELETE', ':path': '/len' } },
  { name: '4 MiB up and back', headers: { ':method': 'PUT', ':path': '/echo', 'content-length': String(UPLOAD.length) }, body: [UPLOAD.subarray(0, 1 << 20), UPLOAD.subarray(1 << 20)] },
  { name: '4 MiB up without a length, and back', headers: { ':method': 'POST', ':path': '/echo' }, body: [UPLOAD.subarray(0, 3 << 20), UPLOAD.subarray(3 << 20)] },
  { name: '4 MiB down', headers: { ':path': '/large' } },
  { name: 'the replica closing mid-answer', headers: { ':path': '/cut' } },
  { name: 'a silent replica: 504', headers: { ':path': '/slow' } },
  { name: 'no HSTS, an extra header', headers: { ':path': '/len', ':authority': 'plain.test' } },
  { name: 'an unknown host', headers: { ':path': '/', ':authority': 'nobody.test' } },
  { name: 'a replica gone: 502', headers: { ':path': '/', ':authority': 'gone.test', accept: 'application/json' } }
]

interface Http2Outcome { status: number, headers: IncomingHttpHeaders, body: string, reset: number }

/** What a client reads of a stream: a long body as its length and digest. */
function told (body: Buffer): string {
  return body.length > 4096 ? `${body.length} bytes, sha256 ${createHash('sha256').update(body).digest('hex')}` : body.toString('latin1')
}

/** One stream on `session`: what its client reads (`resetAfter`: reset once that many bytes of the answer have come). */
async function http2Exchange (session: ClientHttp2Session, headers: OutgoingHttpHeaders, body?: Buffer[], resetAfter?: number): Promise<Http2Outcome> {
  const stream = session.request({ ':authority': 'diff.test', ...headers }, { endStream: body === undefined })
  for (const piece of body ?? []) stream.write(piece)
  if (body !== undefined) stream.end()
  return await new Promise(resolve => {
    let answer: IncomingHttpHeaders = {}
    const pieces: Buffer[] = []
    let read = 0
    stream.on('response', received => { answer = received })
    stream.on('data', (piece: Buffer) => {
      pieces.push(piece)
      read += piece.length
      if (resetAfter !== undefined && read >= resetAfter && !stream.closed) stream.close(constants.NGHTTP2_CANCEL)
    })
    stream.on('error', () => {})
    stream.on('close', () => {
      const { ':status': status, date: _date, ...rest } = answer
      resolve({ status: Number(status), headers: rest, body: told(Buffer.concat(pieces)), reset: stream.rstCode ?? 0 })
    })
  })
}

/**
 * A request as the replica got it from either path: the request line, its header lines as a set
 * (names in lower case), less those each path writes its own way, and its body without its framing.
 */
function receivedOverHttp2 (request: string): string {
  const end = request.indexOf('\r\n\r\n')
  const [start, ...lines] = request.slice(0, end).split('\r\n')
  const kept = lines.filter(line => !OWN_LINES.test(line)).map(line => line.replace(/^[^:]+/, name => name.toLowerCase())).sort()
  const framed = Buffer.from(request.slice(end + 4), 'latin1')
  return [start, ...kept].join('\n') + '\n\n' + told(kept.includes('transfer-encoding: chunked') ? dechunk(framed) : framed)
}

t.test('HTTP/2: the fast lane and the general path answer the same and forward the same', async t => {
  // No collections forced here: node:http2's write requests keep what is written referenced until
  // nghttp2 has sent it, and a piece of a read buffer reused too early shows in a body's digest.
  const target = await replica(t)
  const routes: TestRoute[] = [
    { domain: 'diff.test', ports: [target.port] },
    { domain: 'plain.test', ports: [target.port], spec: { middleware: { hsts: false, headers: { 'x-extra': 'yes' } } } },
    // Port 0: nothing can listen there, every connection is refused.
    { domain: 'gone.test', ports: [0] }
  ]
  // The silent replica's 504 comes after 3 s: a busy host answers the others well within it.
  const upstreamTimeoutMs = 3000
  const proxies = { lane: await startProxy(t, routes, { tls: true, upstreamTimeoutMs }), general: await startProxy(t, routes, { tls: true, upstreamTimeoutMs, settings: { fast_lane: false } }) }
  const sessions = new Map<string, ClientHttp2Session>()
  t.teardown(() => { for (const session of sessions.values()) session.destroy() })
  /** The client's session with `proxy` for `name` (the TLS server name the proxy checks Host against). */
  const sessionOf = (path: keyof typeof proxies, name: string): ClientHttp2Session => {
    const key = `${path} ${name}`
    let session = sessions.get(key)
    if (session === undefined || session.destroyed || session.closed) {
      session = connectHttp2(`https://127.0.0.1:${proxies[path].tlsPort as number}`, { servername: name, rejectUnauthorized: false })
      session.on('error', () => {})
      sessions.set(key, session)
    }
    return session
  }
  const run = async (path: keyof typeof proxies, scenario: Http2Scenario): Promise<{ answer: Http2Outcome, received: string[], raw: string[] }> => {
    const before = target.received.length
    const authority = scenario.headers[':authority'] as string | undefined ?? 'diff.test'
    const answer = await http2Exchange(sessionOf(path, authority), scenario.headers, scenario.body)
    for (const name of scenario.ignoreHeaders ?? []) delete answer.headers[name]
    const raw = target.received.slice(before)
    // A replica that failed (the silent one) is back in rotation for the next scenario.
    for (const upstream of proxies[path].failed.splice(0)) upstream.healthy = true
    return { answer, received: raw.map(receivedOverHttp2), raw }
  }
  for (const scenario of HTTP2_SCENARIOS) {
    const { raw: laneRaw, ...onLane } = await run('lane', scenario)
    const { raw: generalRaw, ...onGeneral } = await run('general', scenario)
    t.same(onLane, onGeneral, scenario.name)
    if (scenario.headers[':path'] === '/dup-cookie') {
      // The proxy's own answer: nothing of the answer it refused.
      t.same([onGeneral.answer.status, Object.keys(onGeneral.answer.headers).sort()], [502, ['cache-control', 'content-length', 'content-type']], 'the 502 carries only the proxy\'s headers')
    }
    if (scenario.name.startsWith('a GET')) {
      // undici writes a Connection line, the lane none: each proxy took its own path.
      t.same([laneRaw.length, /\r\nconnection:/i.test(laneRaw[0]), /\r\nconnection: keep-alive\r\n/i.test(generalRaw[0])], [1, false, true], 'the lane served it')
    }
  }
  // The 502's Date is the proxy's, not the refused answer's.
  const refused = sessionOf('general', 'diff.test').request({ ':authority': 'diff.test', ':path': '/dup-cookie' })
  refused.on('error', () => {})
  refused.resume()
  const [refusedHead] = await once(refused, 'response') as [IncomingHttpHeaders]
  t.same([refusedHead[':status'], typeof refusedHead.date, refusedHead.date === 'Thu, 01 Jan 1970 00:00:00 GMT'], [502, 'string', false], 'the 502 has a Date of its own')
  t.match((await run('lane', HTTP2_SCENARIOS[0])).answer, { status: 200, headers: { 'content-length': '5', 'content-type': 'text/plain', 'strict-transport-security': 'max-age=31536000' }, body: 'hello' })

  // A client resets a stream while its 4 MiB answer comes: the replica's connection under it is
  // closed, not kept with the rest of that answer unread; then requests on the same pool get their own answers.
  for (const path of ['lane', 'general'] as const) {
    const before = target.trickles.length
    const session = sessionOf(path, 'diff.test')
    const reset = await http2Exchange(session, { ':path': '/trickle' }, undefined, 1)
    t.same([reset.status, reset.reset], [200, constants.NGHTTP2_CANCEL], `${path}: the client reset the stream mid-answer`)
    await pollUntil(() => target.trickles[before]?.destroyed, { what: `${path}: the replica's connection of the reset answer closed` })
    const answers = await Promise.all(Array.from({ length: 20 }, async (_, i) => (await http2Exchange(session, { ':path': `/id/${i}` })).body))
    t.same(answers, Array.from({ length: 20 }, (_, i) => `answer ${i}`), `${path}: 20 requests at once after it, each with its own answer`)
  }
})
