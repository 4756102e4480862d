// The proxy on several event loops ([proxy].workers = 2: the main thread and one worker thread bound to
// the same ports with SO_REUSEPORT): requests are served, and both loops take connections (their
// per-loop counter in /metrics); the answers of the worker's requests reach the route's metrics; a
// worker that dies is started again while the listeners keep serving; certificates are served by SNI
// on both loops; a deploy's drain stops traffic to a replica on every loop before its container stops;
// restarts in place keep the threads serving; and `workers` out of its bounds is refused by name.
import t from 'tap'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { connect } from 'node:tls'
import { join } from 'node:path'
import pino from 'pino'
import type { Kernel } from '../../../kernel/index.js'
import { ServerHost } from '../../../kernel/host.js'
import proxy, { MAX_WORKERS } from '../../../plugins/proxy/index.js'
import { reusePortUnsupported } from '../../../plugins/proxy/workers/support.js'
import reconciler from '../../../plugins/reconciler/index.js'
import secrets from '../../../plugins/secrets/index.js'
import tokens from '../../../plugins/tokens/index.js'
import { FakeEngine } from '../../support/fake-engine.js'
import { loopbackListeners, testKernel, TEST_IDLE_GRACE_MS } from '../../support/kernel.js'
import { createKernel } from '../../../kernel/index.js'
import { failedAnswers, startLoad, through } from '../../support/load.js'
import { api, reconcilerKernel } from '../../support/orchestration.js'
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

  // Handshakes until the worker's counter has grown by some (its counts come in once a second).
  const names = new Set<string>()
  const before = await sample(kernel, 'berth_proxy_worker_connections_total', 'worker="1"')
  await pollUntil(async () => {
    names.add(await certificateName(httpsPort, 'site.test'))
    return await sample(kernel, 'berth_proxy_worker_connections_total', 'worker="1"') > before
  }, { what: 'TLS handshakes on the worker', timeout: 30_000 })
  t.same([...names], ['site.test'], 'the route\'s certificate (self-signed here) by SNI on both loops')
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

t.test('a deploy\'s drain holds on every loop: no replica is stopped with a request in flight (stand-in engine)', async t => {
  // Each request through the proxy stays 200 ms at its replica: a drain that did not wait for a loop's
  // requests would see that replica stopped under them. Health probes (no X-Forwarded-For) are not drained.
  const inflight = new Map<string, number>()
  const engine = new FakeEngine()
  engine.addImage('berth-test/slow:1', {
    serve: (request, response, container) => {
      request.resume()
      if (request.headers['x-forwarded-for'] === undefined) {
        response.end(container.env.VERSION)
        return
      }
      inflight.set(container.id, (inflight.get(container.id) ?? 0) + 1)
      setTimeout(() => {
        inflight.set(container.id, (inflight.get(container.id) ?? 1) - 1)
        response.end(container.env.VERSION)
      }, 200)
    }
  })
  const stoppedBusy: string[] = []
  for (const method of ['stop', 'remove'] as const) {
    const original = engine[method].bind(engine)
    engine[method] = async (id: string) => {
      if ((inflight.get(id) ?? 0) > 0) stoppedBusy.push(`${method} ${id}: ${inflight.get(id)} in flight`)
      await original(id)
    }
  }
  const { kernel, token, project } = await reconcilerKernel(t, engine, {
    plugins: [proxy],
    sections: { proxy: { http_port: 0, https_port: 0, workers: 2, health_interval_secs: 1, connect_timeout_ms: 1000 }, acme: { directory: '' } }
  })
  const deploy = async (version: string): Promise<void> => {
    const answer = await api<{ errors: unknown[] }>(kernel, 'POST', '/api/v1/deploy', { token, body: { services: [{ name: 'web', project, image: 'berth-test/slow:1', port: 8080, health: '/', domain: 'web.test', replicas: 2, env: { VERSION: version } }] } })
    t.same([answer.status, answer.body.errors], [200, []], answer.text)
  }
  await deploy('1')
  const base = kernel.url('proxy-http')
  await pollUntil(async () => (await through(base, 'web.test')).body === '1', { what: 'the first version served' })
  const onWorker = await sample(kernel, 'berth_proxy_worker_connections_total', 'worker="1"')
  const load = startLoad(base, 'web.test', { clients: 8 })
  await pollUntil(() => load.answers.length >= 40, { what: 'the load to begin' })
  await deploy('2')
  await pollUntil(() => load.answers.at(-1)?.body === '2', { what: 'the second version served' })
  const answers = await load.stop()
  t.same(failedAnswers(answers), [], `no failed request among ${answers.length} during the rollout`)
  t.same(stoppedBusy, [], 'every old replica was stopped with no request in flight')
  await pollUntil(async () => await sample(kernel, 'berth_proxy_worker_connections_total', 'worker="1"') > onWorker, { what: 'the worker thread taking part in the load' })
})

t.test('restarts in place (berth reload) keep the worker threads serving: no request fails', async t => {
  const one = await upstream(t, 'one')
  const stateDir = tempDir(t)
  const host = new ServerHost({
    cwd: stateDir,
    config: {
      server: { state_dir: stateDir, listeners: loopbackListeners([proxy]), stop_idle_grace_ms: TEST_IDLE_GRACE_MS },
      proxy: { http_port: 0, https_port: 0, workers: 2, routes: { site: { domain: 'site.test', upstreams: [`127.0.0.1:${one}`] } } },
      acme: { directory: '' }
    },
    env: {},
    plugins: [proxy],
    logger: pino({ level: 'silent' })
  }, { fatal: err => { t.fail(String(err)) } })
  t.teardown(async () => { await host.stop() })
  const first = await host.start()
  const base = first.url('proxy-http')
  const pool = first.service('proxy').workers()
  const load = startLoad(base, 'site.test', { maxRequests: 100_000, timeoutMs: 120_000 })
  await pollUntil(() => load.answers.length >= 20, { what: 'the load to begin' })
  for (let round = 1; round <= 2; round++) {
    const before = host.kernel
    await host.restart()
    await pollUntil(() => host.kernel !== before && host.kernel.state === 'running', { what: `restart ${round}` })
    const seen = load.answers.length
    await pollUntil(() => load.answers.length >= seen + 50, { what: `answers after restart ${round}` })
  }
  const answers = await load.stop()
  t.same(failedAnswers(answers), [], `no failed request among ${answers.length} through the restarts`)
  t.equal(host.kernel.url('proxy-http').port, base.port, 'the same port')
  t.equal(host.kernel.service('proxy').workers(), pool, 'the worker threads were taken over, not started again')
})

t.test('[proxy].workers: an integer from 1 to 64, where SO_REUSEPORT serves', async t => {
  const stateDir = tempDir(t)
  const refused = async (workers: unknown, env: NodeJS.ProcessEnv = {}): Promise<string> =>
    await createKernel({ cwd: stateDir, config: { server: { state_dir: stateDir }, ...(workers !== undefined && { proxy: { workers } }) }, env, plugins: [proxy], logger: pino({ level: 'silent' }) })
      .then(() => 'accepted', (err: Error) => err.message)
  t.equal(await refused(0), 'config: [proxy].workers: expected integer to be greater or equal to 1, got 0')
  t.equal(await refused(MAX_WORKERS + 1), `config: [proxy].workers: expected integer to be less or equal to ${MAX_WORKERS}, got ${MAX_WORKERS + 1}`)
  t.equal(await refused(1.5), 'config: [proxy].workers: expected integer, got 1.5')
  t.equal(await refused(undefined, { PROXY_WORKERS: 'all' }), 'environment PROXY_WORKERS: [proxy].workers: expected integer, got "all"')
  t.equal(reusePortUnsupported('linux', '24.1.0'), undefined)
  t.equal(reusePortUnsupported('linux', '22.12.0'), undefined)
  t.equal(reusePortUnsupported('linux', '22.11.0'), 'Node 22.11.0 cannot bind with reusePort (22.12 or later can)')
  t.equal(reusePortUnsupported('darwin', '24.1.0'), 'SO_REUSEPORT is used on Linux only, and this is darwin')
})
