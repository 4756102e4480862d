// The parts of the login and the session that need no server: sessions (sliding expiry, bound),
// the signed cookie, pending logins (single use, expiry, bound), PKCE and state values, local paths, roles.
import t from 'tap'
import { createHash } from 'node:crypto'
import { UnsecuredJWT } from 'jose'
import { localPath, MAX_LOCAL_PATH } from '../../../plugins/campaign/local-path.js'
import { newLoginSecrets } from '../../../plugins/campaign/login-secrets.js'
import { MemoryPendingLogins } from '../../../plugins/campaign/pending-logins.js'
import { mayCall, roleFromAccessToken, roleFromClaim } from '../../../plugins/campaign/roles.js'
import { SESSION_COOKIE, SessionCookie } from '../../../plugins/campaign/session-cookie.js'
import { MemorySessions, type SessionRecord } from '../../../plugins/campaign/sessions.js'

const HOUR = 3_600_000
const record = (sub: string): SessionRecord => ({ sub, email: `${sub}@x.test`, name: sub, role: 'staff', access_token: 'a', refresh_token: 'r', id_token: 'i' })

t.test('sessions expire after the idle time, and each use slides the expiry', async t => {
  let now = 0
  const store = new MemorySessions({ idleMs: 24 * HOUR, maxSessions: 10, now: () => now })
  const id = await store.create(record('ada'))
  t.match(id, /^[A-Za-z0-9_-]{43}$/, 'a 256-bit random id')
  now = 23 * HOUR
  t.equal((await store.touch(id))?.sub, 'ada', 'alive after 23 h')
  now = 46 * HOUR
  t.equal((await store.touch(id))?.sub, 'ada', 'alive 23 h after the last use, 46 h after creation')
  now = 70 * HOUR
  t.equal(await store.touch(id), undefined, 'gone after 24 h without use')
  t.equal(await store.count(), 0)
})

t.test('sessions are bounded: the least recently used gives way', async t => {
  const store = new MemorySessions({ idleMs: HOUR, maxSessions: 2 })
  const a = await store.create(record('a'))
  const b = await store.create(record('b'))
  await store.touch(a)
  const c = await store.create(record('c'))
  t.equal(await store.touch(b), undefined, 'b was the least recently used')
  t.ok(await store.touch(a) !== undefined && await store.touch(c) !== undefined)
  t.not(a, b, 'every session has its own id')
})

t.test('the session cookie is signed, HttpOnly, SameSite=Lax, Secure only over HTTPS', async t => {
  const cookie = new SessionCookie({ secure: false })
  const set = cookie.issue('abc')
  t.match(set, new RegExp(`^${SESSION_COOKIE}=abc\\.[A-Za-z0-9_-]{43}; Path=/; HttpOnly; SameSite=Lax$`))
  const value = set.split(';')[0]
  t.equal(cookie.read(`other=1; ${value}`), 'abc', 'read back among other cookies')
  const signature = value.split('.')[1]
  t.equal(cookie.read(`${SESSION_COOKIE}=abd.${signature}`), undefined, 'another id with the same signature is refused')
  t.equal(cookie.read(`${value.slice(0, -1)}${value.endsWith('A') ? 'B' : 'A'}`), undefined, 'a changed signature is refused')
  t.equal(cookie.read(`${SESSION_COOKIE}=abc`), undefined, 'no signature')
  t.equal(cookie.read(undefined), undefined)
  t.equal(new SessionCookie({ secure: false }).read(value), undefined, 'another key (a restarted server) does not accept it')
  t.match(new SessionCookie({ secure: true }).issue('x'), /; Secure$/)
  t.match(cookie.clear(), /^campaign_session=; Max-Age=0; Path=\/; HttpOnly; SameSite=Lax$/)
})

t.test('pending logins are single use, expire and are bounded', async t => {
  let now = 0
  const pending = new MemoryPendingLogins({ ttlMs: 600_000, maxEntries: 2, now: () => now })
  await pending.add('s1', { codeVerifier: 'v1', redirectPath: '/a' })
  t.same(await pending.take('s1'), { codeVerifier: 'v1', redirectPath: '/a' })
  t.equal(await pending.take('s1'), undefined, 'a state works once')
  await pending.add('s2', { codeVerifier: 'v2', redirectPath: '/' })
  now = 600_000
  t.equal(await pending.take('s2'), undefined, 'expired after 10 minutes')
  await pending.add('s3', { codeVerifier: 'v3', redirectPath: '/' })
  await pending.add('s4', { codeVerifier: 'v4', redirectPath: '/' })
  await pending.add('s5', { codeVerifier: 'v5', redirectPath: '/' })
  t.equal(await pending.count(), 2)
  t.equal(await pending.take('s3'), undefined, 'the oldest gave way')
  t.equal((await pending.take('s5'))?.codeVerifier, 'v5')
})

t.test('login secrets: verifier of 43 base64url characters, S256 challenge, state of 64 hex', async t => {
  const a = await newLoginSecrets()
  const b = await newLoginSecrets()
  t.match(a.codeVerifier, /^[A-Za-z0-9_-]{43}$/)
  t.equal(a.codeChallenge, createHash('sha256').update(a.codeVerifier).digest('base64url'))
  t.match(a.state, /^[0-9a-f]{64}$/)
  t.not(a.codeVerifier, b.codeVerifier)
  t.not(a.state, b.state)
})

t.test('only local paths are accepted as redirect targets', async t => {
  for (const good of ['/', '/fundraising', '/knowledge-base?q=x#top', '/a/%2F%2Fevil.test', `/${'x'.repeat(MAX_LOCAL_PATH - 1)}`]) t.equal(localPath(good), good, good.slice(0, 40))
  const bad = ['https://evil.test/', '//evil.test', '/\\evil.test', '\\\\evil.test', 'evil.test', '', 'javascript:alert(1)',
    '/\t/evil.test', '/\n/evil.test', ' /x', '%2F%2Fevil.test', 'http:/evil.test', `/${'x'.repeat(MAX_LOCAL_PATH)}`]
  for (const value of bad) t.equal(localPath(value), undefined, JSON.stringify(value).slice(0, 40))
})

t.test('role from realm_access.roles: admin > staff > volunteer > readonly, staff when none', async t => {
  t.equal(roleFromClaim(['readonly', 'volunteer']), 'volunteer')
  t.equal(roleFromClaim(['readonly', 'admin', 'staff']), 'admin')
  t.equal(roleFromClaim(['readonly']), 'readonly')
  t.equal(roleFromClaim(['offline_access']), 'staff')
  const token = (claims: Record<string, unknown>): string => new UnsecuredJWT(claims).encode()
  t.equal(roleFromAccessToken(token({ realm_access: { roles: ['volunteer', 'uma_authorization'] } })), 'volunteer')
  t.equal(roleFromAccessToken(token({ realm_access: { roles: 'admin' } })), 'staff', 'a malformed claim names no role')
  t.equal(roleFromAccessToken(token({})), 'staff')
  t.equal(roleFromAccessToken('opaque-token'), 'staff')
  t.ok(mayCall('admin', []), 'admin may call anything')
  t.ok(mayCall('staff', ['staff']))
  t.notOk(mayCall('readonly', ['staff', 'volunteer']))
})
