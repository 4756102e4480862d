// The proxy against Debian's nginx, both in front of the same replica, with the same malformed
// requests (smuggling shapes, broken framing, bad header fields, several Hosts): Berth refuses at
// least everything nginx refuses, and what it refuses reaches no replica (it may refuse more: nginx
// 1.22 passes a header name with brackets and an HTTP/1.7 request line, node's parser does not); a
// client's broken body never counts against the replica it was being sent to.
import t from 'tap'
import { createServer } from 'node:http'
import { requireComponent } from '../../support/component.js'
import { startNginx } from '../../support/nginx.js'
import { listen, startProxy } from '../../support/proxy.js'
import { rawRequest } from '../../support/raw-http.js'

/** Each request without its final blank line's `Connection: close` (added to every one). */
const CASES: Array<[what: string, head: string, body?: string]> = [
  ['two Host headers', 'GET / HTTP/1.1\r\nHost: a.test\r\nHost: b.test'],
  ['no Host in HTTP/1.1', 'GET / HTTP/1.1\r\nAccept: */*'],
  ['a Host with a bad port', 'GET / HTTP/1.1\r\nHost: a.test:8x'],
  ['a Host with a space', 'GET / HTTP/1.1\r\nHost: a .test'],
  ['obs-fold', 'GET / HTTP/1.1\r\nHost: a.test\r\nX-A: one\r\n two'],
  ['space before the colon', 'GET / HTTP/1.1\r\nHost : a.test'],
  ['a bad header name', 'GET / HTTP/1.1\r\nHost: a.test\r\nBad[Name]: x'],
  ['NUL in a value', 'GET / HTTP/1.1\r\nHost: a.test\r\nX-A: a\0b'],
  ['an unknown version', 'GET / HTTP/1.7\r\nHost: a.test'],
  ['HTTP/2.0 on an HTTP/1 connection', 'GET / HTTP/2.0\r\nHost: a.test'],
  ['a method with a bad character', 'G@T / HTTP/1.1\r\nHost: a.test'],
  ['a control character in the target', 'GET /a\x01b HTTP/1.1\r\nHost: a.test'],
  ['a target without a slash', 'GET a HTTP/1.1\r\nHost: a.test'],
  ['Content-Length and Transfer-Encoding', 'POST / HTTP/1.1\r\nHost: a.test\r\nContent-Length: 5\r\nTransfer-Encoding: chunked', '0\r\n\r\n'],
  ['two different Content-Lengths', 'POST / HTTP/1.1\r\nHost: a.test\r\nContent-Length: 1\r\nContent-Length: 2', 'xx'],
  ['a negative Content-Length', 'POST / HTTP/1.1\r\nHost: a.test\r\nContent-Length: -1'],
  ['a bad chunk size', 'POST / HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked', 'zz\r\nhello\r\n0\r\n\r\n'],
  ['an unknown transfer coding', 'POST / HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: gzip', 'x'],
  ['chunked not last', 'POST / HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked, gzip', '0\r\n\r\n'],
  ['a header line past the limits', `GET / HTTP/1.1\r\nHost: a.test\r\nX-Long: ${'x'.repeat(20_000)}`],
  ['an absolute-form target', 'GET http://a.test/ HTTP/1.1\r\nHost: a.test'],
  ['a plain request', 'GET / HTTP/1.1\r\nHost: a.test']
]

/** A status, or 0 when the connection closed without one. */
async function statusOf (url: URL, head: string, body = ''): Promise<number> {
  try {
    return (await rawRequest(url, `${head}\r\nConnection: close\r\n\r\n${body}`, { open: true })).status
  } catch {
    return 0
  }
}

const refused = (status: number): boolean => status === 0 || (status >= 400 && status < 500) || status === 501 || status === 505

t.test('Berth refuses at least what nginx refuses', async t => {
  const seen: string[] = []
  const replica = await listen(t, createServer((req, res) => {
    seen.push(req.headers['x-case'] as string)
    req.resume()
    req.on('end', () => { res.writeHead(200, { 'content-length': 2 }).end('ok') })
  }))
  const nginx = await requireComponent(t, 'nginx', async () => await startNginx(t, replica, 'a.test'))
  if (nginx === undefined) return
  for (const fastLane of [true, false]) {
    const proxy = await startProxy(t, [{ domain: 'a.test', ports: [replica] }], { settings: { fast_lane: fastLane, max_header_bytes: 8192 } })
    for (const [what, head, body] of CASES) {
      const tagged = head.replace('\r\n', `\r\nX-Case: ${what}\r\n`)
      const reference = await statusOf(new URL(`http://127.0.0.1:${nginx}`), tagged, body)
      seen.length = 0
      const answer = await statusOf(proxy.url, tagged, body)
      const lane = fastLane ? 'fast lane' : 'general path'
      if (refused(reference)) {
        t.ok(refused(answer), `${what}: nginx ${reference}, Berth (${lane}) ${answer}`)
        t.same(seen, [], `${what}: nothing reached the replica through Berth`)
      } else if (what === 'a plain request' || what === 'an absolute-form target') {
        t.equal(answer, 200, `${what}: nginx ${reference}, Berth (${lane}) ${answer}`)
      }
    }
    t.same(proxy.failed, [], 'no replica was blamed for a client\'s broken request (a body cut off mid-chunk)')
  }
})
