// SSO mode: bearer JWTs verified against the identity provider's JWKS (Keycloak realm paths), roles
// from realm_access.roles, and the userinfo fallback for tokens that do not verify. The provider here
// is a small loopback server publishing a real RSA key and answering userinfo.
import t from 'tap'
import { createServer } from 'node:http'
import { exportJWK, generateKeyPair, SignJWT } from 'jose'
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
  const token = async (roles: string[], key = privateKey, iss = issuer): Promise<string> => await new SignJWT({ realm_access: { roles }, preferred_username: 'sam' })
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
  t.equal(await call('POST', '/devices/register', 'opaque-provisioner', { id: '0000000000000002' }), 201, 'userinfo fallback grants its roles')
  t.equal(await call('GET', '/devices', undefined), 401)
  const basic = await fetch(new URL('/devices', server.base), { headers: { authorization: `Basic ${Buffer.from('admin:x').toString('base64')}` } })
  t.equal(basic.status, 401, 'Basic is off in SSO mode')
  t.equal(basic.headers.get('www-authenticate'), 'Bearer realm="berth telemetry"')
  t.equal(jwksFetches, 1, 'signing keys are cached')
})

t.test('the development provider is refused beside a real one', async t => {
  await t.rejects(telemetryServer(t, { sso: { dev_idp: true, idp_url: 'https://id.example.org', realm: 'fleet', client_id: 'dashboard' } }),
    { message: /\[ingest\]\.sso\.dev_idp runs its own identity provider; leave sso\.idp_url \(IDP_URL\) empty/ })
})
