// An access token from the development identity provider without a browser: authorization code with
// PKCE (S256) through its sign-in form (fetch with manual redirects), as a public client gets one.
import { createHash, randomBytes } from 'node:crypto'
import type { DevIdp } from '../../plugins/dev-idp/provider.js'
import type { DevUser } from '../../plugins/dev-idp/users.js'
import { CookieJar, signInThroughIdp } from './campaign.js'

/** Sign `user` in at `idp` for the public client `clientId`, whose redirect URI is `redirectUri`; the access token. */
export async function accessToken (idp: DevIdp, clientId: string, redirectUri: string, user: Pick<DevUser, 'username' | 'password'>): Promise<string> {
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
  const back = await signInThroughIdp(new CookieJar(), authorize, user, url => url.href.startsWith(redirectUri))
  const code = back.searchParams.get('code')
  if (code === null) throw new Error(`no authorization code at ${back.href}`)
  const exchanged = await fetch(`${endpoint}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirectUri, client_id: clientId, code_verifier: verifier }).toString()
  })
  const body = await exchanged.json() as { access_token?: string, error?: string }
  if (body.access_token === undefined) throw new Error(`token endpoint answered ${exchanged.status}: ${body.error ?? 'no access token'}`)
  return body.access_token
}
