// HTTP/1 framing at the proxy, on the fast lane and on the general path alike, with raw requests: a
// request with several Host headers, or an HTTP/1.1 one with none, is a 400 and reaches no replica; a
// target in absolute form is routed by its authority (not Host) and the replica gets the origin form
// with Host set to that authority; a client's X-Real-IP never reaches a replica.
import t, { type Test } from 'tap'
import { createServer } from 'node:http'
import { listen, startProxy } from '../../support/proxy.js'
import { rawRequest } from '../../support/raw-http.js'

interface Seen { replica: string, url: string, headers: string[] }

async function replica (t: Test, name: string, seen: Seen[]): Promise<number> {
  return await listen(t, createServer((req, res) => {
    seen.push({ replica: name, url: req.url ?? '', headers: req.rawHeaders })
    const body = JSON.stringify({ replica: name })
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body)
  }))
}

for (const fastLane of [true, false]) {
  t.test(`${fastLane ? 'fast lane' : 'general path'}: one Host, absolute form by its authority, no client X-Real-IP`, async t => {
    const seen: Seen[] = []
    const proxy = await startProxy(t, [{ domain: 'a.test', ports: [await replica(t, 'a', seen)] }, { domain: 'b.test', ports: [await replica(t, 'b', seen)] }], { settings: { fast_lane: fastLane } })
    // Errors in JSON (a browser's Accept gets the HTML page).
    const send = async (head: string): ReturnType<typeof rawRequest> => await rawRequest(proxy.url, `${head}\r\nAccept: application/json\r\nConnection: close\r\n\r\n`, { open: true })

    const two = await send('GET / HTTP/1.1\r\nHost: a.test\r\nHost: b.test')
    t.same([two.status, JSON.parse(two.body.toString()).error], [400, 'a request has one Host header; this one has 2'], 'two Host headers')
    const spelled = await send('GET / HTTP/1.1\r\nHost: a.test\r\nhOsT: a.test')
    t.equal(spelled.status, 400, 'the same name in another case is a second one')
    t.equal((await send('GET / HTTP/1.1')).status, 400, 'no Host header (node:http answers it)')
    t.same(seen, [], 'none of them reached a replica')

    const absolute = await send('GET http://b.test/x?y=1 HTTP/1.1\r\nHost: a.test')
    t.same([absolute.status, JSON.parse(absolute.body.toString())], [200, { replica: 'b' }], 'routed by the target\'s authority, not Host')
    const [forwarded] = seen.splice(0)
    t.equal(forwarded.url, '/x?y=1', 'the replica gets the origin form')
    const hosts = forwarded.headers.filter((_v, i, all) => i % 2 === 1 && all[i - 1].toLowerCase() === 'host')
    t.same(hosts, ['b.test'], 'with Host set to that authority')
    t.equal((await send('GET http://user:pw@b.test/ HTTP/1.1\r\nHost: b.test')).status, 400, 'credentials in the target are refused')

    const realIp = await send('GET / HTTP/1.1\r\nHost: a.test\r\nX-Real-IP: 6.6.6.6')
    t.equal(realIp.status, 200)
    const [plain] = seen.splice(0)
    const names = plain.headers.filter((_v, i) => i % 2 === 0).map(n => n.toLowerCase())
    t.notOk(names.includes('x-real-ip'), 'a client\'s X-Real-IP is dropped')
    t.ok(names.includes('x-forwarded-for'), 'X-Forwarded-For is set from the connection')
  })
}
