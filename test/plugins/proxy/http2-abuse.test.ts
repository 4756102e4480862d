// HTTP/2 rapid reset against the proxy's HTTPS listener, with an attacking node:http2 client of our
// own: streams opened and reset in batches (a PING after each, so the proxy has read it); past the
// budget the proxy sends GOAWAY ENHANCE_YOUR_CALM and closes the connection; the cancelled streams
// are never forwarded to the replica; a second client is served meanwhile, each of its requests
// answered 200.
import t from 'tap'
import { createServer } from 'node:http'
import { connect, constants, type ClientHttp2Session } from 'node:http2'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { ensureDebianPackages } from '../../support/component.js'
import { pollUntil } from '../../support/poll.js'
import { RESET_BATCH, resetBatch } from '../../support/http2-reset.js'
import { listen, startProxy } from '../../support/proxy.js'

/** Streams the attacker opens at most: well past the budget (200 per 10 s). */
const ATTACK_STREAMS = 5000

function session (port: number): ClientHttp2Session {
  return connect(`https://127.0.0.1:${port}`, { rejectUnauthorized: false, servername: 'a.test' })
}

/** Connections the proxy's side holds established on `port` (iproute2's ss). */
async function established (port: number): Promise<number> {
  await ensureDebianPackages(['iproute2'])
  const { stdout } = await promisify(execFile)('ss', ['-Htn', 'state', 'established', `( sport = :${port} )`])
  return stdout.split('\n').filter(line => line.trim() !== '').length
}

/** A GET's status, or 0 when its stream closed (or could not open) without an answer. */
async function get (client: ClientHttp2Session): Promise<number> {
  return await new Promise(resolve => {
    let status = 0
    try {
      const stream = client.request({ ':path': '/', ':authority': 'a.test' })
      stream.on('response', headers => { status = Number(headers[':status']); stream.resume() })
      stream.on('error', () => undefined)
      stream.on('close', () => { resolve(status) })
      stream.end()
    } catch {
      resolve(0)
    }
  })
}

t.test('rapid reset: GOAWAY ENHANCE_YOUR_CALM and the connection closed past the budget, cancelled streams never forwarded, others served', async t => {
  let reached = 0
  const replica = await listen(t, createServer((_req, res) => {
    reached++
    setTimeout(() => { res.end('ok') }, 20)
  }))
  const proxy = await startProxy(t, [{ domain: 'a.test', ports: [replica] }], { tls: true })
  const port = proxy.tlsPort as number

  const bystander = session(port)
  t.teardown(() => { bystander.destroy() })
  t.equal(await get(bystander), 200, 'a client served before')

  const attacker = session(port)
  t.teardown(() => { attacker.destroy() })
  attacker.on('error', () => undefined)
  let calmed: number | undefined
  attacker.once('goaway', code => { calmed = code })
  await new Promise<void>(resolve => attacker.once('connect', () => { resolve() }))
  let opened = 0
  const attack = (async () => {
    let open = true
    while (opened < ATTACK_STREAMS && open) {
      open = await resetBatch(attacker, { ':path': '/', ':authority': 'a.test' })
      opened += RESET_BATCH
    }
  })()
  // Meanwhile the bystander goes on being served.
  for (let i = 0; i < 10; i++) t.equal(await get(bystander), 200, 'the other client is served during the attack')
  await attack
  // The server's side of the attacker's connection is closed: only the other client's is established.
  await pollUntil(async () => await established(port) === 1, { timeout: 5000, what: 'the attacker\'s connection closed by the proxy' })
  t.equal(calmed, constants.NGHTTP2_ENHANCE_YOUR_CALM, 'the attacker was told GOAWAY ENHANCE_YOUR_CALM')
  t.ok(opened < ATTACK_STREAMS, `and its connection closed long before the attack's end (${opened} streams opened)`)
  // A stream whose reset is read with its HEADERS is never sent; one forwarded before its reset was read may reach the replica (none in these runs).
  t.ok(reached - 11 <= 50, `the replica got few of the cancelled streams (${reached - 11} besides the other client's 11 requests)`)
  t.equal(await get(bystander), 200, 'and after')
})
