// Two instances of the campaign app sharing sessions and pending logins through a real Redis (Debian's
// redis-server, append-only file on) and their data through a real PostgreSQL 15: a login started on
// one and completed on the other, functions on either, two donations at once on the two instances that
// together pass the limit (exactly one accepted), a document ingested on one found by the other, logout
// on one ending the session on both, one instance killed with SIGKILL, Redis killed and restarted (503
// while it is away, the session still there after), PostgreSQL stopped and started (503, then
// recovery), and bad URLs at start.
import t from 'tap'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { startDevIdp } from '../../../plugins/dev-idp/provider.js'
import { seedUsers } from '../../../plugins/dev-idp/users.js'
import { ROLES } from '../../../plugins/campaign/roles.js'
import { callServerFunction, ServerFunctionError } from '../../../plugins/campaign/client.js'
import { campaignApp, CookieJar, followRedirects, send, signInThroughIdp } from '../../support/campaign.js'
import { boundUrls, exited, runCli, spawnCliForTest, untilAnswers, type RunningCli } from '../../support/cli.js'
import { closingPort, laterPort } from '../../support/net.js'
import { pollUntil } from '../../support/poll.js'
import { ownPostgres, postgresDatabase } from '../../support/postgres.js'
import { requireRedis } from '../../support/redis.js'
import { tempDir } from '../../support/tmp.js'

interface Test { teardown(fn: () => void | Promise<void>): void }
interface Auth { authenticated: boolean, role?: string }

const redis = await requireRedis(t, { durable: true })

/** `berth server` with the campaign plugin only, its ports 0 (read back from its log line), sessions in Redis. */
async function instance (t: Test, name: string, campaign: string[], database: string): Promise<{ base: URL, child: RunningCli }> {
  const dir = tempDir(t, `berth-campaign-${name}-`)
  writeFileSync(join(dir, 'cluster.toml'), [
    '[server.listeners.control]', 'host = "127.0.0.1"', 'port = 0',
    '[server.listeners.app]', 'host = "127.0.0.1"',
    '[campaign]', ...campaign].join('\n'))
  const child = spawnCliForTest(t, ['server'], { cwd: dir, env: { BERTH_PLUGINS: 'campaign', BERTH_APP_PORT: '0', CAMPAIGN_REDIS_URL: redis?.url ?? '', CAMPAIGN_DATABASE_URL: database } })
  const urls = await boundUrls(child, `instance ${name}`)
  await untilAnswers(child, new URL('/api/v1/health', urls.control), `instance ${name}`)
  return { base: urls.app, child }
}

const checkAuth = async (base: URL, cookie: string): Promise<Auth> => await callServerFunction<Auth>('check-auth', {}, { baseUrl: base, headers: { cookie } })
const failure = async (call: Promise<unknown>): Promise<{ status: number, code?: string } | 'ok'> =>
  await call.then(() => 'ok' as const, (err: unknown) => {
    if (err instanceof ServerFunctionError) return { status: err.status, code: err.code }
    throw err
  })

if (redis !== undefined) {
  t.test('two instances share sessions and logins through Redis', async t => {
    // One public address for both, as behind a load balancer: the IDP sends the browser back to it.
    // It is a port of the test's, in front of A once A is up (A's own port is known only then).
    const front = await laterPort(t)
    const appUrl = `http://127.0.0.1:${front.port}/`
    const idp = await startDevIdp({ realm: 'hq', clientId: 'web', redirectUris: [`${appUrl}auth/callback`], postLogoutRedirectUris: [appUrl], users: seedUsers(ROLES, 'campaign.test') })
    t.teardown(idp.close)
    const settings = [`idp_url = "${idp.url}"`, 'idp_realm = "hq"', 'idp_client_id = "web"', `app_url = "${appUrl}"`, 'contribution_limit_cents = 100000']
    const database = await postgresDatabase(t)
    const a = { ...await instance(t, 'a', settings, database) }
    front.forward(Number(a.base.port))
    a.base = new URL(appUrl)
    const b = await instance(t, 'b', settings, database)
    const user = (role: string): { username: string, password: string } => idp.users.find(u => u.role === role) as { username: string, password: string }

    /** /auth on A; the IDP's answer delivered to B (the balancer's choice); the session cookie. */
    const loginAcross = async (role: string): Promise<string> => {
      const jar = new CookieJar()
      const callback = await signInThroughIdp(jar, new URL('/auth?redirect_url=%2Fvolunteers', a.base), user(role), url => url.pathname === '/auth/callback')
      const onB = new URL(`${callback.pathname}${callback.search}`, b.base)
      const answer = await send(jar, onB)
      t.equal(answer.status, 302, `the callback of a login started on A is completed by B (${role})`)
      t.equal(answer.headers.get('location'), '/volunteers', 'back to the page asked for on A')
      return jar.header(b.base)
    }

    const staff = await loginAcross('staff')
    t.match(await checkAuth(a.base, staff), { authenticated: true, role: 'staff' }, 'the session made on B is known to A')
    t.match(await checkAuth(b.base, staff), { authenticated: true, role: 'staff' }, 'and to B')
    t.equal(await failure(callServerFunction('list-volunteers', {}, { baseUrl: a.base, headers: { cookie: staff } })), 'ok', 'a staff function on A')
    t.same(await failure(callServerFunction('admin-health', {}, { baseUrl: b.base, headers: { cookie: staff } })), { status: 403, code: 'BERTH_ROLE_TOO_LOW' }, 'and the role checked on B')

    // Two gifts of $600 from one donor at once, one on each instance: each fits the $1,000 limit alone, not together.
    const gift = { donor_name: 'Dana Doe', donor_email: 'dana@campaign.test', amount_cents: 60_000, donor_address: '1 Main St, Springfield', donor_occupation: 'Teacher', donor_employer: 'Springfield Schools' }
    for (let round = 0; round < 3; round++) {
      const email = `dana${round}@campaign.test`
      const outcomes = await Promise.all([a, b].map(async side => await failure(callServerFunction('record-donation', { ...gift, donor_email: email }, { baseUrl: side.base, headers: { cookie: staff } }))))
      t.same(outcomes.filter(o => o === 'ok').length, 1, `round ${round + 1}: exactly one of two concurrent donations is accepted`)
      t.same(outcomes.find(o => o !== 'ok'), { status: 409, code: 'BERTH_DONATION_OVER_LIMIT' }, 'the other is over the limit')
      const donations = await callServerFunction<{ donations: unknown[] }>('list-donations', { donor_id: (await callServerFunction<{ donors: Array<{ donor_id: string, email: string }> }>('list-donors', { search: email }, { baseUrl: b.base, headers: { cookie: staff } })).donors[0].donor_id }, { baseUrl: a.base, headers: { cookie: staff } })
      t.equal(donations.donations.length, 1, 'one donation stored, seen from either instance')
    }
    await callServerFunction('kb-ingest', { title: 'Ferry plan', text: 'The ferry will run every twenty minutes between the islands and the harbour.' }, { baseUrl: a.base, headers: { cookie: staff } })
    const found = await callServerFunction<{ results: Array<{ title: string }> }>('kb-query', { query: 'ferry harbour' }, { baseUrl: b.base, headers: { cookie: staff } })
    t.equal(found.results[0]?.title, 'Ferry plan', 'a document ingested on A is found by B at once')

    const admin = await loginAcross('admin')
    const sessionsOn = async (base: URL): Promise<number> => (await callServerFunction<{ counts: { sessions: number } }>('admin-health', {}, { baseUrl: base, headers: { cookie: admin } })).counts.sessions
    t.same([await sessionsOn(a.base), await sessionsOn(b.base)], [2, 2], 'both instances count the same two sessions')

    // Logout on A ends the session everywhere.
    const out = await fetch(new URL('/logout', a.base), { redirect: 'manual', headers: { cookie: staff } })
    t.equal(out.status, 302)
    t.match(out.headers.get('set-cookie'), /^campaign_session=; Max-Age=0/, 'A clears the cookie')
    t.match(await checkAuth(b.base, staff), { authenticated: false }, 'logged out on A: B no longer knows the session')
    t.same(await failure(callServerFunction('list-volunteers', {}, { baseUrl: b.base, headers: { cookie: staff } })), { status: 401, code: 'BERTH_UNAUTHORIZED' })

    // A used state cannot be replayed on the other instance.
    const replay = new CookieJar()
    const callback = await signInThroughIdp(replay, new URL('/auth', a.base), user('volunteer'), url => url.pathname === '/auth/callback')
    t.equal((await send(replay, callback)).status, 302, 'completed on A')
    t.equal((await send(new CookieJar(), new URL(`${callback.pathname}${callback.search}`, b.base))).status, 400, 'the same callback on B is refused: each login is used once')

    // One instance killed: the signed-in user goes on with the other.
    a.child.kill('SIGKILL')
    t.equal(await exited(a.child), 'SIGKILL')
    t.match(await checkAuth(b.base, admin), { authenticated: true, role: 'admin' }, 'A killed: the admin keeps working on B')

    // Redis killed (a crash): B answers 503 with a reason, then recovers by itself; the session survives (append-only file).
    await redis.kill()
    const down = await pollUntil(async () => { const f = await failure(checkAuth(b.base, admin)); return f !== 'ok' && f }, { what: 'a 503 while Redis is away' })
    t.same(down, { status: 503, code: 'BERTH_SESSION_STORE_UNAVAILABLE' }, 'Redis away: 503 naming the session store')
    const page = await followRedirects(new CookieJar(), new URL('/auth', b.base))
    t.equal(page.response.status, 503, 'a new sign-in is refused with a page')
    t.match(await page.response.text(), /session store does not answer/)
    await redis.start()
    const back = await pollUntil(async () => { const f = await failure(checkAuth(b.base, admin)); return f === 'ok' && f }, { timeout: 15_000, what: 'B to use Redis again' })
    t.equal(back, 'ok', 'Redis back: B answers again without a restart')
    t.match(await checkAuth(b.base, admin), { authenticated: true, role: 'admin' }, 'and the session written before the crash is still there')
  })

  t.test('PostgreSQL stopped: functions answer 503, and recover by themselves when it is back', async t => {
    const server = await ownPostgres(t)
    const { call } = await campaignApp(t, { database_url: server.url(), redis_url: redis.url })
    await call('kb-ingest', { title: 'Ferry plan', text: 'The ferry will run every twenty minutes.' })
    t.equal(await failure(call('list-volunteers', {})), 'ok')
    await server.stop()
    t.same(await failure(call('list-volunteers', {})), { status: 503, code: 'BERTH_DATABASE_UNAVAILABLE' }, 'PostgreSQL stopped: 503 naming the database')
    t.same(await failure(call('kb-query', { query: 'ferry' })), { status: 503, code: 'BERTH_DATABASE_UNAVAILABLE' }, 'a query of the knowledge base too (it checks its copy is current)')
    await server.start()
    const back = await pollUntil(async () => { const f = await failure(call('kb-query', { query: 'ferry' })); return f === 'ok' && f }, { timeout: 20_000, what: 'the app to use PostgreSQL again' })
    t.equal(back, 'ok', 'PostgreSQL back: the app answers again without a restart')
    t.equal((await call<{ results: Array<{ title: string }> }>('kb-query', { query: 'ferry' })).results[0]?.title, 'Ferry plan', 'with what was stored before')
  })

  t.test('a Redis or PostgreSQL URL that is wrong or unreachable stops the start with one line', async t => {
    const dir = tempDir(t, 'berth-campaign-bad-redis-')
    writeFileSync(join(dir, 'cluster.toml'), ['[server.listeners.control]', 'host = "127.0.0.1"', 'port = 0', '[server.listeners.app]', 'host = "127.0.0.1"', 'port = 0'].join('\n'))
    const unreachable = await runCli(['server'], { cwd: dir, env: { BERTH_PLUGINS: 'campaign', CAMPAIGN_REDIS_URL: `redis://127.0.0.1:${await closingPort(t)}` } })
    t.not(unreachable.code, 0)
    t.match(unreachable.stderr, /session store at 127\.0\.0\.1:\d+ \(\[campaign\]\.redis_url \(CAMPAIGN_REDIS_URL\)\) does not answer/)
    const wrong = await runCli(['server'], { cwd: dir, env: { BERTH_PLUGINS: 'campaign', CAMPAIGN_REDIS_URL: 'http://127.0.0.1:6379' } })
    t.not(wrong.code, 0)
    t.match(wrong.stderr, /must be a redis:\/\/ or rediss:\/\/ URL, got http:/)
    const password = new URL(redis.url).password
    const refused = await runCli(['server'], { cwd: dir, env: { BERTH_PLUGINS: 'campaign', CAMPAIGN_REDIS_URL: redis.url.replace(password, 'wrong') } })
    t.not(refused.code, 0)
    t.notMatch(refused.stderr + refused.stdout, password, 'the password is never printed')
    t.notMatch(refused.stderr + refused.stdout, 'wrong@', 'nor the one given')
    const database = await runCli(['server'], { cwd: dir, env: { BERTH_PLUGINS: 'campaign', CAMPAIGN_DATABASE_URL: `postgres://berth:secret-word@127.0.0.1:${await closingPort(t)}/campaign` } })
    t.not(database.code, 0)
    t.match(database.stderr, /\[campaign\]\.database_url \(CAMPAIGN_DATABASE_URL\): the PostgreSQL database at postgres:\/\/berth:\*\*\*@127\.0\.0\.1:\d+\/campaign could not be prepared/)
    t.notMatch(database.stderr + database.stdout, 'secret-word', 'the database password is never printed')
  })
}
