// The fast lane against the general path, differentially: the same client bytes (heads split across
// reads, keep-alive sequences, pipelined requests, request bodies in a length or chunked, a WebSocket
// upgrade, HTTP/1.0, bad requests, a slow reader of a large answer) are sent through a proxy with
// [proxy].fast_lane on and one with it off, in front of the same replica, and what the client reads
// and what the replica receives must be the same: start lines, header lines in order and bodies byte
// for byte as framed, except the spelling of header names (the lane keeps the replica's, node:http
// and undici write them in lower case) and the lines each path writes itself (Date, Connection,
// Keep-Alive). The garbage collector runs every few milliseconds meanwhile: a piece of a read buffer
// that a write still needs must stay owned until it is written.
import t, { type Test } from 'tap'
import { connect, createServer, type Socket } from 'node:net'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { pollUntil } from '../../support/poll.js'
import { listen, startProxy, type TestProxy } from '../../support/proxy.js'

/** Answers by path, exactly as the replica writes them. */
const ANSWERS: Record<string, string> = {
  '/len': 'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello',
  '/chunked': 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n',
  '/hop': 'HTTP/1.1 200 OK\r\nConnection: keep-alive, X-Private\r\nX-Private: secret\r\nKeep-Alive: timeout=5\r\nServer: raw\r\nContent-Length: 2\r\n\r\nok',
  '/none': 'HTTP/1.1 204 No Content\r\n\r\n',
  '/missing': 'HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\nnot found',
  '/upload': 'HTTP/1.1 201 Created\r\nContent-Length: 7\r\n\r\nstored\n'
}
/** A large answer whose every 4 bytes differ, for the slow reader. */
const LARGE = Buffer.alloc(4 << 20)
for (let i = 0; i < LARGE.length; i += 4) LARGE.writeUInt32LE(i, i)

interface Replica { port: number, received: string[] }

/** A replica that notes every request as received (head and body) and answers from ANSWERS; `/ws` upgrades and echoes. */
async function replica (t: Test): Promise<Replica> {
  const received: string[] = []
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
        const path = head.split(' ')[1]
        if (path === '/ws') {
          upgraded = true
          socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n')
          if (pending.length > 0) socket.write(pending)
          return
        }
        if (path === '/large') {
          socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${LARGE.length}\r\n\r\n`)
          socket.write(LARGE)
          continue
        }
        socket.write(ANSWERS[path] ?? 'HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n')
      }
    })
    socket.on('error', () => {})
  })
  return { port: await listen(t, server), received }
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
    if (scenario.name === 'one request') {
      // Each proxy took its own path: the lane passes the replica's head on as written, node:http writes its own.
      t.match(laneRaw, /^HTTP\/1\.1 200 OK\r\nContent-Type: text\/plain\r\nContent-Length: 5\r\n\r\nhello$/, 'the lane served it')
      t.match(generalRaw, /\r\ncontent-length: 5\r\nDate: /, 'the general path served it')
    }
  }
})
