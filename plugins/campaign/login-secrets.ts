// The values one login needs: a PKCE code verifier (43 base64url characters from 32 random bytes),
// its S256 challenge, and a state of 64 hex characters that ties the callback to this login.
import { randomBytes } from 'node:crypto'
import { calculatePKCECodeChallenge, randomPKCECodeVerifier } from 'openid-client'

export interface LoginSecrets {
  codeVerifier: string
  codeChallenge: string
  state: string
}

export async function newLoginSecrets (): Promise<LoginSecrets> {
  const codeVerifier = randomPKCECodeVerifier()
  return {
    codeVerifier,
    codeChallenge: await calculatePKCECodeChallenge(codeVerifier),
    state: randomBytes(32).toString('hex')
  }
}
