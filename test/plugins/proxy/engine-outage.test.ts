// The proxy while the container engine does not answer: a server started with its Docker socket
// pointing nowhere serves the routing table remembered from its earlier run against the real engine,
// so requests (HTTP, and HTTPS with the domain's own certificate) still reach the containers running
// on their 127.0.0.1 ports, and its health says so; once the socket leads to the engine again, the
// table comes from the engine, without a restart. And a static route of [proxy.routes] at a deployed
// service's domain keeps the server from starting.
import t from 'tap'
import { symlinkSync } from 'node:fs'
import { request } from 'node:https'
import { join } from 'node:path'
import type { TLSSocket } from 'node:tls'
import proxy from '../../../plugins/proxy/index.js'
import type { RouteView } from '../../../plugins/proxy/control-routes.js'
import type { DeployResult } from '../../../plugins/reconciler/reconciler.js'
import { requireComponent } from '../../support/component.js'
import { DOCKER_SOCKET, dockerEngine, HTTPD_INDEX, httpdImage } from '../../support/docker.js'
import { through } from '../../support/load.js'
import { api, reconcilerKernel } from '../../support/orchestration.js'
import { pollUntil } from '../../support/poll.js'
import { tempDir } from '../../support/tmp.js'

const docker = await requireComponent(t, 'docker', dockerEngine)

/** GET / over HTTPS by SNI (no verification: the certificate is self-signed); the status and the certificate's name. */
async function https (port: number, name: string): Promise<{ status: number, subject: string }> {
  return await new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, servername: name, headers: { host: name }, agent: false, rejectUnauthorized: false }, response => {
      const subject = String((response.socket as TLSSocket).getPeerCertificate().subject.CN)
      response.resume()
      response.on('end', () => { resolve({ status: response.statusCode ?? 0, subject }) })
    }).on('error', reject).end()
  })
}

if (docker !== undefined) {
  t.test('started without the engine, the proxy serves the remembered table until the engine answers', async t => {
    await httpdImage(docker)
    const sections = { proxy: { http_port: 0, https_port: 0, health_interval_secs: 1 }, acme: { directory: '' } }
    const first = await reconcilerKernel(t, docker, { plugins: [proxy], sections })
    const { project, token } = first
    const deployed = await api<DeployResult>(first.kernel, 'POST', '/api/v1/deploy', {
      token,
      body: { services: [{ name: 'web', project, image: 'berth-test/httpd:1', port: 8080, domain: 'web.test', replicas: 2 }, { name: 'api', project, image: 'berth-test/httpd:1', port: 8080, domain: 'api.test' }] }
    })
    t.same(deployed.body.errors, [], deployed.text)
    t.same(await through(first.kernel.url('proxy-http'), 'web.test'), { status: 200, body: HTTPD_INDEX }, 'served while the engine answers')
    t.match(first.kernel.health().plugins.proxy.checks, { routes: { status: 'ok', reason: '2 route(s), from the container engine' } })
    await first.kernel.stop()

    // The same server again, its engine socket a path where nothing listens yet; the containers run on.
    const socket = join(tempDir(t), 'docker.sock')
    const { kernel } = await reconcilerKernel(t, docker, { plugins: [proxy], sections, restartOf: first, extra: { docker_socket: socket } })
    const base = kernel.url('proxy-http')
    for (const host of ['web.test', 'api.test', 'web.test']) t.same(await through(base, host), { status: 200, body: HTTPD_INDEX }, `${host} is served from the remembered table`)
    t.same(await https(Number(kernel.url('proxy-https').port), 'web.test'), { status: 200, subject: 'web.test' }, 'HTTPS too, with the domain\'s certificate')
    t.match(kernel.health(), {
      status: 'degraded',
      plugins: {
        reconciler: { checks: { engine: { status: 'down' } } },
        proxy: { checks: { routes: { status: 'degraded', reason: /^the routing table could not be refreshed \(container engine unavailable at .*ENOENT\); serving the last one the engine gave \(2 route\(s\), unchanged since \d{4}-\d\d-\d\dT[\d:.]+Z\) until it answers$/ } } }
      }
    }, 'health says the table is a remembered one, and why')
    const routes = async (): Promise<RouteView[]> => (await api<{ routes: RouteView[] }>(kernel, 'GET', '/api/v1/proxy/routes', { token })).body.routes
    t.match(await routes(), [{ domain: 'api.test', upstreams: [{ healthy: true }] }, { domain: 'web.test', upstreams: [{ replica: 1, healthy: true }, { replica: 2, healthy: true }] }])

    // The engine answers again: the next refresh takes the table from it.
    symlinkSync(DOCKER_SOCKET, socket)
    await pollUntil(() => kernel.health().plugins.proxy.checks?.routes.status === 'ok', { what: 'the table to come from the engine again', timeout: 30_000 })
    t.same(await through(base, 'web.test'), { status: 200, body: HTTPD_INDEX }, 'and it is served on')
    await kernel.stop()

    // A static route may not take a deployed service's domain: the server refuses to start, naming both.
    const claiming = { ...sections, proxy: { ...sections.proxy, routes: { ingest: { domain: 'web.test', upstreams: ['127.0.0.1:9'] } } } }
    await t.rejects(reconcilerKernel(t, docker, { plugins: [proxy], sections: claiming, restartOf: first }),
      { message: /^plugin "proxy" failed during setup: \[proxy\]\.routes: deployed service "web": domain "web\.test" is routed by \[proxy\]\.routes\.ingest \(a static route\); a domain has one owner; remove the service or route another domain$/ })
  })
}
