// HTTP/2 on the proxy's HTTPS listener, with real clients: curl (nghttp2 inside) negotiates h2 by
// ALPN and gets the replica's answer; the replica gets HTTP/1.1 with Host from :authority, one cookie
// field and the forwarding headers; bodies stream with and without a length; path routes, middleware
// and compression apply as on HTTP/1.1; h2load (Debian's nghttp2-client) multiplexes many streams on
// few connections and every request succeeds; a client offering only HTTP/1.1 still gets it.
import t from 'tap'
import { execFile } from 'node:child_process'
import { createServer, type Server } from 'node:http'
import { connect } from 'node:http2'
import { promisify } from 'node:util'
import { brotliDecompressSync } from 'node:zlib'
import { ensureDebianPackages, requireComponent } from '../../support/component.js'
import { listen, startProxy } from '../../support/proxy.js'

const run = promisify(execFile)
const clients = await requireComponent(t, 'curl and h2load', async () => { await ensureDebianPackages(['curl', 'nghttp2-client']); return true })

/** A replica telling what it received: HTTP version, URL, headers, body size. */
function replica (): Server {
  return createServer((req, res) => {
    let bytes = 0
    req.on('data', (chunk: Buffer) => { bytes += chunk.length })
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json', connection: 'keep-alive', 'keep-alive': 'timeout=5' })
      res.end(JSON.stringify({ version: req.httpVersion, url: req.url, headers: req.headers, bytes, pad: 'x'.repeat(2000) }))
    })
  })
}

/** POST `pieces` pieces of 16 KiB on an HTTP/2 stream with no content-length; the bytes the replica counted. */
async function streamWithoutLength (port: number, pieces: number): Promise<number> {
  const session = connect(`https://h2.test:${port}`, { host: '127.0.0.1', servername: 'h2.test', rejectUnauthorized: false })
  try {
    const stream = session.request({ ':method': 'POST', ':path': '/upload' })
    for (let i = 0; i < pieces; i++) stream.write(Buffer.alloc(16384, i))
    stream.end()
    let text = ''
    for await (const chunk of stream) text += (chunk as Buffer).toString()
    return (JSON.parse(text) as { bytes: number }).bytes
  } finally {
    session.close()
  }
}

if (clients !== undefined) {
  t.test('HTTPS clients get HTTP/2 by ALPN; replicas get HTTP/1.1', async t => {
    const port = await listen(t, replica())
    const proxy = await startProxy(t, [
      { domain: 'h2.test', ports: [port] },
      { domain: 'h2.test', service: 'api', ports: [port], spec: { path_prefix: '/api', strip_prefix: true, middleware: { compress: true, headers: { 'x-route': 'api' } } } }
    ], { tls: true })
    const base = `https://h2.test:${proxy.tlsPort}`
    const curl = async (...args: string[]): Promise<{ head: string, body: Buffer }> => {
      const { stdout } = await run('curl', ['-sk', '-D', '-', '--resolve', `h2.test:${proxy.tlsPort}:127.0.0.1`, ...args], { encoding: 'buffer' })
      const split = stdout.indexOf('\r\n\r\n')
      return { head: stdout.subarray(0, split).toString(), body: stdout.subarray(split + 4) }
    }
    const answer = await curl('--http2', '-H', 'cookie: a=1', '-H', 'cookie: b=2', `${base}/hello?x=1`)
    t.match(answer.head, /^HTTP\/2 200 ?\r\n/, 'HTTP/2 to the client')
    t.notMatch(answer.head, /keep-alive|connection:/i, 'no connection-specific header crosses into HTTP/2')
    t.match(answer.head, /strict-transport-security: max-age=31536000/)
    const seen = JSON.parse(answer.body.toString()) as { version: string, url: string, headers: Record<string, string> }
    t.match(seen, {
      version: '1.1', url: '/hello?x=1',
      headers: { host: `h2.test:${proxy.tlsPort}`, cookie: 'a=1; b=2', 'x-forwarded-proto': 'https', 'x-forwarded-host': `h2.test:${proxy.tlsPort}`, 'x-forwarded-for': '127.0.0.1' }
    })
    t.notOk(Object.keys(seen.headers).some(name => name.startsWith(':')), 'no pseudo-header reaches the replica')

    const posted = JSON.parse((await curl('--http2', '--data-binary', 'y'.repeat(100_000), `${base}/upload`)).body.toString()) as { bytes: number }
    t.equal(posted.bytes, 100_000, 'a body with a length')
    t.equal(await streamWithoutLength(proxy.tlsPort as number, 5), 5 * 16384, 'a body streamed without a length (node:http2 as the client)')

    const api = await curl('--http2', '-H', 'accept-encoding: br', `${base}/api/items`)
    t.match(api.head, /^HTTP\/2 200 ?\r\n[^]*x-route: api[^]*content-encoding: br/i, 'path routes and middleware as on HTTP/1.1')
    t.equal((JSON.parse(brotliDecompressSync(api.body).toString()) as { url: string }).url, '/items')

    const unknown = await run('curl', ['-sk', '--http2', '-o', '/dev/null', '-w', '%{http_version} %{http_code}', '--resolve', `nobody.test:${proxy.tlsPort}:127.0.0.1`, `https://nobody.test:${proxy.tlsPort}/`])
    t.equal(unknown.stdout, '2 404', 'the proxy\'s own answers over HTTP/2 too')
    t.match((await curl('--http1.1', `${base}/`)).head, /^HTTP\/1\.1 200 OK\r\n/, 'a client offering HTTP/1.1 only gets it (and the fast lane)')

    const load = await run('h2load', ['-n', '2000', '-c', '4', '-m', '16', '--connect-to', `127.0.0.1:${proxy.tlsPort}`, `${base}/load`])
    t.match(load.stdout, /Application protocol: h2/)
    t.match(load.stdout, /requests: 2000 total, 2000 started, 2000 done, 2000 succeeded, 0 failed, 0 errored, 0 timeout/, 'h2load: 16 streams at once on each of 4 connections, all answered')
    t.match(await proxy.exposition(), /^berth_proxy_requests_total\{route="h2\.test",class="2xx"\} 200[0-9]$/m)
  })
}
