// A replica that stops answering, behind the proxy, with real containers: one frozen with `docker
// pause` still accepts connections (the engine's port forwarder) but never answers, so a request it
// gets is answered 504 at upstream_timeout_secs, on the fast lane and on the general path; the
// replica leaves the rotation, the next requests go to the other one, and it comes back only once a
// health probe gets an answer from it. A liveness restart drains its replica first (out of rotation
// while it restarts, no request failed) and routes it again once it serves.
import t, { type Test } from 'tap'
import type Docker from 'dockerode'
import { request } from 'node:http'
import { connect } from 'node:net'
import proxy from '../../../plugins/proxy/index.js'
import type { RouteView } from '../../../plugins/proxy/control-routes.js'
import type { DeployResult } from '../../../plugins/reconciler/reconciler.js'
import type { ServiceStatus } from '../../../plugins/reconciler/status.js'
import { requireComponent } from '../../support/component.js'
import { dockerEngine, HTTPD_INDEX, httpdImage } from '../../support/docker.js'
import { failedAnswers, startLoad, through } from '../../support/load.js'
import { api, reconcilerKernel, type ReconcilerInstance } from '../../support/orchestration.js'
import { pollUntil } from '../../support/poll.js'

const docker = await requireComponent(t, 'docker', dockerEngine)

interface Timed { status: number, body: string, ms: number }

/** One request through the proxy on a new connection, asking for JSON errors; with a body (the general path) when `body` is given. */
async function ask (base: URL, host: string, body?: string): Promise<Timed> {
  const started = performance.now()
  return await new Promise((resolve, reject) => {
    const headers = { host, accept: 'application/json', ...(body !== undefined && { 'content-length': Buffer.byteLength(body) }) }
    request(base, { method: body === undefined ? 'GET' : 'POST', headers, agent: false }, response => {
      let text = ''
      response.on('data', (chunk: Buffer) => { text += chunk.toString() })
      response.on('end', () => { resolve({ status: response.statusCode ?? 0, body: text, ms: performance.now() - started }) })
    }).on('error', reject).end(body)
  })
}

/** Whether a TCP connection to `address` (host:port) is accepted. */
async function accepts (address: string): Promise<boolean> {
  const [host, port] = [address.slice(0, address.lastIndexOf(':')), Number(address.slice(address.lastIndexOf(':') + 1))]
  return await new Promise(resolve => {
    const socket = connect({ host, port })
    socket.setTimeout(2000, () => { socket.destroy(); resolve(false) })
    socket.once('connect', () => { socket.destroy(); resolve(true) })
    socket.once('error', () => { resolve(false) })
  })
}

async function deploy (t: Test, instance: ReconcilerInstance, service: Record<string, unknown>): Promise<void> {
  const answer = await api<DeployResult>(instance.kernel, 'POST', '/api/v1/deploy', { token: instance.token, body: { services: [{ project: instance.project, image: 'berth-test/httpd:1', port: 8080, replicas: 2, ...service }] } })
  t.same(answer.body.errors, [], answer.text)
}

async function routeOf (instance: ReconcilerInstance, service: string): Promise<RouteView | undefined> {
  return (await api<{ routes: RouteView[] }>(instance.kernel, 'GET', '/api/v1/proxy/routes', { token: instance.token })).body.routes.find(r => r.service === service)
}

/** Pause the container until unpaused (or the test ends). */
async function freeze (t: Test, container: Docker.Container): Promise<void> {
  await container.pause()
  t.teardown(async () => { await container.unpause().catch(() => undefined) })
}

if (docker !== undefined) {
  t.test('a frozen replica: 504 at the upstream timeout, out of rotation until a probe gets an answer', async t => {
    await httpdImage(docker)
    // Health checks only when the test asks for one (router.checkHealth): the requests alone take the replica out.
    const instance = await reconcilerKernel(t, docker, {
      plugins: [proxy],
      sections: { proxy: { http_port: 0, https_port: 0, health_interval_secs: 3600, upstream_timeout_secs: 2, connect_timeout_ms: 1000 }, acme: { directory: '' } }
    })
    const { kernel, project } = instance
    await deploy(t, instance, { name: 'web', domain: 'web.test' })
    const base = kernel.url('proxy-http')
    const router = kernel.service('proxy').router
    for (let i = 0; i < 2; i++) t.same(await through(base, 'web.test'), { status: 200, body: HTTPD_INDEX }, 'both replicas serve')
    const frozen = docker.getContainer(`${project}-web-1`)
    const address = (await routeOf(instance, 'web'))?.upstreams.find(u => u.replica === 1)?.address ?? ''

    await freeze(t, frozen)
    t.ok(await accepts(address), 'the frozen replica\'s port still accepts connections')
    // Requests take turns between the replicas: of two, one meets the frozen replica.
    const turns = [await ask(base, 'web.test'), await ask(base, 'web.test')]
    const timedOut = turns.filter(a => a.status === 504)
    t.equal(timedOut.length, 1, `one of two requests met the frozen replica: ${turns.map(a => a.status).join(', ')}`)
    t.same(JSON.parse(timedOut[0].body), { error: 'web did not answer in time', code: 'BERTH_GATEWAY_TIMEOUT' })
    t.ok(timedOut[0].ms >= 2000, 'answered at the timeout, 2 s, not before')
    for (let i = 0; i < 6; i++) {
      const answer = await ask(base, 'web.test')
      t.equal(answer.status, 200, 'the next requests go to the other replica (the frozen one would answer 504)')
    }
    t.match((await routeOf(instance, 'web'))?.upstreams, [{ replica: 1, healthy: false }, { replica: 2, healthy: true }], 'the frozen replica is out of rotation')
    await router.checkHealth()
    t.match((await routeOf(instance, 'web'))?.upstreams, [{ replica: 1, healthy: false }], 'a health check does not bring it back: it accepts connections, but answers nothing')

    await frozen.unpause()
    await router.checkHealth()
    t.match((await routeOf(instance, 'web'))?.upstreams, [{ replica: 1, healthy: true }, { replica: 2, healthy: true }], 'it answers again: back in rotation')

    // The general path (a request with a body) answers the same way.
    await freeze(t, frozen)
    const posted = [await ask(base, 'web.test', 'x'), await ask(base, 'web.test', 'x')]
    const postTimedOut = posted.filter(a => a.status === 504)
    t.equal(postTimedOut.length, 1, `one of two requests with a body met the frozen replica: ${posted.map(a => a.status).join(', ')}`)
    t.same(JSON.parse(postTimedOut[0].body), { error: 'web did not answer in time', code: 'BERTH_GATEWAY_TIMEOUT' })
    t.ok(postTimedOut[0].ms >= 2000, 'answered at the timeout, not before')
    const after = await ask(base, 'web.test', 'x')
    t.not(after.status, 504, 'the next goes to the other replica')
    t.match((await routeOf(instance, 'web'))?.upstreams, [{ replica: 1, healthy: false }, { replica: 2, healthy: true }])
  })

  t.test('a liveness restart drains the replica first and routes it again once it serves', async t => {
    await httpdImage(docker)
    const instance = await reconcilerKernel(t, docker, { plugins: [proxy], sections: { proxy: { http_port: 0, https_port: 0, health_interval_secs: 1 }, acme: { directory: '' } } })
    const { kernel, project, token } = instance
    // /alive is made at each start of the container; taking it away fails the liveness probe.
    await deploy(t, instance, {
      name: 'live', domain: 'live.test', command: ['/bin/busybox', 'sh', '-c', 'echo ok > /www/alive && exec /bin/busybox httpd -f -p 8080 -h /www'],
      liveness: { path: '/alive', interval_secs: 1, timeout_secs: 1, failure_threshold: 2, initial_delay_secs: 0 }
    })
    const container = docker.getContainer(`${project}-live-1`)
    const startedAt = (await container.inspect()).State.StartedAt
    const load = startLoad(kernel.url('proxy-http'), 'live.test', { clients: 2 })
    await pollUntil(() => load.answers.length >= 10, { what: 'the load to begin' })

    const removal = await container.exec({ Cmd: ['/bin/busybox', 'rm', '/www/alive'], AttachStdout: true, AttachStderr: true })
    const output = await removal.start({})
    await new Promise(resolve => { output.on('end', resolve).resume() })
    await pollUntil(async () => (await routeOf(instance, 'live'))?.upstreams.find(u => u.replica === 1)?.draining, { what: 'the replica to be drained for its restart', timeout: 20_000 })
    await pollUntil(async () => {
      const { body } = await api<{ services: ServiceStatus[] }>(kernel, 'GET', '/api/v1/status', { token })
      return body.services.find(s => s.name === 'live')?.restarts === 1
    }, { what: 'the restart to be counted', timeout: 20_000 })
    t.not((await container.inspect()).State.StartedAt, startedAt, 'the container was restarted')
    const serving = await pollUntil(async () => {
      const route = await routeOf(instance, 'live')
      return route?.upstreams.every(u => u.healthy && !u.draining) === true && route
    }, { what: 'both replicas to serve again', timeout: 20_000 })
    t.equal(serving.upstreams.length, 2)
    const answers = await load.stop()
    t.same(failedAnswers(answers), [], `no failed request among ${answers.length} across the restart`)
  })
}
