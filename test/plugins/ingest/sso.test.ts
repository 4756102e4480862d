// SSO mode: bearer JWTs verified against the identity provider's JWKS (Keycloak realm paths), issued
// for the dashboard's client, roles from realm_access.roles, and the userinfo fallback for tokens that
// do not verify. The first provider is a small loopback server publishing a real RSA key (Keycloak-shaped
// tokens signed here) and answering userinfo; the audience is also tested with oidc-provider itself.
import t from 'tap'
import { createServer } from 'node:http'
import { exportJWK, generateKeyPair, SignJWT, type JWTPayload } from 'jose'
import { startDevIdp } from '../../../plugins/campaign/dev-idp/provider.js'
import { seedUsers } from '../../../plugins/campaign/dev-idp/users.js'
import { accessToken } from '../../support/oidc.js'
import { telemetryServer } from './harness.js'

t.test('bearer tokens decide the role; unverifiable tokens go to userinfo', async t => {
  const { publicKey, privateKey } = await generateKeyPair('RS256')
  const stranger = await generateKeyPair('RS256')
  const jwk = { ...await exportJWK(publicKey), kid: 'k1', alg: 'RS256', use: 'sig' }
  let jwksFetches = 0
  const idp = createServer((request, response) => {
    response.setHeader('content-type', 'application/json')
    if (request.url === '/realms/fleet/protocol/openid-connect/certs') {
      jwksFetches++
      response.end(JSON.stringify({ keys: [jwk] }))
    } else if (request.url === '/realms/fleet/protocol/openid-connect/userinfo' && request.headers.authorization === 'Bearer opaque-provisioner') {
      response.end(JSON.stringify({ sub: 'u-9', preferred_username: 'pat', realm_access: { roles: ['fleet-provisioner'] } }))
    } else {
      response.statusCode = 401
      response.end('{"error":"invalid_token"}')
    }
  })
  await new Promise<void>(resolve => idp.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { idp.close() })
  const idpUrl = `http://127.0.0.1:${(idp.address() as { port: number }).port}`
  const issuer = `${idpUrl}/realms/fleet`
  // As Keycloak issues them: the client in azp, aud often just "account".
  const token = async (roles: string[], key = privateKey, iss = issuer, client: JWTPayload = { azp: 'dashboard', aud: 'account' }): Promise<string> => await new SignJWT({ realm_access: { roles }, preferred_username: 'sam', ...client })
    .setProtectedHeader({ alg: 'RS256', kid: 'k1' }).setIssuer(iss).setSubject('u-1').setIssuedAt().setExpirationTime('5m').sign(key)

  const server = await telemetryServer(t, { sso: { idp_url: idpUrl, realm: 'fleet', client_id: 'dashboard' } })
  const call = async (method: string, path: string, bearer: string | undefined, body?: unknown): Promise<number> => (await fetch(new URL(path, server.base), {
    method,
    headers: { ...(bearer !== undefined ? { authorization: `Bearer ${bearer}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined
  })).status

  const mode = await (await fetch(new URL('/auth/mode', server.base))).json()
  t.match(mode, { mode: 'sso', client_id: 'dashboard', realm: 'fleet', issuer, authorization: `${issuer}/protocol/openid-connect/auth`, token: `${issuer}/protocol/openid-connect/token` })

  t.equal(await call('GET', '/devices', await token([])), 200, 'no fleet role: viewer')
  t.equal(await call('POST', '/devices/register', await token([]), { id: '0000000000000001' }), 403)
  t.equal(await call('POST', '/devices/register', await token(['fleet-provisioner']), { id: '0000000000000001' }), 201)
  t.equal(await call('GET', '/admin/backup', await token(['fleet-provisioner'])), 403)
  t.equal(await call('GET', '/admin/backup', await token(['fleet-admin'])), 200)
  t.equal(await call('GET', '/devices', await token(['fleet-admin'], stranger.privateKey)), 401, 'signed by another key, unknown to userinfo')
  t.equal(await call('GET', '/devices', await token(['fleet-admin'], privateKey, 'http://evil.example/realms/fleet')), 401, 'wrong issuer')
  t.equal(await call('GET', '/devices', await token(['fleet-admin'], privateKey, issuer, { azp: 'campaign', aud: 'account' })), 401, 'issued for another client of the realm')
  t.equal(await call('GET', '/devices', await token(['fleet-admin'], privateKey, issuer, {})), 401, 'issued for no client')
  t.equal(await call('GET', '/devices', await token(['fleet-admin'], privateKey, issuer, { azp: 'campaign', aud: ['account', 'dashboard'] })), 200, 'another client\'s token addressed to this API (a Keycloak audience mapper)')
  t.equal(await call('GET', '/devices', await token(['fleet-admin'], privateKey, issuer, { client_id: 'dashboard', aud: 'urn:api' })), 200, 'an RFC 9068 access token of the dashboard (client_id, no azp)')
  t.equal(await call('GET', '/devices', await token(['fleet-admin'], stranger.privateKey, issuer, { azp: 'campaign' })), 401, 'unverifiable and for another client: not offered to userinfo')
  t.equal(await call('POST', '/devices/register', 'opaque-provisioner', { id: '0000000000000002' }), 201, 'userinfo fallback grants its roles')
  t.equal(await call('GET', '/devices', undefined), 401)
  const basic = await fetch(new URL('/devices', server.base), { headers: { authorization: `Basic ${Buffer.from('admin:x').toString('base64')}` } })
  t.equal(basic.status, 401, 'Basic is off in SSO mode')
  t.equal(basic.headers.get('www-authenticate'), 'Bearer realm="berth telemetry"')
  t.equal(jwksFetches, 1, 'signing keys are cached')
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
  t.same(await me(await accessToken(idp, 'campaign', redirectUri, admin)), { status: 401, body: { error: 'a valid bearer token is required' } }, 'the same user\'s token for the campaign app')
})

t.test('the development provider is refused beside a real one', async t => {
  await t.rejects(telemetryServer(t, { sso: { dev_idp: true, idp_url: 'https://id.example.org', realm: 'fleet', client_id: 'dashboard' } }),
    { message: /\[ingest\]\.sso\.dev_idp runs its own identity provider; leave sso\.idp_url \(IDP_URL\) empty/ })
})
