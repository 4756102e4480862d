// Automatic HTTPS against a real ACME server (Debian's pebble) on loopback: a failed order names its
// cause, raises one operator alert, and is retried with backoff until the directory answers; a
// deployed domain gets a certificate pebble issued and is served by SNI; HTTP is redirected to HTTPS
// but for ACME challenge paths; after pebble is reset (restarted with fresh state, knowing no
// account) a domain deployed later gets its own, the account registered again; certificates are
// renewed on schedule, against the reset pebble too; a mismatched SNI is 421. The service behind the
// proxy runs on the stand-in engine (test/support/fake-engine.ts: a real HTTP server on loopback
// answering as busybox httpd does); ACME is the subject, not the engine.
import t from 'tap'
import { copyFileSync, writeFileSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { request, type RequestOptions } from 'node:https'
import { join } from 'node:path'
import type { TLSSocket } from 'node:tls'
import type { OperatorAlert } from '../../../kernel/index.js'
import proxy from '../../../plugins/proxy/index.js'
import { selfSigned as selfSignedPair } from '../../../plugins/proxy/certificates.js'
import type { RouteView } from '../../../plugins/proxy/control-routes.js'
import type { DeployResult } from '../../../plugins/reconciler/reconciler.js'
import type { ServiceStatus } from '../../../plugins/reconciler/status.js'
import { runCli } from '../../support/cli.js'
import { HTTPD_IMAGE, HTTPD_INDEX } from '../../support/docker.js'
import { FAKE_HTTPD, FakeEngine } from '../../support/fake-engine.js'
import { probablyFreePort } from '../../support/net.js'
import { api, reconcilerKernel } from '../../support/orchestration.js'
import { pebbleDirectory, startPebble } from '../../support/pebble.js'
import { pollUntil } from '../../support/poll.js'
import { tempDir } from '../../support/tmp.js'

interface Answer { status: number, headers: Record<string, unknown>, body: string, serial?: string }

async function https (port: number, servername: string, host: string, ca?: string): Promise<Answer> {
  const options: RequestOptions = { host: '127.0.0.1', port, servername, headers: { host }, agent: false, ...(ca === undefined ? { rejectUnauthorized: false } : { ca }) }
  return await new Promise((resolve, reject) => {
    request(options, response => {
      const serial = (response.socket as TLSSocket).getPeerCertificate().serialNumber
      let body = ''
      response.on('data', (chunk: Buffer) => { body += chunk.toString() })
      response.on('end', () => { resolve({ status: response.statusCode ?? 0, headers: response.headers, body, serial }) })
    }).on('error', reject).end()
  })
}

async function http (port: number, host: string, path = '/'): Promise<Answer> {
  return await new Promise((resolve, reject) => {
    httpRequest({ host: '127.0.0.1', port, path, headers: { host }, agent: false }, response => {
      let body = ''
      response.on('data', (chunk: Buffer) => { body += chunk.toString() })
      response.on('end', () => { resolve({ status: response.statusCode ?? 0, headers: response.headers, body }) })
    }).on('error', reject).end()
  })
}

t.test('certificates from pebble: retried until it answers, served by SNI, a later domain after a reset of pebble, renewal (stand-in engine)', async t => {
  const engine = new FakeEngine({ images: { [HTTPD_IMAGE]: FAKE_HTTPD } })
  // pebble is not running yet: the first order fails and is retried with backoff. Its CA file holds
  // another certificate until then. The proxy is told pebble's address before pebble runs, and pebble
  // cannot report a port it chose: its port is the one kind chosen beforehand (test/support/net.ts).
  const acmePort = await probablyFreePort()
  const pebbleCa = join(tempDir(t), 'pebble-ca.pem')
  writeFileSync(pebbleCa, (await selfSignedPair('placeholder.test')).cert)
  // The proxy binds port 0; restarted, it comes back on the ports it got, where pebble validates.
  const sections = (renewBeforeDays: number, fastLane = true, ports = { http: 0, https: 0 }): Record<string, Record<string, unknown>> => ({
    proxy: { http_port: ports.http, https_port: ports.https, health_interval_secs: 1, fast_lane: fastLane },
    acme: { directory: pebbleDirectory(acmePort), email: 'ops@example.org', ca_file: pebbleCa, retry_base_secs: 1, check_interval_secs: 1, renew_before_days: renewBeforeDays }
  })
  const first = await reconcilerKernel(t, engine, { plugins: [proxy], sections: sections(0) })
  const { kernel, token, project } = first
  const [httpPort, httpsPort] = ['proxy-http', 'proxy-https'].map(name => Number(kernel.url(name).port))
  const alerts: OperatorAlert[] = []
  kernel.events.on('operator.alert', alert => { alerts.push(alert) })
  const routes = async (): Promise<RouteView[]> => (await api<{ routes: RouteView[] }>(kernel, 'GET', '/api/v1/proxy/routes', { token })).body.routes
  const deploy = async (services: Array<Record<string, unknown>>): Promise<void> => {
    const answer = await api<DeployResult>(kernel, 'POST', '/api/v1/deploy', { token, body: { services } })
    t.same(answer.body.errors, [], answer.text)
  }
  const service = (name: string): Record<string, unknown> => ({ name, project, image: HTTPD_IMAGE, port: 8080, domain: `${name}.test` })
  await deploy([service('web')])

  const refused = /^the ACME server at https:\/\/127\.0\.0\.1:\d+\/dir refused the connection \(ECONNREFUSED\)$/
  const failed = await pollUntil(async () => (await routes()).find(r => r.domain === 'web.test' && r.certificate.status === 'failed'), { what: 'the first order to fail' })
  t.match(failed.certificate, { status: 'failed', attempts: Number, next_attempt_at: String, error: refused }, 'the error names the cause')
  t.match(kernel.health(), { status: 'degraded', plugins: { proxy: { checks: { acme: { status: 'degraded', reason: /certificate orders failing for 1 domain\(s\).*web\.test \(the ACME server .* refused the connection/ } } } } }, 'health says the orders fail, and why')
  await pollUntil(async () => ((await routes()).find(r => r.domain === 'web.test')?.certificate.attempts ?? 0) >= 2, { what: 'a retry that fails too' })
  t.equal(alerts.length, 1, 'one alert for the streak of failures')
  t.match(alerts[0], { kind: 'certificate.failed', subject: 'web.test', message: /^no certificate for web\.test: the ACME server .* refused the connection .*self-signed/, at: Number, details: { error: refused, renewal: false } })
  const selfSigned = await https(httpsPort, 'web.test', 'web.test')
  t.same([selfSigned.status, selfSigned.body], [200, HTTPD_INDEX], 'meanwhile served with a self-signed certificate')
  t.equal((await http(httpPort, 'web.test')).status, 200, 'and no redirect while it has no certificate')

  const pebble = await startPebble(t, httpPort, acmePort)
  copyFileSync(pebble.caFile, pebbleCa)
  const valid = await pollUntil(async () => (await routes()).find(r => r.domain === 'web.test' && r.certificate.status === 'valid'), { what: 'a certificate from pebble', timeout: 60_000 })
  t.match(kernel.health().plugins.proxy.checks, { acme: { status: 'ok' } }, 'and that they succeed again')
  t.match(valid.certificate, { issuer: /^Pebble Intermediate CA/, not_after: String })
  const status = await api<{ services: ServiceStatus[] }>(kernel, 'GET', '/api/v1/status', { token })
  t.match(status.body.services, [{ name: 'web', route: { domain: 'web.test', serving: 1, certificate: { status: 'valid', issuer: /^Pebble/ } } }], 'the status shows the route and its certificate')
  const printed = await runCli(['status'], { env: { BERTH_URL: kernel.url('control').href, BERTH_TOKEN: token } })
  t.match(printed.stdout, /ROUTE +CERTIFICATE\nweb .* web\.test +1 serving +valid \(Pebble Intermediate CA [0-9a-f]+, until \d{4}-\d\d-\d\d\)\n$/)
  const root = await pebble.issuingRoot()
  const secure = await https(httpsPort, 'web.test', 'web.test', root)
  t.same([secure.status, secure.body], [200, HTTPD_INDEX], 'HTTPS verified against pebble\'s root')
  const redirect = await http(httpPort, 'web.test', '/page?q=1')
  t.same([redirect.status, redirect.headers.location], [308, `https://web.test:${httpsPort}/page?q=1`])
  t.equal((await http(httpPort, 'web.test', '/.well-known/acme-challenge/unknown')).status, 404, 'challenge paths are not redirected')
  t.equal((await https(httpsPort, 'web.test', 'other.test')).status, 421, 'a request for another host on this connection')

  // pebble is reset: it knows no account now and issues from a new root. The next order registers
  // the account again and succeeds, without a restart.
  await pebble.restart()
  const resetRoot = await pebble.issuingRoot()
  await deploy([service('web'), service('api')])
  await pollUntil(async () => (await routes()).find(r => r.domain === 'api.test' && r.certificate.status === 'valid'), { what: 'a certificate for the later domain from the reset pebble', timeout: 60_000 })
  t.same((await https(httpsPort, 'api.test', 'api.test', resetRoot)).status, 200, 'the later domain is served with its own certificate')
  t.equal(alerts.length, 1, 'no alert for orders that succeed')

  const unknown = await https(httpsPort, 'nobody.test', 'nobody.test')
  t.equal(unknown.status, 404, 'an unknown name gets a handshake and a 404')
  const { body: metrics } = await kernel.exposition('control')
  t.match(metrics, /^berth_proxy_certificate_orders_total\{outcome="issued"\} 2$/m)
  t.match(metrics, /^berth_proxy_certificate_orders_total\{outcome="failed"\} [1-9]\d*$/m)
  t.match(metrics, /^berth_proxy_fast_lane 1$/m, 'the fast lane runs')

  // The same server restarted with a renewal window wider than the certificates' lifetime (and the
  // fast lane off): the stored certificate is served at once, and renewed on the next check.
  await kernel.stop()
  const again = await reconcilerKernel(t, engine, { plugins: [proxy], sections: sections(36_500, false, { http: httpPort, https: httpsPort }), restartOf: first })
  // First, before its renewal (due at once here) replaces it.
  t.equal((await https(httpsPort, 'web.test', 'web.test', root)).serial, secure.serial, 'after a restart the stored certificate is served')
  t.match((await again.kernel.exposition('control')).body, /^berth_proxy_fast_lane 0$/m, 'fast_lane = false: every request takes the general path')
  const renewed = await pollUntil(async () => {
    const answer = await https(httpsPort, 'web.test', 'web.test', resetRoot).catch(() => undefined)
    return answer !== undefined && answer.serial !== secure.serial && answer
  }, { what: 'a certificate renewed by the reset pebble', timeout: 60_000 })
  t.equal(renewed.status, 200, 'served with the renewed certificate')
  t.match((await again.kernel.exposition('control')).body, /^berth_proxy_certificate_orders_total\{outcome="renewed"\} [1-9]\d*$/m)
})
