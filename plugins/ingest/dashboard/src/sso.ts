// Single sign-on as the spec's flow has it: authorization code with PKCE (S256) at the identity
// provider's realm endpoints (from /auth/mode), the code exchanged for an access token in the browser
// (a public client), and the token kept in the tab's session storage and sent as a bearer token.
import { keepCredentials } from './api.js'

export interface SsoMode {
  mode: 'sso'
  client_id: string
  authorization: string
  token: string
}

const PENDING = 'berth-telemetry-pkce'

function base64url (bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
}

/** The dashboard's own address without query or fragment: the redirect URI registered at the provider. */
function redirectUri (): string {
  return `${location.origin}${location.pathname}`
}

/** Go to the provider's sign-in page. */
export async function startSignIn (mode: SsoMode): Promise<void> {
  const verifier = base64url(crypto.getRandomValues(new Uint8Array(32)))
  const state = base64url(crypto.getRandomValues(new Uint8Array(16)))
  const challenge = base64url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))))
  sessionStorage.setItem(PENDING, JSON.stringify({ verifier, state, token: mode.token, client_id: mode.client_id }))
  const url = new URL(mode.authorization)
  url.search = new URLSearchParams({
    response_type: 'code', client_id: mode.client_id, redirect_uri: redirectUri(), scope: 'openid profile email',
    code_challenge: challenge, code_challenge_method: 'S256', state
  }).toString()
  location.assign(url.href)
}

/** Back from the provider with ?code&state: exchange the code; false when this is not such a return. */
export async function finishSignIn (): Promise<boolean> {
  const params = new URLSearchParams(location.search)
  const code = params.get('code')
  const pending = sessionStorage.getItem(PENDING)
  if (code === null && params.get('error') === null) return false
  sessionStorage.removeItem(PENDING)
  history.replaceState(null, '', redirectUri() + location.hash)
  if (params.get('error') !== null) throw new Error(`sign-in refused: ${params.get('error_description') ?? params.get('error') ?? ''}`)
  if (pending === null) throw new Error('sign-in answer without a sign-in started here: start again')
  const { verifier, state, token, client_id: clientId } = JSON.parse(pending) as { verifier: string, state: string, token: string, client_id: string }
  if (params.get('state') !== state) throw new Error('sign-in answer for another attempt: start again')
  const response = await fetch(token, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code: code ?? '', redirect_uri: redirectUri(), client_id: clientId, code_verifier: verifier })
  })
  const answer = await response.json() as { access_token?: string, error_description?: string, error?: string }
  if (!response.ok || answer.access_token === undefined) throw new Error(`the identity provider refused the code: ${answer.error_description ?? answer.error ?? response.status}`)
  keepCredentials(`Bearer ${answer.access_token}`)
  return true
}
