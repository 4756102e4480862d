// SSO mode: bearer JWTs verified against the identity provider's JWKS (Keycloak realm paths), issued
// for the dashboard's client, roles from realm_access.roles, and the userinfo fallback for tokens that
// do not verify. The first provider is a small loopback server publishing a real RSA key (Keycloak-shaped
// tokens signed here) and answering userinfo; the audience is also tested with oidc-provider itself.
// The embedded development provider: asked for, refused in production, its passwords never logged.
import t, { type Test } from 'tap'
import { readFileSync, statSync } from 'node:fs'
import { createServer } from 'node:http'
import { join } from 'node:path'
import { exportJWK, generateKeyPair, SignJWT, type JWTPayload } from 'jose'
import devIdp from '../../../plugins/dev-idp/index.js'
import { startDevIdp } from '../../../plugins/dev-idp/provider.js'
import { seedUsers } from '../../../plugins/dev-idp/users.js'
import ingest from '../../../plugins/ingest/index.js'
import { capturedLogger, testKernel } from '../../support/kernel.js'
import { accessToken } from '../../support/oidc.js'
import { pollUntil } from '../../support/poll.js'
import { backendSettings, onPostgres, telemetryServer, type TelemetryServer } from './harness.js'

type PrivateKey = Awaited<ReturnType<typeof generateKeyPair>>['privateKey']
type Signer = (roles: string[], options?: { key?: PrivateKey, iss?: string, client?: JWTPayload, expires?: string | number }) => Promise<string>
type Caller = (method: string, path: string, bearer: string | undefined, body?: unknown) => Promise<number>

/** A Keycloak-like provider on loopback: its JWKS, and userinfo that knows the tokens in `accepted`; both counted. */
async function loopbackIdp (t: Test): Promise<{ server: TelemetryServer, issuer: string, counts: { jwks: number, userinfo: number }, accepted: Map<string, string[]>, token: Signer, strangerKey: PrivateKey, call: Caller }> {
  const { publicKey, privateKey } = await generateKeyPair('RS256')
  const stranger = await generateKeyPair('RS256')
  const jwk = { ...await exportJWK(publicKey), kid: 'k1', alg: 'RS256', use: 'sig' }
  const counts = { jwks: 0, userinfo: 0 }
  const accepted = new Map<string, string[]>()
  const idp = createServer((request, response) => {
    response.setHeader('content-type', 'application/json')
    const roles = accepted.get((request.headers.authorization ?? '').replace(/^Bearer /, ''))
    if (request.url === '/realms/fleet/.well-known/openid-configuration') {
      response.end(JSON.stringify({ issuer: 'realm' }))
    } else if (request.url === '/realms/fleet/protocol/openid-connect/certs') {
      counts.jwks++
      response.end(JSON.stringify({ keys: [jwk] }))
    } else if (request.url === '/realms/fleet/protocol/openid-connect/userinfo') {
      counts.userinfo++
      if (roles !== undefined) {
        response.end(JSON.stringify({ sub: 'u-9', preferred_username: 'pat', realm_access: { roles } }))
        return
      }
      response.statusCode = 401
      response.end('{"error":"invalid_token"}')
    } else {
      response.statusCode = 404
      response.end('{}')
    }
  })
  await new Promise<void>(resolve => idp.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { idp.close() })
  const idpUrl = `http://127.0.0.1:${(idp.address() as { port: number }).port}`
  const issuer = `${idpUrl}/realms/fleet`
  // As Keycloak issues them: the client in azp, aud often just "account".
  const token: Signer = async (roles, options = {}) => {
    const { key = privateKey, iss = issuer, client = { azp: 'dashboard', aud: 'account' }, expires = '5m' } = options
    return await new SignJWT({ realm_access: { roles }, preferred_username: 'sam', ...client })
      .setProtectedHeader({ alg: 'RS256', kid: 'k1' }).setIssuer(iss).setSubject('u-1').setIssuedAt().setExpirationTime(expires).sign(key)
  }
  const server = await telemetryServer(t, { sso: { idp_url: idpUrl, realm: 'fleet', client_id: 'dashboard' } })
  const call: Caller = async (method, path, bearer, body) => (await fetch(new URL(path, server.base), {
    method,
    headers: { ...(bearer !== undefined ? { authorization: `Bearer ${bearer}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined
  })).status
  return { server, issuer, counts, accepted, token, strangerKey: stranger.privateKey, call }
}

t.test('bearer tokens decide the role; unverifiable tokens go to userinfo', async t => {
  const { server, issuer, counts, accepted, token, strangerKey, call } = await loopbackIdp(t)
  accepted.set('opaque-provisioner', ['fleet-provisioner'])
  const mode = await (await fetch(new URL('/auth/mode', server.base))).json()
  t.match(mode, { mode: 'sso', client_id: 'dashboard', realm: 'fleet', issuer, authorization: `${issuer}/protocol/openid-connect/auth`, token: `${issuer}/protocol/openid-connect/token` })

  t.equal(await call('GET', '/devices', await token([])), 200, 'no fleet role: viewer')
  t.equal(await call('POST', '/devices/register', await token([]), { id: '0000000000000001' }), 403)
  t.equal(await call('POST', '/devices/register', await token(['fleet-provisioner']), { id: '0000000000000001' }), 201)
  t.equal(await call('GET', '/admin/backup', await token(['fleet-provisioner'])), 403)
  // On PostgreSQL the backup of the embedded store is refused (409): that database has tools of its own.
  t.equal(await call('GET', '/admin/backup', await token(['fleet-admin'])), onPostgres() ? 409 : 200)
  t.equal(counts.userinfo, 0, 'verified tokens never go to userinfo')
  t.match(await pollUntil(() => server.kernel.health().plugins.ingest.checks?.['identity-provider'], { what: 'the identity provider check' }), { status: 'ok' }, 'health: the provider answers')
  t.equal(await call('GET', '/devices', await token(['fleet-admin'], { key: strangerKey })), 401, 'signed by another key, unknown to userinfo')
  t.equal(counts.userinfo, 1)
  t.equal(await call('GET', '/devices', await token(['fleet-admin'], { iss: 'http://evil.example/realms/fleet' })), 401, 'wrong issuer')
  t.equal(await call('GET', '/devices', await token(['fleet-admin'], { client: { azp: 'campaign', aud: 'account' } })), 401, 'issued for another client of the realm')
  t.equal(await call('GET', '/devices', await token(['fleet-admin'], { client: {} })), 401, 'issued for no client')
  t.equal(await call('GET', '/devices', await token(['fleet-admin'], { client: { azp: 'campaign', aud: ['account', 'dashboard'] } })), 200, 'another client\'s token addressed to this API (a Keycloak audience mapper)')
  t.equal(await call('GET', '/devices', await token(['fleet-admin'], { client: { client_id: 'dashboard', aud: 'urn:api' } })), 200, 'an RFC 9068 access token of the dashboard (client_id, no azp)')
  t.equal(counts.userinfo, 1, 'a verified token with a wrong issuer or client is refused without asking userinfo')
  const campaigns = await token(['fleet-admin'], { key: strangerKey, client: { azp: 'campaign' } })
  accepted.set(campaigns, ['fleet-admin'])
  t.equal(await call('GET', '/devices', campaigns), 401, 'unverifiable and for another client: refused, though userinfo would vouch for it')
  t.equal(counts.userinfo, 1, 'not offered to userinfo')
  t.equal(await call('POST', '/devices/register', 'opaque-provisioner', { id: '0000000000000002' }), 201, 'userinfo fallback grants its roles')
  t.equal(await call('GET', '/devices', undefined), 401)
  const basic = await fetch(new URL('/devices', server.base), { headers: { authorization: `Basic ${Buffer.from('admin:x').toString('base64')}` } })
  t.equal(basic.status, 401, 'Basic is off in SSO mode')
  t.equal(basic.headers.get('www-authenticate'), 'Bearer realm="berth telemetry"')
  t.equal(counts.jwks, 1, 'signing keys are cached')
})

t.test('userinfo answers are kept per token, no longer than the token lives, and calls are limited', async t => {
  const { counts, accepted, token, strangerKey, call } = await loopbackIdp(t)
  const fifty = async (bearer: string): Promise<number[]> => await Promise.all(Array.from({ length: 50 }, async () => await call('GET', '/devices', bearer)))
  t.same(await fifty('opaque-garbage'), Array(50).fill(401), '50 requests with one bad opaque token')
  t.equal(counts.userinfo, 1, 'one userinfo call')
  t.same(await fifty(await token(['fleet-admin'], { key: strangerKey })), Array(50).fill(401), '50 requests with one JWT of a key the realm does not hold')
  t.equal(counts.userinfo, 2, 'one userinfo call')

  accepted.set('opaque-viewer', ['fleet-viewer'])
  t.same(await fifty('opaque-viewer'), Array(50).fill(200), 'a token userinfo accepts works')
  t.equal(counts.userinfo, 3, 'asked once')

  const shortLived = await token(['fleet-admin'], { key: strangerKey, expires: Math.floor(Date.now() / 1000) + 2 })
  accepted.set(shortLived, ['fleet-admin'])
  t.equal(await call('GET', '/devices', shortLived), 200, 'userinfo vouches for a token the JWKS cannot verify')
  await pollUntil(async () => await call('GET', '/devices', shortLived) === 401, { timeout: 10_000, what: 'the token to expire' })
  t.equal(counts.userinfo, 4, 'its answer was kept until the token expired, and an expired token is not offered again')

  const before = counts.userinfo
  const distinct = await Promise.all(Array.from({ length: 40 }, async (_, n) => await call('GET', '/devices', `opaque-garbage-${n}`)))
  t.same(distinct, Array(40).fill(401), '40 different bad tokens')
  t.ok(counts.userinfo - before <= 12, `at most the bucket (10, one more a second) reached the provider: ${counts.userinfo - before}`)
})

t.test('with oidc-provider: a token of the dashboard\'s client is accepted, one of another client of the realm refused', async t => {
  const redirectUri = 'http://127.0.0.1:9/callback'
  const idp = await startDevIdp({ realm: 'fleet', clientId: 'dashboard', otherClientIds: ['campaign'], redirectUris: [redirectUri], postLogoutRedirectUris: [], users: seedUsers(['fleet-admin'], 'fleet.test') })
  t.teardown(idp.close)
  const server = await telemetryServer(t, { sso: { idp_url: idp.url, realm: 'fleet', client_id: 'dashboard' } })
  const me = async (token: string): Promise<{ status: number, body: unknown }> => {
    const response = await fetch(new URL('/auth/me', server.base), { headers: { authorization: `Bearer ${token}` } })
    return { status: response.status, body: await response.json() }
  }
  const [admin] = idp.users
  t.same(await me(await accessToken(idp, 'dashboard', redirectUri, admin)), { status: 200, body: { name: admin.sub, role: 'admin' } }, 'the dashboard\'s token (its access token names the subject)')
  t.same(await me(await accessToken(idp, 'campaign', redirectUri, admin)), { status: 401, body: { error: 'a valid bearer token is required', code: 'BERTH_UNAUTHORIZED' } }, 'the same user\'s token for the campaign app')
})

t.test('the development provider is refused beside a real one, and in production', async t => {
  await t.rejects(telemetryServer(t, { sso: { dev_idp: true, idp_url: 'https://id.example.org', realm: 'fleet', client_id: 'dashboard' } }),
    { message: /\[ingest\]\.sso\.dev_idp runs its own identity provider; leave sso\.idp_url \(IDP_URL\) empty/ })
  const production = await testKernel(t, { plugins: [devIdp, ingest], env: { NODE_ENV: 'production' }, config: { ingest: { ...await backendSettings(t), sso: { dev_idp: true } } }, noStart: true })
  await t.rejects(production.start(), { message: 'plugin "ingest" failed during setup: [ingest].sso.dev_idp is for development and is refused when NODE_ENV=production' })
})

t.test('the development provider\'s passwords: in a 0600 file and the start-up summary, never in the log', async t => {
  const { logger, lines } = capturedLogger('trace')
  const server = await telemetryServer(t, { users: [], sso: { dev_idp: true } }, logger)
  const file = join(server.kernel.config.stateDir, 'telemetry-dev-idp-passwords')
  t.equal(statSync(file).mode & 0o777, 0o600)
  const kept = [...readFileSync(file, 'utf8').matchAll(/^(admin|provisioner|viewer) (\S+)$/gm)].map(m => [m[1], m[2]])
  t.same(kept.map(([login]) => login), ['admin', 'provisioner', 'viewer'], 'one user per fleet role')
  const dashboard = new URL('/dashboard/', server.base).href
  t.same(server.kernel.notes, [`telemetry dashboard: ${dashboard} — sign in through the development identity provider; new passwords (kept in ${file}):\n${kept.map(pair => pair.join(' ')).join('   ')}`])
  for (const [, password] of kept) t.notMatch(lines(), password, 'no password in the log')
  t.match(await (await fetch(new URL('/auth/mode', dashboard))).json(), { mode: 'sso', realm: 'fleet', client_id: 'dashboard' })
})

t.test('the start-up summary says how to sign in to the dashboard in each mode', async t => {
  const basic = await telemetryServer(t, { users: [] })
  t.same(basic.kernel.notes, [`telemetry dashboard: ${new URL('/dashboard/', basic.base).href} — sign in as admin with the password in ${join(basic.kernel.config.stateDir, 'telemetry-admin-password')}`])
  const users = await telemetryServer(t)
  t.match(users.kernel.notes[0], /— sign in as one of \[ingest\]\.users \(\w+(, \w+)*\)$/)
  // A provider on loopback that does not answer (port 9): health says so.
  const sso = await telemetryServer(t, { sso: { idp_url: 'http://127.0.0.1:9/', realm: 'fleet', client_id: 'dashboard' } })
  t.match(sso.kernel.notes[0], /— sign in through http:\/\/127\.0\.0\.1:9\/realms\/fleet$/)
  const down = await pollUntil(() => sso.kernel.health().plugins.ingest.checks?.['identity-provider'], { what: 'the identity provider check' })
  t.match(down, { status: 'down', reason: /^http:\/\/127\.0\.0\.1:9\/realms\/fleet\/\.well-known\/openid-configuration is unreachable \(bad port\): the dashboard cannot sign anyone in/ })
})
