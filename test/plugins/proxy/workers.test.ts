// The proxy on several event loops ([proxy].workers = 2: the main thread and one worker thread bound to
// the same ports with SO_REUSEPORT): requests are served, and both loops take connections (their
// per-loop counter in /metrics); the answers of the worker's requests reach the route's metrics; a
// worker that dies is started again while the listeners keep serving; certificates are served by SNI
// on both loops; a deploy's drain stops traffic to a replica on every loop before its container stops.
import t from 'tap'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { connect } from 'node:tls'
import { join } from 'node:path'
import type { Kernel } from '../../../kernel/index.js'
import proxy from '../../../plugins/proxy/index.js'
import reconciler from '../../../plugins/reconciler/index.js'
import secrets from '../../../plugins/secrets/index.js'
import tokens from '../../../plugins/tokens/index.js'
import { testKernel } from '../../support/kernel.js'
import { through } from '../../support/load.js'
import { pollUntil } from '../../support/poll.js'
import { tempDir } from '../../support/tmp.js'

/** A loopback HTTP server answering `name`. */
async function upstream (t: { teardown(fn: () => void): void }, name: string): Promise<number> {
  const server = createServer((request, response) => { request.resume(); response.end(name) })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.closeAllConnections(); server.close() })
  return (server.address() as AddressInfo).port
}

/** A metric's value of a sample whose labels match `labels` (`worker="1"`), 0 when absent. */
async function sample (kernel: Kernel, name: string, labels = ''): Promise<number> {
  const { body } = await kernel.exposition('control')
  const line = body.split('\n').find(l => l.startsWith(labels === '' ? `${name} ` : `${name}{`) && l.includes(labels))
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1))
}

/** The subject's common name of the certificate served to a TLS client naming `servername`. */
async function certificateName (port: number, servername: string): Promise<string> {
  return await new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, servername, rejectUnauthorized: false }, () => {
      const name = socket.getPeerCertificate().subject.CN
      socket.end()
      resolve(String(name))
    }).on('error', reject)
  })
}

t.test('two event loops serve the listeners; a dead worker is started again; certificates by SNI on both', async t => {
  const one = await upstream(t, 'one')
  const kernel = await testKernel(t, {
    plugins: [tokens, secrets, reconciler, proxy],
    config: {
      reconciler: { docker_socket: join(tempDir(t), 'no-engine.sock') },
      proxy: { http_port: 0, https_port: 0, workers: 2, routes: { site: { domain: 'site.test', upstreams: [`127.0.0.1:${one}`] } } },
      acme: { directory: '' }
    }
  })
  const base = kernel.url('proxy-http')
  const httpsPort = Number(kernel.url('proxy-https').port)
  // New connections are spread over both loops by the system (a hash of each connection's addresses).
  const served = async (loop: string): Promise<void> => {
    await pollUntil(async () => {
      const answer = await through(base, 'site.test')
      if (answer.body !== 'one') t.fail(`${answer.status} ${answer.body}`)
      return await sample(kernel, 'berth_proxy_worker_connections_total', `worker="${loop}"`) > 0
    }, { what: `connections taken by loop ${loop}`, timeout: 30_000 })
  }
  await served('0')
  await served('1')
  t.pass('both loops took connections, every answer came from the route')
  await pollUntil(async () => await sample(kernel, 'berth_proxy_requests_total', 'route="site.test",class="2xx"') >= 2, { what: 'the worker\'s answers in the route\'s metrics' })

  const names = new Set<string>()
  await pollUntil(async () => {
    names.add(await certificateName(httpsPort, 'site.test'))
    return await sample(kernel, 'berth_proxy_worker_connections_total', 'worker="1"') > 0 && names
  }, { what: 'a TLS handshake on the worker' })
  const before = await sample(kernel, 'berth_proxy_worker_connections_total', 'worker="1"')
  for (let i = 0; i < 20; i++) names.add(await certificateName(httpsPort, 'site.test'))
  t.ok(await sample(kernel, 'berth_proxy_worker_connections_total', 'worker="1"') > before, 'handshakes on the worker')
  t.same([...names], ['site.test'], 'the route\'s certificate (self-signed here) by SNI on every loop')
  t.equal(await certificateName(httpsPort, 'nobody.test'), 'unknown.berth.invalid', 'an unknown name gets the certificate of unknown names')

  const pool = kernel.service('proxy').workers()
  t.ok(pool !== undefined, 'worker threads run')
  await pool?.kill(1)
  await pollUntil(async () => await sample(kernel, 'berth_proxy_worker_restarts_total') === 1, { what: 'the worker started again' })
  const after = await sample(kernel, 'berth_proxy_worker_connections_total', 'worker="1"')
  const meanwhile: string[] = []
  await pollUntil(async () => {
    const answer = await through(base, 'site.test')
    if (answer.status !== 200 || answer.body !== 'one') meanwhile.push(`${answer.status} ${answer.body}`)
    return await sample(kernel, 'berth_proxy_worker_connections_total', 'worker="1"') > after
  }, { what: 'the new worker taking connections', timeout: 30_000 })
  t.same(meanwhile, [], 'every request served meanwhile')
})
