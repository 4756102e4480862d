// The outbound client against a real HTTP server on loopback: loopback, private, link-local and
// mapped addresses refused before anything is sent (a name checked on the address it resolves to when
// the connection is made), allowed by host or range; redirects returned, never followed; the answer's
// size and the deadline bounded; URLs redacted for logs.
import t, { type Test } from 'tap'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { OutboundClient, redactedUrl } from '../../kernel/outbound.js'

interface Recorder { port: number, requests: string[] }

async function server (t: Test, answer: (path: string, respond: (status: number, headers: Record<string, string>, body: string | Buffer) => void) => void): Promise<Recorder> {
  const requests: string[] = []
  const http: Server = createServer((request, response) => {
    requests.push(request.url ?? '')
    request.resume()
    answer(request.url ?? '', (status, headers, body) => { response.writeHead(status, headers).end(body) })
  })
  await new Promise<void>(resolve => http.listen(0, '127.0.0.1', resolve))
  t.teardown(async () => { http.closeAllConnections(); await new Promise(resolve => http.close(resolve)) })
  return { port: (http.address() as AddressInfo).port, requests }
}

t.test('user-given destinations: loopback, private, link-local and reserved addresses refused, by name or address', async t => {
  const target = await server(t, (_path, respond) => { respond(200, {}, 'ok') })
  const client = new OutboundClient({ allow: [] })
  t.teardown(async () => { await client.close() })
  const refused = [
    `http://127.0.0.1:${target.port}/x`, 'http://10.1.2.3/', 'http://192.168.1.1/', 'http://172.16.0.9/', 'http://100.64.0.1/',
    'http://169.254.169.254/latest/meta-data/', 'http://[::1]/', 'http://[::ffff:127.0.0.1]/', 'http://[fd00::1]/', 'http://[fe80::1]/', 'http://0.0.0.0/', 'http://224.0.0.1/'
  ]
  for (const url of refused) {
    t.match(await client.check(url), /is a loopback, private, link-local or reserved address \(\[server\]\.outbound_allow may allow it\)$/, `check: ${url}`)
    await t.rejects(client.send(url, { body: 'x' }), { name: 'DestinationRefused' }, `send: ${url}`)
  }
  t.match(await client.check(`http://localhost:${target.port}/`), /^localhost resolves to (127\.0\.0\.1|::1) is a loopback/, 'a name is checked on what it resolves to')
  await t.rejects(client.send(`http://localhost:${target.port}/rebound`, { body: 'x' }), /localhost resolves to/, 'and again on the address connected to, at send time')
  t.same(target.requests, [], 'nothing reached the server')
  t.equal(await client.check('http://93.184.215.14/hook'), undefined, 'a public address may be a destination')
  t.equal(await client.check('ftp://example.com/'), 'must be an http or https URL, not ftp:')
  t.equal(await client.check('no url'), 'is not a URL')
  t.match(await client.check('http://no-such-host.invalid/'), /^no-such-host\.invalid does not resolve \(ENOTFOUND\)$/)
})

t.test('allowed hosts and ranges, trusted destinations; redirects are answers; size and time bounded', async t => {
  const target = await server(t, (path, respond) => {
    if (path === '/moved') respond(302, { location: '/elsewhere' }, '')
    else if (path === '/big') respond(200, {}, Buffer.alloc(4096, 1))
    else if (path === '/slow') return
    else respond(200, { 'content-type': 'text/plain' }, `got ${path}`)
  })
  const byRange = new OutboundClient({ allow: ['127.0.0.0/8'], maxBodyBytes: 1000, timeoutMs: 500 })
  const byName = new OutboundClient({ allow: ['localhost'] })
  const strict = new OutboundClient({ allow: [] })
  t.teardown(async () => { await Promise.all([byRange.close(), byName.close(), strict.close()]) })
  const sent = await byRange.send(`http://127.0.0.1:${target.port}/a`, { body: '{}', headers: { 'content-type': 'application/json' } })
  t.same([sent.status, sent.body.toString()], [200, 'got /a'], 'an allowed range')
  t.equal((await byName.send(`http://localhost:${target.port}/b`, { method: 'GET' })).body.toString(), 'got /b', 'an allowed host name')
  t.equal((await strict.send(`http://127.0.0.1:${target.port}/c`, { trusted: true })).status, 200, 'a trusted (operator-configured) destination')
  const moved = await byRange.send(`http://127.0.0.1:${target.port}/moved`, { body: 'secret body' })
  t.same([moved.status, moved.headers.get('location')], [302, '/elsewhere'], 'a redirect is the answer')
  await t.rejects(byRange.send(`http://127.0.0.1:${target.port}/big`), /the answer is larger than 1000 bytes/, 'an answer past the bound')
  await t.rejects(byRange.send(`http://127.0.0.1:${target.port}/slow`), { name: 'TimeoutError' }, 'no answer within the deadline: given up with a TimeoutError')
  t.notOk(target.requests.includes('/elsewhere'), 'the redirect was not followed')
})

t.test('URLs in logs: no credentials, no query', async t => {
  t.equal(redactedUrl('https://user:pw@hooks.example.com:8443/a/b?token=abc#x'), 'https://hooks.example.com:8443/a/b?…')
  t.equal(redactedUrl('http://example.com/plain'), 'http://example.com/plain')
  t.equal(redactedUrl('::'), '<not a URL>')
})
