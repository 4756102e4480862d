// The login against the embedded development IDP (oidc-provider on loopback, started when asked for,
// its passwords kept in a 0600 file and never logged): /auth with PKCE and state, the callback,
// sessions and their cookie, the middleware, logout, every way a login must fail cleanly, and the
// clear page when no identity provider is configured.
import t, { type Test } from 'tap'
import { readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import type { Kernel } from '../../../kernel/index.js'
import devIdp from '../../../plugins/dev-idp/index.js'
import campaign from '../../../plugins/campaign/index.js'
import { callServerFunction } from '../../../plugins/campaign/client.js'
import { ROLES } from '../../../plugins/campaign/roles.js'
import { startDevIdp } from '../../../plugins/dev-idp/provider.js'
import { seedUsers } from '../../../plugins/dev-idp/users.js'
import { campaignKernel, CookieJar, followRedirects, onSharedBackends, scriptedLogin, scriptedLogout, send, withDevIdp } from '../../support/campaign.js'
import { capturedLogger, testKernel } from '../../support/kernel.js'
import { laterPort } from '../../support/net.js'

/** A kernel with the campaign plugin and its development IDP (more `[campaign]` settings from `config`). */
async function startApp (t: Test, config: Record<string, unknown> = {}, logger = capturedLogger()): Promise<{ kernel: Kernel, app: URL, users: Record<string, { username: string, password: string }>, logs: () => string }> {
  const kernel = await campaignKernel(t, config, { logger: logger.logger })
  const idp = kernel.service('campaign').devIdp
  return { kernel, app: kernel.url('app'), users: Object.fromEntries((idp?.users ?? []).map(u => [u.role, u])), logs: logger.lines }
}

async function checkAuth (app: URL, cookie: string): Promise<{ authenticated: boolean, role: string, email: string, modules: string[] }> {
  return await callServerFunction('check-auth', {}, { baseUrl: app, headers: { cookie } })
}

const cookieLine = (response: Response): string => response.headers.getSetCookie().find(c => c.startsWith('campaign_session=')) ?? ''

/** Run /auth with a jar whose IDP session is live: the IDP answers at once, and the callback URL is kept, not followed. */
async function callbackUrl (jar: CookieJar, app: URL): Promise<URL> {
  let callback: URL | undefined
  await followRedirects(jar, new URL('/auth', app), url => {
    if (url.pathname === '/auth/callback') callback = url
    return callback !== undefined
  })
  if (callback === undefined) throw new Error('the IDP did not come back to the callback')
  return callback
}

const stateOf = async (app: URL): Promise<string> =>
  new URL((await send(new CookieJar(), new URL('/auth', app))).headers.get('location') ?? '').searchParams.get('state') ?? ''

t.test('a full login: /auth → IDP form → callback → session → the page asked for', async t => {
  const { kernel, app, users, logs } = await startApp(t)
  const file = join(kernel.config.stateDir, 'campaign-dev-idp-passwords')
  t.equal(statSync(file).mode & 0o777, 0o600, 'the passwords are kept in a 0600 file')
  t.match(readFileSync(file, 'utf8'), `\nadmin ${users.admin.password}\nstaff ${users.staff.password}\n`)
  t.match(kernel.notes.join('\n'), `admin ${users.admin.password}`, 'and told to the person at the terminal')
  t.notMatch(logs(), users.admin.password, 'but never logged')
  const started = Date.now()
  const login = await scriptedLogin(app, users.staff, '/fundraising?tab=donors')
  t.comment(`scripted login took ${Date.now() - started} ms`)
  t.equal(login.landed.href, new URL('/fundraising?tab=donors', app).href, 'back at the path given to /auth')
  t.match(await checkAuth(app, login.cookie), { authenticated: true, role: 'staff', email: 'staff@campaign.test', modules: ['knowledge-base', 'people', 'volunteers', 'events', 'canvassing'] })
  const page = await send(login.jar, new URL('/fundraising', app))
  t.not(page.status, 302, 'a page opens with the session')
  t.notMatch(logs(), login.cookie.split('=')[1].split('.')[0], 'the session id is never logged')
})

t.test('/auth sends the browser to the IDP with S256 PKCE and a 64-hex state', async t => {
  const { app } = await startApp(t)
  const response = await send(new CookieJar(), new URL('/auth?redirect_url=%2Fadmin', app))
  t.equal(response.status, 302)
  const target = new URL(response.headers.get('location') ?? '')
  t.match(target.pathname, /^\/realms\/campaign\/protocol\/openid-connect\/auth$/)
  const q = target.searchParams
  t.equal(q.get('client_id'), 'campaign-app')
  t.equal(q.get('response_type'), 'code')
  t.equal(q.get('redirect_uri'), new URL('/auth/callback', app).href)
  t.equal(q.get('code_challenge_method'), 'S256')
  t.match(q.get('code_challenge'), /^[A-Za-z0-9_-]{43}$/)
  t.match(q.get('state'), /^[0-9a-f]{64}$/)
  t.equal(q.get('code_verifier'), null, 'the verifier stays on the server')
})

t.test('the session cookie: HttpOnly, SameSite=Lax, no Secure over plain HTTP, a new id at every login', async t => {
  const { app, users } = await startApp(t)
  const first = await scriptedLogin(app, users.volunteer)
  // The same browser (app cookie) signs in again, as another user (a fresh IDP session).
  const jar = new CookieJar()
  jar.copyHost(first.jar, app)
  const second = await scriptedLogin(app, users.admin, '/', jar)
  t.not(second.cookie, first.cookie, 'the id changed')
  t.match(await checkAuth(app, first.cookie), { authenticated: false }, 'the session the browser carried before is ended')
  t.match(await checkAuth(app, second.cookie), { authenticated: true, role: 'admin' })
  const callback = await callbackUrl(second.jar, app)
  const response = await fetch(callback, { redirect: 'manual' })
  t.match(cookieLine(response), /^campaign_session=[A-Za-z0-9_-]{43}\.[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax$/)
})

t.test('middleware: pages redirect to /auth, functions answer 401, login routes and assets stay open', async t => {
  const { app } = await startApp(t)
  const page = await fetch(new URL('/volunteers?x=1', app), { redirect: 'manual' })
  t.equal(page.status, 302)
  t.equal(page.headers.get('location'), '/auth?redirect_url=%2Fvolunteers%3Fx%3D1')
  const long = await fetch(new URL(`/volunteers?x=${'é'.repeat(1000)}`, app), { redirect: 'manual' })
  t.equal(long.headers.get('location'), '/auth?redirect_url=%2Fvolunteers', 'a query too long to keep is left out of the return path')
  const fn = await fetch(new URL('/api/list-volunteers', app), { method: 'POST', headers: { 'content-type': 'application/cbor' }, body: new Uint8Array([0xa0]) })
  t.equal(fn.status, 401)
  t.equal(fn.headers.get('content-type'), 'application/cbor')
  t.equal((await fetch(new URL('/assets/none.js', app), { redirect: 'manual' })).status, 404, 'assets are not behind the login')
  t.equal((await fetch(new URL('/auth', app), { redirect: 'manual' })).status, 302)
  t.equal((await fetch(new URL('/auth/callback?state=x&code=y', app), { redirect: 'manual' })).status, 400)
  t.match(await checkAuth(app, ''), { authenticated: false, role: '', modules: [] }, 'check-auth is public')
})

t.test('unknown, missing or refused states get a clear 400 page and no session', async t => {
  const { app } = await startApp(t)
  for (const [what, url] of [
    ['unknown state', `/auth/callback?code=abc&state=${'a'.repeat(64)}`],
    ['no state', '/auth/callback?code=abc'],
    ['an error from the IDP', `/auth/callback?error=access_denied&state=${'b'.repeat(64)}`]
  ]) {
    const response = await fetch(new URL(url, app), { redirect: 'manual' })
    t.equal(response.status, 400, what)
    t.equal(response.headers.get('content-type'), 'text/html; charset=utf-8')
    t.equal(cookieLine(response), '', `${what}: no session`)
  }
})

t.test('a callback works once: the replay is refused', async t => {
  const { app, users } = await startApp(t)
  const login = await scriptedLogin(app, users.staff)
  const callback = await callbackUrl(login.jar, app)
  const first = await fetch(callback, { redirect: 'manual' })
  t.equal(first.status, 302, 'the first use signs in')
  t.match(cookieLine(first), /^campaign_session=/)
  const replay = await fetch(callback, { redirect: 'manual' })
  t.equal(replay.status, 400, 'the replay does not')
  t.match(await replay.text(), /unknown, has expired or was already used/)
  t.equal(cookieLine(replay), '')
})

t.test('the oldest pending login gives way when the bound is reached', { skip: onSharedBackends() && 'in Redis, pending logins are bounded by its maxmemory, not by max_pending_logins' }, async t => {
  const { app } = await startApp(t, { max_pending_logins: 1 })
  const evicted = await stateOf(app)
  const live = await stateOf(app)
  const gone = await fetch(new URL(`/auth/callback?code=x&state=${evicted}`, app), { redirect: 'manual' })
  t.match(await gone.text(), /unknown, has expired or was already used/, 'the first state was dropped')
  const kept = await fetch(new URL(`/auth/callback?code=x&state=${live}`, app), { redirect: 'manual' })
  t.match(await kept.text(), /refused the sign-in/, 'the second was still pending (the IDP refused the made-up code)')
})

t.test('a valid state with the wrong verifier fails at the IDP (PKCE holds)', async t => {
  const { app, users } = await startApp(t)
  const login = await scriptedLogin(app, users.staff)
  const callback = await callbackUrl(login.jar, app)
  // Another login's state: known to the app, but its verifier does not match this code's challenge.
  callback.searchParams.set('state', await stateOf(app))
  const response = await fetch(callback, { redirect: 'manual' })
  t.equal(response.status, 400)
  t.match(await response.text(), /refused the sign-in \(invalid_grant/)
  t.equal(cookieLine(response), '')
})

t.test('open redirects are refused at /auth', async t => {
  const { app } = await startApp(t)
  for (const target of ['https://evil.test/', '//evil.test', '/\\evil.test', '%2F%2Fevil.test', '%252F%252Fevil.test', '%2F%5Cevil.test', 'https:%2F%2Fevil.test', '/%09/evil.test', 'evil.test']) {
    const response = await fetch(new URL(`/auth?redirect_url=${target.includes('%') ? target : encodeURIComponent(target)}`, app), { redirect: 'manual' })
    t.equal(response.status, 400, target)
    t.equal(response.headers.get('location'), null, `${target}: no redirect`)
  }
})

t.test('a tampered session cookie is no session', async t => {
  const { app, users } = await startApp(t)
  const { cookie } = await scriptedLogin(app, users.admin)
  const [id, signature] = cookie.split('=')[1].split('.')
  const flipped = `${signature.slice(0, -1)}${signature.endsWith('A') ? 'B' : 'A'}`
  t.match(await checkAuth(app, cookie), { authenticated: true })
  t.match(await checkAuth(app, `campaign_session=${id}.${flipped}`), { authenticated: false })
  t.match(await checkAuth(app, `campaign_session=${id}`), { authenticated: false })
  const page = await fetch(new URL('/admin', app), { headers: { cookie: `campaign_session=${id}x.${signature}` }, redirect: 'manual' })
  t.equal(page.status, 302)
})

t.test('logout ends the session here and at the IDP, then returns to APP_URL', async t => {
  const { app, users } = await startApp(t)
  const login = await scriptedLogin(app, users.volunteer)
  const response = await send(login.jar, new URL('/logout', app))
  t.equal(response.status, 302)
  t.match(cookieLine(response), /^campaign_session=; Max-Age=0/)
  const target = new URL(response.headers.get('location') ?? '')
  t.equal(target.pathname, '/realms/campaign/protocol/openid-connect/logout')
  t.equal(target.searchParams.get('post_logout_redirect_uri'), app.href)
  t.equal(target.searchParams.get('client_id'), 'campaign-app')
  t.ok(target.searchParams.get('id_token_hint'))
  t.match(await checkAuth(app, login.cookie), { authenticated: false }, 'the session is gone on the server')
  const reLogin = await scriptedLogin(app, users.volunteer, '/', login.jar)
  const ended = await scriptedLogout(reLogin.jar, app)
  t.equal(ended.href, app.href, 'the IDP sends the browser back to the application')
  const form = await followRedirects(reLogin.jar, new URL('/auth', app))
  t.match(form.url.pathname, /\/login\//, 'the IDP asks for the password again: its session ended too')
})

t.test('a wrong password stays at the IDP form', async t => {
  const { app, users } = await startApp(t)
  const jar = new CookieJar()
  const form = await followRedirects(jar, new URL('/auth', app))
  const response = await send(jar, form.url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `username=admin&password=${users.staff.password}` })
  t.equal(response.status, 401)
  t.match(await response.text(), /Unknown user or wrong password/)
})

t.test('an IDP configured by URL is used instead of the embedded one', async t => {
  // The IDP needs the app's public address before the app runs: a port of the test's, in front of the
  // app (on port 0 of its own) once it is up.
  const front = await laterPort(t)
  const appUrl = `http://127.0.0.1:${front.port}/`
  const idp = await startDevIdp({ realm: 'hq', clientId: 'web', redirectUris: [`${appUrl}auth/callback`], postLogoutRedirectUris: [appUrl], users: seedUsers(ROLES, 'campaign.test') })
  t.teardown(idp.close)
  const kernel = await testKernel(t, {
    plugins: [devIdp, campaign],
    config: {
      server: { listeners: { control: { host: '127.0.0.1', port: 0 }, app: { host: '127.0.0.1', port: 0 } } },
      campaign: { idp_url: idp.url, idp_realm: 'hq', idp_client_id: 'web', app_url: appUrl }
    }
  })
  front.forward(Number(kernel.url('app').port))
  t.equal(kernel.service('campaign').devIdp, undefined, 'no embedded IDP')
  const login = await scriptedLogin(new URL(appUrl), idp.users.find(u => u.role === 'readonly') as { username: string, password: string })
  t.match(await checkAuth(new URL(appUrl), login.cookie), { authenticated: true, role: 'readonly' })
})

t.test('an unreachable IDP gives a 503 page', async t => {
  const { app } = await startApp(t, { dev_idp: false, idp_url: 'http://127.0.0.1:9' })
  const response = await fetch(new URL('/auth', app), { redirect: 'manual' })
  t.equal(response.status, 503)
  t.match(await response.text(), /identity provider cannot be reached/)
})

t.test('a restart on the same state directory keeps the development IDP\'s passwords, and says where they are', async t => {
  const first = await startApp(t)
  await first.kernel.stop()
  const again = await testKernel(t, { plugins: [devIdp, campaign], config: { ...withDevIdp(), server: { state_dir: first.kernel.config.stateDir } } })
  const users = again.service('campaign').devIdp?.users ?? []
  t.same(users.map(u => u.password), Object.values(first.users).map(u => u.password), 'the same passwords')
  t.same(again.notes.filter(note => note.startsWith('campaign app:')), [`campaign app: ${again.url('app').href} — sign in through the development identity provider as admin, staff, volunteer, readonly; passwords in ${join(first.kernel.config.stateDir, 'campaign-dev-idp-passwords')}`], 'not told again')
  const login = await scriptedLogin(again.url('app'), users.find(u => u.role === 'staff') as { username: string, password: string })
  t.match(await checkAuth(again.url('app'), login.cookie), { authenticated: true, role: 'staff' })
})

t.test('without an identity provider the app runs and says, on a clear page, that nobody can sign in', async t => {
  const logger = capturedLogger()
  const kernel = await testKernel(t, { plugins: [devIdp, campaign], logger: logger.logger })
  const app = kernel.url('app')
  t.equal(kernel.service('campaign').devIdp, undefined, 'no embedded IDP unless asked for')
  const remedy = 'set [campaign].idp_url (CAMPAIGN_IDP_URL), or, for development, turn on [campaign].dev_idp (CAMPAIGN_DEV_IDP, berth server --dev)'
  const page = await fetch(new URL('/volunteers', app), { redirect: 'manual' })
  t.equal(page.headers.get('location'), '/auth?redirect_url=%2Fvolunteers', 'pages still send a visitor to the login')
  for (const path of ['/auth?redirect_url=%2Fvolunteers', '/auth/callback?code=x&state=y']) {
    const response = await fetch(new URL(path, app), { redirect: 'manual' })
    t.equal(response.status, 503, path)
    t.equal(response.headers.get('content-type'), 'text/html; charset=utf-8')
    const html = await response.text()
    t.match(html, '<h1>Sign-in is not configured</h1>', `${path}: a page that says so`)
    t.match(html, remedy, `${path}: and what to do`)
  }
  const logout = await fetch(new URL('/logout', app), { redirect: 'manual' })
  t.same([logout.status, logout.headers.get('location')], [302, '/'], 'logout goes back to the app')
  t.match(await checkAuth(app, ''), { authenticated: false })
  t.match(kernel.health().plugins.campaign, { state: 'running', details: { sign_in: 'off: no identity provider' } }, 'the health report says so')
  t.same(kernel.notes, [`campaign app: ${app.href} — nobody can sign in: no identity provider is configured; ${remedy}`], 'so does the start-up summary')
  t.match(logger.lines(), `nobody can sign in to the campaign app: no identity provider is configured; ${remedy}`, 'and the log')
})
