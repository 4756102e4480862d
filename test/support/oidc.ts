// An access token from the development identity provider without a browser: authorization code with
// PKCE (S256) through its sign-in form (fetch with manual redirects), as a public client gets one.
import { createHash, randomBytes } from 'node:crypto'
import type { DevIdp } from '../../plugins/campaign/dev-idp/provider.js'
import type { DevUser } from '../../plugins/campaign/dev-idp/users.js'
import { CookieJar, followRedirects, send } from './campaign.js'

/** Sign `user` in at `idp` for the public client `clientId`, whose redirect URI is `redirectUri`; the access token. */
export async function accessToken (idp: DevIdp, clientId: string, redirectUri: string, user: Pick<DevUser, 'username' | 'password'>): Promise<string> {
  const jar = new CookieJar()
  const verifier = randomBytes(32).toString('base64url')
  const endpoint = `${idp.issuer}/protocol/openid-connect`
  const authorize = new URL(`${endpoint}/auth`)
  authorize.search = new URLSearchParams({
    client_id: clientId,
    redirect_uri: redirectUri,
    response_type: 'code',
    scope: 'openid',
    state: randomBytes(8).toString('hex'),
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256'
  }).toString()
  const atClient = (url: URL): boolean => url.href.startsWith(redirectUri)
  const form = await followRedirects(jar, authorize, atClient)
  if (form.response.status !== 200 || !form.url.pathname.includes('/login/')) throw new Error(`expected the IDP's sign-in form, got ${form.response.status} at ${form.url.href}`)
  await form.response.text()
  const posted = await send(jar, form.url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ username: user.username, password: user.password }).toString()
  })
  const location = posted.headers.get('location')
  await posted.arrayBuffer()
  if (location === null) throw new Error(`sign-in form answered ${posted.status}`)
  const back = await followRedirects(jar, new URL(location, form.url), atClient)
  const code = back.url.searchParams.get('code')
  if (code === null) throw new Error(`no authorization code at ${back.url.href}`)
  const exchanged = await fetch(`${endpoint}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirectUri, client_id: clientId, code_verifier: verifier }).toString()
  })
  const body = await exchanged.json() as { access_token?: string, error?: string }
  if (body.access_token === undefined) throw new Error(`token endpoint answered ${exchanged.status}: ${body.error ?? 'no access token'}`)
  return body.access_token
}
