// Two masters (`berth server` processes) sharing the control plane on a real three-member etcd of the
// test's own: one leads, the other follows, and cluster info names each after its node; tokens,
// secrets and webhook registrations made on one work on the other (a token revoked on one is refused by the other); with one etcd member killed
// writes go on; with etcd's quorum lost, writes answer 503 with the reason while reads go on, and
// work again by themselves once it returns. And a lone master's state copied into etcd (`berth
// cluster copy-to-etcd`) serves the master started on it. No container engine: nothing here
// deploys. (The leader killed or paused, with an agent following: test/e2e/masters.test.ts.)
import t from 'tap'
import type { ChildProcess } from 'node:child_process'
import { appendFileSync, copyFileSync, mkdirSync, readFileSync } from 'node:fs'
import { createHmac, randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { requireComponent } from '../../support/component.js'
import { runCli } from '../../support/cli.js'
import { ownEtcd, requireEtcd } from '../../support/etcd.js'
import { serverDir, startServer, testInstance, type ServerDir } from '../../support/orchestration.js'
import { pollUntil } from '../../support/poll.js'
import { tempDir } from '../../support/tmp.js'

interface Answer<T> { status: number, body: T }
interface Health { plugins: Record<string, { details?: Record<string, unknown> }> }

const PLUGINS = ['cluster', 'tokens', 'secrets', 'reconciler', 'nodes', 'webhooks']

async function call<T = Record<string, unknown>> (server: ServerDir, token: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer<T>> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body !== undefined && { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    signal: AbortSignal.timeout(15_000)
  })
  return { status: response.status, body: await response.json() as T }
}

async function stopped (child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exit = new Promise(resolve => child.once('exit', resolve))
  child.kill('SIGTERM')
  await exit
}

async function roleOf (server: ServerDir): Promise<unknown> {
  const response = await fetch(`${server.url}/api/v1/health`, { signal: AbortSignal.timeout(2000) })
  return ((await response.json()) as Health).plugins.cluster?.details?.role
}

t.test('two masters share tokens, secrets and webhooks through etcd, forward to the leader, and survive etcd members lost', async t => {
  const etcd = await requireComponent(t, 'etcd', async () => await ownEtcd(t))
  if (etcd === undefined) return
  const prefix = `/berth-test/masters-${randomBytes(4).toString('hex')}/`
  const instance = testInstance()
  const master = async (name: string): Promise<ServerDir> => await serverDir(t, PLUGINS, [
    '[reconciler]', `instance = "${instance}"`, `docker_socket = "${join(tempDir(t), 'no-engine.sock')}"`, `node_name = "${name}"`, '',
    '[cluster]', 'name = "masters"', '', '[cluster.etcd]', `endpoints = ${JSON.stringify(etcd.endpoints)}`, `prefix = "${prefix}"`, ''
  ].join('\n'))
  const a = await master('a')
  const b = await master('b')
  await startServer(t, a)
  // The masters share the secrets' key: the second is given the first's before it starts.
  mkdirSync(b.stateDir, { recursive: true, mode: 0o700 })
  copyFileSync(join(a.stateDir, 'secrets.key'), join(b.stateDir, 'secrets.key'))
  await startServer(t, b)
  const adminA = readFileSync(join(a.stateDir, 'admin.token'), 'utf8').trim()
  const adminB = readFileSync(join(b.stateDir, 'admin.token'), 'utf8').trim()
  t.not(adminA, adminB, 'each master made a bootstrap admin token of its own')

  await pollUntil(async () => [await roleOf(a), await roleOf(b)].sort().join() === 'follower,leader', { timeout: 15_000, what: 'one leader and one follower' })
  t.equal(await roleOf(a), 'leader', 'the master started first leads')

  // Tokens: one made on a works on b, and each bootstrap admin token works on both.
  const tokens = await call<{ tokens: Array<{ name: string }> }>(b, adminA, 'GET', '/api/v1/tokens')
  t.equal(tokens.status, 200, 'a\'s admin token is admitted by b')
  t.same(tokens.body.tokens.map(token => token.name.replace(/-[0-9a-f]{16}$/, '-<member>')).sort(), ['admin-<member>', 'admin-<member>'])
  const deployer = await call<{ id: string, token: string }>(a, adminA, 'POST', '/api/v1/tokens', { name: 'ci', role: 'deployer' })
  t.equal(deployer.status, 201)
  await pollUntil(async () => (await call(b, deployer.body.token, 'GET', '/api/v1/webhooks')).status === 200, { timeout: 5000, what: 'b to admit the token made on a' })
  t.equal((await call(b, deployer.body.token, 'GET', '/api/v1/secrets')).status, 403, 'with the role it was given on a')

  // Secrets: set on a, listed on b.
  t.equal((await call(a, adminA, 'PUT', '/api/v1/secrets/db_password', { value: 'hunter2-on-a' })).status, 201)
  const listed = await pollUntil(async () => {
    const answer = await call<{ secrets: Array<{ name: string }> }>(b, adminB, 'GET', '/api/v1/secrets')
    return answer.body.secrets.some(secret => secret.name === 'db_password') && answer.body
  }, { timeout: 5000, what: 'b to list the secret set on a' })
  t.notMatch(JSON.stringify(listed), 'hunter2', 'listed by name only')

  // Webhooks: registered on b, verified by a with the registration's secret.
  const secret = 'hook-secret-6c1f'
  const registered = await call<{ id: string }>(b, adminB, 'POST', '/api/v1/webhooks', { repo: 'acme/api', service_name: 'api', branch: 'main', secret })
  t.equal(registered.status, 201)
  const ping = JSON.stringify({ zen: 'Keep it logically awesome.', hook_id: 7, repository: { full_name: 'acme/api' } })
  const signature = `sha256=${createHmac('sha256', secret).update(ping).digest('hex')}`
  const received = await pollUntil(async () => {
    const answer = await call(a, '', 'POST', '/api/v1/webhooks/github', ping, { 'x-github-event': 'ping', 'x-github-delivery': 'd-1', 'x-hub-signature-256': signature })
    return answer.status !== 404 && answer
  }, { timeout: 5000, what: 'a to know the webhook registered on b' })
  t.match(received, { status: 200, body: { event: 'ping', webhooks: [registered.body.id] } }, 'a checks the signature with the secret registered on b')

  // What only the leader carries out, asked of the follower, is forwarded to the leader and answered by it.
  const [leaderNow, followerNow] = await roleOf(a) === 'leader' ? [a, b] : [b, a]
  const status = await fetch(`${followerNow.url}/api/v1/deploys`, { headers: { authorization: `Bearer ${adminA}` } })
  t.equal(status.status, 200, 'the deploy history asked of the follower')
  t.ok(status.headers.get('x-berth-leader'), 'is answered by the leader')
  const invalid = await call<{ code: string }>(followerNow, adminB, 'POST', '/api/v1/deploy', { services: [{ name: 'Bad Name' }] })
  t.match(invalid, { status: 400, body: { code: 'BERTH_INVALID_SPEC' } }, 'a deploy asked of the follower is checked by the leader')
  const direct = await fetch(`${leaderNow.url}/api/v1/deploys`, { headers: { authorization: `Bearer ${adminA}` } })
  t.equal(direct.headers.get('x-berth-leader'), null, 'the leader answers itself')
  const unauthenticated = await call<{ code: string }>(followerNow, 'not-a-token', 'GET', '/api/v1/deploys')
  t.equal(unauthenticated.status, 401, 'the leader checks the forwarded token')

  // Cluster info, asked of either master, lists both masters, the leader and etcd's members.
  const info = await call<{ control_plane: { leader: { id: string }, masters: Array<{ id: string, name: string, leader: boolean }>, etcd: Array<{ healthy: boolean, leader: boolean }> } }>(followerNow, adminA, 'GET', '/api/v1/cluster/info')
  t.equal(info.status, 200)
  const plane = info.body.control_plane
  t.same(plane.masters.map(m => m.name).sort(), ['a', 'b'], 'both masters are listed, each by its node name')
  t.same(plane.masters.filter(m => m.leader).map(m => m.id), [plane.leader.id], 'one of them leads')
  t.same(plane.etcd.map(m => m.healthy), [true, true, true], 'etcd\'s three members are healthy')
  t.equal(plane.etcd.filter(m => m.leader).length, 1, 'and one leads etcd\'s raft group')
  const table = await runCli(['cluster', 'info'], { cwd: followerNow.dir })
  t.equal(table.code, 0, table.stderr)
  t.match(table.stdout, /MASTER\s+ID\s+ROLE\s+ADDRESS[\s\S]*leader[\s\S]*follower[\s\S]*ETCD MEMBER\s+ENDPOINT\s+HEALTH\s+RAFT[\s\S]*healthy/)
  t.same([a, b].map((server, i) => new RegExp(`^${'ab'[i]} +[0-9a-f]{16} +(leader|follower) +${server.url.replaceAll('.', '\\.')}\\b`, 'm').test(table.stdout)), [true, true], 'berth cluster info names each master after its node')

  // A token revoked on b is refused by a.
  t.equal((await call(b, adminB, 'DELETE', `/api/v1/tokens/${deployer.body.id}`)).status, 200)
  await pollUntil(async () => (await call(a, deployer.body.token, 'GET', '/api/v1/webhooks')).status === 401, { timeout: 5000, what: 'a to refuse the token revoked on b' })
  t.pass('the token revoked on b is refused by a')

  // One etcd member killed: writes go on (a refusal while etcd elects a leader of its own is retried).
  await etcd.kill(0)
  const oneDown = await pollUntil(async () => {
    const answer = await call<{ id: string }>(a, adminA, 'POST', '/api/v1/tokens', { name: 'one-member-down', role: 'viewer' })
    return answer.status === 201 && answer.body
  }, { timeout: 15_000, interval: 250, what: 'a write with one etcd member down' })
  await pollUntil(async () => (await call<{ tokens: Array<{ id: string }> }>(b, adminB, 'GET', '/api/v1/tokens')).body.tokens.some(token => token.id === oneDown.id), { timeout: 10_000, what: 'b to see it' })
  t.pass('with one etcd member killed, a master writes and the other sees it')
  await etcd.start(0)

  // etcd without a quorum: writes are refused with the reason, reads go on; then it recovers by itself.
  await Promise.all([etcd.stop(1), etcd.stop(2)])
  const refused = await call<{ error: string, code: string }>(b, adminB, 'POST', '/api/v1/tokens', { name: 'no-quorum', role: 'viewer' })
  t.match(refused, { status: 503, body: { code: 'BERTH_SHARED_STATE_UNAVAILABLE', error: /etcd.*nothing was written/ } }, `a write without a quorum: ${refused.body.error}`)
  const read = await call<{ tokens: unknown[] }>(b, adminB, 'GET', '/api/v1/tokens')
  t.match(read, { status: 200, body: { tokens: { length: 3 } } }, 'reads answer from the mirror meanwhile')
  t.equal((await call(a, adminA, 'GET', '/api/v1/secrets')).status, 200, 'and tokens are still checked')
  await Promise.all([etcd.start(1), etcd.start(2)])
  const after = await pollUntil(async () => {
    const answer = await call<{ id: string }>(b, adminB, 'POST', '/api/v1/tokens', { name: 'after-quorum', role: 'viewer' })
    return answer.status === 201 && answer.body
  }, { timeout: 30_000, interval: 250, what: 'writes to work again once etcd has its quorum back' })
  await pollUntil(async () => (await call<{ tokens: Array<{ id: string }> }>(a, adminA, 'GET', '/api/v1/tokens')).body.tokens.some(token => token.id === after.id), { timeout: 10_000, what: 'a to see the write made after the quorum returned' })
  t.equal((await call<{ tokens: unknown[] }>(a, adminA, 'GET', '/api/v1/tokens')).body.tokens.length, 4, 'nothing half-written: the refused token was never stored')
})

t.test('a lone master\'s state copied into etcd serves the master started on it', async t => {
  const etcd = await requireEtcd(t)
  if (etcd === undefined) return
  const lone = await serverDir(t, PLUGINS, ['[reconciler]', `instance = "${testInstance()}"`, `docker_socket = "${join(tempDir(t), 'no-engine.sock')}"`, ''].join('\n'))
  let server = await startServer(t, lone)
  const admin = readFileSync(join(lone.stateDir, 'admin.token'), 'utf8').trim()
  const viewer = await call<{ token: string }>(lone, admin, 'POST', '/api/v1/tokens', { name: 'dashboard', role: 'viewer' })
  t.equal((await call(lone, admin, 'PUT', '/api/v1/secrets/api_key', { value: 'k-1' })).status, 201)
  const hook = await call<{ id: string }>(lone, admin, 'POST', '/api/v1/webhooks', { repo: 'acme/site', service_name: 'site', branch: 'main', secret: 'webhook-secret-0001' })
  t.equal(hook.status, 201)

  appendFileSync(join(lone.dir, 'cluster.toml'), ['', '[cluster.etcd]', `endpoints = ${JSON.stringify(etcd.endpoints)}`, `prefix = "${etcd.prefix}"`, ''].join('\n'))
  const running = await runCli(['cluster', 'copy-to-etcd'], { cwd: lone.dir })
  t.match(running, { code: 2, stderr: /a server runs on .* stop it first/ }, 'refused while the server runs')
  await stopped(server)
  const copied = await runCli(['cluster', 'copy-to-etcd'], { cwd: lone.dir })
  t.equal(copied.code, 0, copied.stderr)
  t.match(copied.stdout, /tokens\/tokens: 2 key\(s\)[\s\S]*secrets\/values: 1 key\(s\)[\s\S]*webhooks\/registrations: 1 key\(s\)[\s\S]*cluster\/nodes: 1 key\(s\)[\s\S]*copied 5 key\(s\)/)
  const again = await runCli(['cluster', 'copy-to-etcd'], { cwd: lone.dir })
  t.match(again, { code: 2, stderr: /etcd already holds 5 key\(s\) under .*--force/ }, 'a second copy is refused')

  server = await startServer(t, lone)
  await pollUntil(async () => await roleOf(lone) === 'leader', { timeout: 10_000, what: 'the master on etcd to lead' })
  t.equal((await call(lone, viewer.body.token, 'GET', '/api/v1/webhooks')).status, 200, 'a token made before the copy is admitted')
  const secrets = await call<{ secrets: Array<{ name: string }> }>(lone, admin, 'GET', '/api/v1/secrets')
  t.same(secrets.body.secrets.map(secret => secret.name), ['api_key'], 'the secret is there')
  const hooks = await call<{ webhooks: Array<{ id: string }> }>(lone, admin, 'GET', '/api/v1/webhooks')
  t.same(hooks.body.webhooks.map(webhook => webhook.id), [hook.body.id], 'and the webhook')
  const stored = await runCli(['cluster', 'copy-to-etcd', '--force'], { cwd: lone.dir })
  t.match(stored, { code: 2, stderr: /a server runs/ }, 'the state directory of a running master is never copied')
  await stopped(server)
})
