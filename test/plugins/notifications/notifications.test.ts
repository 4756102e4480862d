// Notifications to a real receiver (node:http on 127.0.0.1) that verifies each signature as the
// plugin's README tells receivers to (HMAC-SHA256 of the raw body, constant-time compare) and answers
// 401 when it does not match. Real alerts from the real plugins: a failed rollout on the Docker engine
// (the reconciler's deploy.failed and deploy.rolled-back) and a certificate order to an ACME server
// that is down (the proxy's certificate.failed), delivered while the deploy answers at once; a backup
// that fails on a target (backup.failed) reaching a signed JSON webhook after two 503s, a
// Slack-compatible one whose URL is a secret, not one filtered to other kinds, not a receiver that is
// down (given up after the retries), one that refuses with 400 (not retried), nor one signing with
// another secret (refused by the receiver); the test route and command; no secret in the logs; a
// stopping server giving up on a waiting retry; a simulated agent going offline (the cluster's
// node.offline); bad webhooks refused at start.
import t, { type Test } from 'tap'
import { createHmac, timingSafeEqual } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { simulateAgents } from '../../../bench/cluster-sim.js'
import { createKernel, type AnyPlugin, type Kernel } from '../../../kernel/index.js'
import backup from '../../../plugins/backup/index.js'
import cluster from '../../../plugins/cluster/index.js'
import nodes from '../../../plugins/nodes/index.js'
import notifications from '../../../plugins/notifications/index.js'
import proxy from '../../../plugins/proxy/index.js'
import reconciler from '../../../plugins/reconciler/index.js'
import secrets from '../../../plugins/secrets/index.js'
import tokens from '../../../plugins/tokens/index.js'
import { runCli } from '../../support/cli.js'
import { capturedLogger, loopbackListeners } from '../../support/kernel.js'
import { adminToken, api, reconcilerKernel, reconcilerSection, startKernel, testInstance, tokenFor } from '../../support/orchestration.js'
import { pollUntil } from '../../support/poll.js'
import { dockerEngine, httpdImage, NEVER_HEALTHY_IMAGE, neverHealthyImage } from '../../support/docker.js'
import { requireComponent } from '../../support/component.js'
import { pebbleDirectory } from '../../support/pebble.js'
import { tempDir } from '../../support/tmp.js'

interface Teardown { teardown(fn: () => void | Promise<void>): void }

const SECRET = 'notify-secret-31f0c9d2a7'

interface Received {
  path: string
  headers: IncomingHttpHeaders
  /** The raw body, as the signature covers it. */
  raw: Buffer
  body: string
}

/** How a receiver checks a delivery: HMAC-SHA256 of the raw body under its secret, compared in constant time. */
function signedWith (r: Received, secret: string): boolean {
  const header = r.headers['x-berth-signature']
  const given = /^sha256=([0-9a-f]{64})$/.exec(typeof header === 'string' ? header : '')?.[1]
  return given !== undefined && timingSafeEqual(Buffer.from(given, 'hex'), createHmac('sha256', secret).update(r.raw).digest())
}

interface ReceiverOptions {
  /** Each path answers these statuses in turn (200 when they run out). */
  statuses?: Record<string, number[]>
  /** Paths that verify the signature under SECRET first: 401 when it does not match. */
  verify?: string[]
  /** A path whose requests get no answer until `release()`. */
  hold?: string
}

/** A receiver on 127.0.0.1 that records every request. */
async function receiver (t: Teardown, options: ReceiverOptions = {}): Promise<{ url: string, received: Received[], release: () => void }> {
  const received: Received[] = []
  const held: Array<() => void> = []
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => { chunks.push(chunk) })
    request.on('end', () => {
      const raw = Buffer.concat(chunks)
      const r: Received = { path: request.url ?? '', headers: request.headers, raw, body: raw.toString() }
      received.push(r)
      if (options.verify?.includes(r.path) === true && !signedWith(r, SECRET)) response.writeHead(401).end()
      else if (r.path === options.hold) held.push(() => { response.writeHead(204).end() })
      else response.writeHead(options.statuses?.[r.path]?.shift() ?? 200).end()
    })
  })
  await new Promise<void>(resolve => { server.listen(0, '127.0.0.1', resolve) })
  const release = (): void => { for (const answer of held.splice(0)) answer() }
  t.teardown(async () => {
    release()
    await new Promise(resolve => { server.close(resolve) })
  })
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received, release }
}

/** A [backup] section whose one local target, `jammed`, cannot be written (a file stands where its folder should). */
function jammedBackup (t: Teardown): Record<string, unknown> {
  const blocker = join(tempDir(t), 'a-file')
  writeFileSync(blocker, 'not a directory')
  return { targets: [{ type: 'local', name: 'jammed', path: join(blocker, 'backups') }] }
}

/** A backup run now, through the API (it raises backup.failed for `jammed`); its answer. */
async function runBackup (kernel: Kernel, token: string): Promise<string> {
  return await (await fetch(new URL('/api/v1/backups', kernel.url('control')), { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } })).text()
}

/** The JSON lines a captured logger wrote. */
const entriesOf = (lines: () => string) => (): Array<Record<string, unknown>> => lines().trim().split('\n').map(line => JSON.parse(line) as Record<string, unknown>)

/** The orchestration plugins without a container engine (its socket is missing): enough for these alerts. */
function noEngine (cwd: string): Record<string, unknown> {
  return reconcilerSection(testInstance(), { docker_socket: join(cwd, 'no-engine.sock') })
}

const metric = (text: string, name: string, labels: string): number | undefined => {
  const value = new RegExp(`^${name}\\{${labels}\\} (\\S+)$`, 'm').exec(text)?.[1]
  return value === undefined ? undefined : Number(value)
}

t.test('a rollout rolled back and a certificate order failing reach the webhooks, the deploy answering at once', async t => {
  const docker = await requireComponent(t, 'docker', dockerEngine)
  if (docker === undefined) return
  await Promise.all([httpdImage(docker), neverHealthyImage(docker)])
  const hooks = await receiver(t, { verify: ['/ops'], hold: '/held' })
  const { logger, lines } = capturedLogger()
  const { kernel, token, project } = await reconcilerKernel(t, docker, {
    logger,
    extra: { health_timeout_secs: 3 },
    plugins: [proxy, notifications],
    sections: {
      proxy: { http_port: 0, https_port: 0 },
      // Port 0: nothing can listen there, every order fails.
      acme: { directory: pebbleDirectory(0), email: 'ops@example.org', retry_base_secs: 60 },
      notifications: {
        retry_initial_ms: 50,
        webhooks: [
          { name: 'ops', url: `${hooks.url}/ops`, secret: SECRET },
          { name: 'chat', url: `${hooks.url}/chat`, format: 'slack', kinds: ['deploy.rolled-back'] },
          { name: 'held', url: `${hooks.url}/held`, kinds: ['deploy.failed'] }
        ]
      }
    }
  })
  const web = (image: string): Record<string, unknown> => ({ name: 'web', project, image, port: 8080, health: '/', replicas: 2, domain: 'web.test' })
  const deploy = async (image: string): Promise<{ errors: unknown[] }> => (await api<{ errors: unknown[] }>(kernel, 'POST', '/api/v1/deploy', { token, body: { services: [web(image)] } })).body
  t.same((await deploy('berth-test/httpd:1')).errors, [])
  const kindsAt = (path: string): string[] => hooks.received.filter(r => r.path === path).map(r => String(r.headers['x-berth-event']))
  await pollUntil(() => kindsAt('/ops').includes('certificate.failed'), { what: 'the certificate.failed alert' })

  t.match((await deploy(NEVER_HEALTHY_IMAGE)).errors, [{ service: 'web', error: /did not pass within 3 s; rolled back to berth-test\/httpd:1$/ }], 'the rollout fails and is rolled back')
  await pollUntil(() => kindsAt('/held').length === 1, { what: 'the delivery the receiver holds' })
  t.equal(entriesOf(lines)().filter(e => e.webhook === 'held' && e.msg === 'notification delivered').length, 0, 'the deploy answered while a receiver had not')
  hooks.release()
  await pollUntil(() => entriesOf(lines)().some(e => e.webhook === 'held' && e.msg === 'notification delivered' && e.attempts === 1), { what: 'the held delivery to end' })
  await pollUntil(() => kindsAt('/ops').length === 3 && kindsAt('/chat').length === 1, { what: 'the deploy alerts' })

  const ops = hooks.received.filter(r => r.path === '/ops')
  t.same(ops.map(r => r.headers['x-berth-event']), ['certificate.failed', 'deploy.failed', 'deploy.rolled-back'])
  t.ok(ops.every(r => signedWith(r, SECRET)), 'each signed; the receiver accepted them')
  const [certificate, failed, rolledBack] = ops.map(r => JSON.parse(r.body) as Record<string, unknown>)
  t.match(certificate, { kind: 'certificate.failed', subject: 'web.test', message: /^no certificate for web\.test: the ACME server .* refused the connection/, details: { renewal: false } })
  t.match(failed, { kind: 'deploy.failed', subject: 'web', message: `deploy of web (${NEVER_HEALTHY_IMAGE}) failed: health check / did not pass within 3 s; rolled back to berth-test/httpd:1`, details: { project, image: NEVER_HEALTHY_IMAGE, rolled_back: true } })
  t.match(rolledBack, { kind: 'deploy.rolled-back', subject: 'web', message: `web was rolled back to berth-test/httpd:1: its deploy of ${NEVER_HEALTHY_IMAGE} failed`, details: { from_image: NEVER_HEALTHY_IMAGE, to_image: 'berth-test/httpd:1' } })
  t.same(JSON.parse(hooks.received.find(r => r.path === '/chat')?.body ?? '{}'), { text: `[berth@${String(failed.host)}] deploy.rolled-back web: ${String(rolledBack.message)}` }, 'the Slack-compatible text')
})

/** A server whose backups fail (a jammed target) and whose engine is absent, with these [notifications]. */
async function backupKernel (t: Test, settings: Record<string, unknown>): Promise<{ kernel: Kernel, lines: () => string }> {
  const cwd = tempDir(t)
  const { logger, lines } = capturedLogger()
  const kernel = await startKernel(t, {
    plugins: [tokens, secrets, reconciler, backup, notifications],
    cwd,
    logger,
    config: { reconciler: noEngine(cwd), backup: jammedBackup(t), notifications: settings }
  })
  return { kernel, lines }
}

t.test('a failed backup reaches the webhooks: signed JSON retried after 503s, Slack text, kinds filtered, a receiver down, refusing, or verifying another secret', async t => {
  const hooks = await receiver(t, { statuses: { '/ops': [503, 503], '/reject': [400] }, verify: ['/ops', '/checked'] })
  // Port 0: nothing can listen there, every connection is refused.
  const closed = 0
  const slackPath = '/slack/T0001/B0002/xoxsecretpath'
  const { kernel, lines } = await backupKernel(t, {
        retries: 3,
        retry_initial_ms: 50,
        timeout_ms: 2000,
        webhooks: [
          { name: 'ops', url: `${hooks.url}/ops`, secret: '${secrets.NOTIFY_SECRET}', kinds: ['backup.failed'] },
          { name: 'chat', url: '${secrets.SLACK_URL}', format: 'slack' },
          { name: 'nodes', url: `${hooks.url}/nodes`, secret: SECRET, kinds: ['node.offline'] },
          { name: 'gone', url: `http://127.0.0.1:${closed}/hook`, kinds: ['backup.failed'] },
          { name: 'strict', url: `${hooks.url}/reject`, kinds: ['backup.failed'] },
          { name: 'forged', url: `${hooks.url}/checked`, secret: 'not-the-receivers-secret', kinds: ['backup.failed'] }
        ]
  })
  const token = adminToken(kernel)
  for (const [name, value] of [['NOTIFY_SECRET', SECRET], ['SLACK_URL', `${hooks.url}${slackPath}`]]) {
    t.equal((await api(kernel, 'PUT', `/api/v1/secrets/${name}`, { token, body: { value } })).status, 201)
  }

  const run = await runBackup(kernel, token)
  const snapshot = /"snapshot":"(\d{8}T\d{9}Z)"/.exec(run)?.[1]
  t.ok(snapshot, 'the run ended with a result whose target failed')
  const entries = entriesOf(lines)
  const settled = (webhook: string): boolean => entries().some(e => e.webhook === webhook && (e.msg === 'notification delivered' || e.msg === 'notification not delivered'))
  await pollUntil(() => ['ops', 'chat', 'gone', 'strict', 'forged'].every(settled), { what: 'the deliveries to settle' })

  const ops = hooks.received.filter(r => r.path === '/ops')
  t.equal(ops.length, 3, 'two 503s, then accepted')
  t.ok(ops.every(r => signedWith(r, SECRET)), 'every attempt carries a valid X-Berth-Signature (checked in constant time by the receiver)')
  t.notOk(signedWith(ops[0], 'another-secret'), 'which a receiver verifying with another secret rejects')
  t.notOk(signedWith({ ...ops[0], raw: Buffer.from(ops[0].body.replace('jammed', 'jammer')) }, SECRET), 'as it rejects an altered body')
  t.equal(new Set(ops.map(r => r.body)).size, 1, 'each retry sends the same bytes')
  t.equal(new Set(ops.map(r => r.headers['x-berth-delivery'])).size, 1, 'and the same delivery id')
  t.match(ops[0].headers, { 'content-type': 'application/json', 'x-berth-event': 'backup.failed', 'user-agent': 'berth-notifications' })
  const alert = JSON.parse(ops[0].body) as Record<string, unknown>
  t.match(alert, { id: ops[0].headers['x-berth-delivery'], kind: 'backup.failed', subject: 'jammed', message: /^backup to target jammed failed: local target jammed: writing in .* failed: ENOTDIR$/, at: /^\d{4}-\d\d-\d\dT/, host: String, details: { reason: 'target', snapshot } })

  const slack = hooks.received.filter(r => r.path === slackPath)
  t.equal(slack.length, 1, 'the Slack-compatible webhook, its URL read from the secret store')
  t.same(Object.keys(JSON.parse(slack[0].body) as object), ['text'])
  t.match(JSON.parse(slack[0].body), { text: /^\[berth@\S+\] backup\.failed jammed: backup to target jammed failed: / })
  t.equal(slack[0].headers['x-berth-signature'], undefined, 'a webhook without a secret is not signed')
  t.equal(hooks.received.filter(r => r.path === '/nodes').length, 0, 'a webhook for other kinds gets nothing')
  t.equal(hooks.received.filter(r => r.path === '/reject').length, 1, 'a 400 is not retried')
  const forged = hooks.received.filter(r => r.path === '/checked')
  t.equal(forged.length, 1, 'a delivery signed with another secret is refused (401, not retried)')
  t.match(forged[0].headers, { 'x-berth-signature': /^sha256=[0-9a-f]{64}$/ })
  t.notOk(signedWith(forged[0], SECRET))

  const metrics = await (await fetch(new URL('/metrics', kernel.url('control')))).text()
  t.equal(metric(metrics, 'berth_notifications_deliveries_total', 'webhook="ops",outcome="delivered"'), 1)
  t.equal(metric(metrics, 'berth_notifications_attempts_total', 'webhook="ops"'), 3)
  t.equal(metric(metrics, 'berth_notifications_deliveries_total', 'webhook="gone",outcome="failed"'), 1)
  t.equal(metric(metrics, 'berth_notifications_attempts_total', 'webhook="gone"'), 4, 'the first attempt and three retries')
  t.equal(metric(metrics, 'berth_notifications_deliveries_total', 'webhook="strict",outcome="failed"'), 1)

  t.equal(entries().filter(e => e.msg === 'notification attempt failed; retrying' && e.webhook === 'ops').length, 2, 'each retry is logged')
  t.match(entries().find(e => e.msg === 'notification not delivered' && e.webhook === 'gone'), { level: 50, attempts: 4, error: 'ECONNREFUSED', host: `127.0.0.1:${closed}` })
  t.match(entries().find(e => e.msg === 'notification not delivered' && e.webhook === 'strict'), { level: 50, attempts: 1, error: 'HTTP 400' })
  t.match(entries().find(e => e.msg === 'notification not delivered' && e.webhook === 'forged'), { level: 50, attempts: 1, error: 'HTTP 401' })
  t.notMatch(lines(), SECRET, 'the signing secret is never logged')
  t.notMatch(lines(), 'not-the-receivers-secret', 'not even a literal one')
  t.notMatch(lines(), 'xoxsecretpath', 'nor a webhook URL\'s path')

  // The test route and command: one attempt to every webhook, whatever its kinds.
  hooks.received.length = 0
  const env = { BERTH_URL: kernel.url('control').href, BERTH_TOKEN: token }
  const tested = await runCli(['notifications', 'test'], { env })
  t.equal(tested.code, 1, 'a webhook that fails makes the command fail')
  t.equal(tested.stdout, '  ops  delivered (HTTP 200)\n  chat  delivered (HTTP 200)\n  nodes  delivered (HTTP 200)\n  gone  FAILED: ECONNREFUSED\n  strict  delivered (HTTP 200)\n  forged  FAILED: HTTP 401\n')
  t.same(hooks.received.map(r => `${r.path} ${String(r.headers['x-berth-event'])}`).sort(), ['/checked', '/nodes', '/ops', '/reject', slackPath].map(path => `${path} notifications.test`), 'each reachable webhook received the test alert')
  t.ok(hooks.received.filter(r => r.path === '/ops' || r.path === '/nodes').every(r => signedWith(r, SECRET)))
  const viewer = await tokenFor(kernel, 'viewer')
  t.equal((await api(kernel, 'POST', '/api/v1/notifications/test', { token: viewer })).status, 403, 'a viewer cannot send test alerts')
})

t.test('a server that stops gives up on a delivery waiting to be retried, and says so', async t => {
  const hooks = await receiver(t, { statuses: { '/busy': [503] } })
  const { kernel, lines } = await backupKernel(t, { retry_initial_ms: 600_000, retry_max_ms: 600_000, webhooks: [{ name: 'busy', url: `${hooks.url}/busy` }] })
  await runBackup(kernel, adminToken(kernel))
  const entries = entriesOf(lines)
  await pollUntil(() => entries().some(e => e.webhook === 'busy' && e.msg === 'notification attempt failed; retrying'), { what: 'the first attempt to fail' })
  await kernel.stop()
  t.match(entries().find(e => e.webhook === 'busy' && e.msg === 'notification not delivered'), { level: 50, attempts: 1, error: 'HTTP 503; the server is stopping' }, 'the stop did not wait ten minutes')
  t.equal(hooks.received.length, 1, 'and made no other attempt')
})

t.test('a node going offline reaches the webhook, signed', async t => {
  const hooks = await receiver(t)
  const cwd = tempDir(t)
  const kernel = await startKernel(t, {
    plugins: [tokens, secrets, reconciler, cluster, nodes, notifications],
    cwd,
    config: {
      reconciler: { ...noEngine(cwd), node_name: 'leader' },
      cluster: { heartbeat_interval_secs: 0.1, offline_after_secs: 0.5, reschedule_after_secs: 30 },
      notifications: { webhooks: [{ url: `${hooks.url}/nodes`, secret: SECRET, kinds: ['node.offline'] }] }
    }
  })
  const token = adminToken(kernel)
  const agents = simulateAgents({ leader: kernel.url('control').host, token: await tokenFor(kernel, 'agent'), count: 1, names: ['a1'], heartbeatMs: 100 })
  t.teardown(async () => { await agents.stop() })
  await pollUntil(async () => (await api<{ nodes: Array<{ name: string, status: string }> }>(kernel, 'GET', '/api/v1/cluster/info', { token })).body.nodes.some(n => n.name === 'a1' && n.status === 'ready'), { what: 'a1 ready' })
  t.same(hooks.received, [], 'nothing while it is ready')

  await agents.agents[0].link.stop()
  const [delivery] = await pollUntil(() => hooks.received.length > 0 && hooks.received, { what: 'the node.offline alert' })
  t.ok(signedWith(delivery, SECRET), 'signed')
  t.match(delivery, { path: '/nodes', headers: { 'x-berth-event': 'node.offline' } })
  t.match(JSON.parse(delivery.body), { kind: 'node.offline', subject: 'a1', message: /^node a1 is offline \(its channel closed\): the 0 replicas placed on it wait 30 s for it, then move to other nodes/, details: { from: 'ready', replicas: 0 } })
})

t.test('webhooks that cannot work are refused at start, naming the webhook and never the URL', async t => {
  const start = async (webhooks: unknown[]): Promise<void> => {
    const stateDir = tempDir(t)
    const plugins: AnyPlugin[] = [tokens, secrets, notifications]
    const kernel = await createKernel({ cwd: stateDir, config: { server: { state_dir: stateDir, listeners: loopbackListeners(plugins) }, notifications: { webhooks } }, env: {}, plugins, logger: capturedLogger().logger })
    t.teardown(async () => { await kernel.stop() })
    await kernel.start()
  }
  await t.rejects(start([{ name: 'ops', url: 'ftp://example.invalid/secret-path' }]), { message: /\[notifications\] webhook ops: url is not an http or https URL/ })
  await t.rejects(start([{ url: 'not a url at all' }]), { message: /webhook webhook-1: url is not an http or https URL$/ })
  await t.rejects(start([{ name: 'a', url: 'http://127.0.0.1:1/x' }, { name: 'a', url: 'http://127.0.0.1:1/y' }]), { message: /two webhooks are named a/ })
  await t.rejects(start([{ url: 'http://127.0.0.1:1/x', format: 'teams' }]), /format/)
})
