// The application's side of OpenID Connect (openid-client 6): discovery of the realm's issuer, the
// authorization URL with PKCE, the code exchange and userinfo at the callback, and the logout URL.
import * as oidc from 'openid-client'
import { Unavailable, messageOf } from '../../kernel/index.js'
import type { LoginSecrets } from './login-secrets.js'
import { roleFromAccessToken } from './roles.js'
import type { SessionRecord } from './sessions.js'
import { isLoopback } from './settings.js'
import { CAMPAIGN_CODES } from './errors.js'

export interface IdpClientOptions {
  /** `{idp_url}/realms/{realm}`. */
  issuer: URL
  clientId: string
  /** `{app_url}/auth/callback`. */
  redirectUri: string
  /** `app_url`, where the provider sends the browser after logout. */
  postLogoutRedirectUri: string
}

/** The provider answered the callback with a refusal (bad or reused code, wrong verifier, denied access). */
export class LoginRefused extends Error {}

export class IdpClient {
  readonly #options: IdpClientOptions
  #configuration: Promise<oidc.Configuration> | undefined

  constructor (options: IdpClientOptions) {
    this.#options = options
  }

  /** The provider's metadata, discovered once (a failed discovery is retried on the next call). */
  async #config (): Promise<oidc.Configuration> {
    const { issuer, clientId } = this.#options
    this.#configuration ??= oidc.discovery(issuer, clientId, undefined, oidc.None(), {
      execute: issuer.protocol === 'http:' && isLoopback(issuer) ? [oidc.allowInsecureRequests] : []
    })
    try {
      return await this.#configuration
    } catch (err) {
      this.#configuration = undefined
      throw new Unavailable(`identity provider ${issuer.href} cannot be reached: ${messageOf(err)}`, { cause: err, code: CAMPAIGN_CODES.IDP_UNAVAILABLE })
    }
  }

  async authorizationUrl (secrets: LoginSecrets): Promise<URL> {
    return oidc.buildAuthorizationUrl(await this.#config(), {
      redirect_uri: this.#options.redirectUri,
      scope: 'openid email profile',
      code_challenge: secrets.codeChallenge,
      code_challenge_method: 'S256',
      state: secrets.state
    })
  }

  /** Exchange the code of callback URL `callbackUrl` (with the login's verifier) and build the session record. */
  async completeLogin (callbackUrl: URL, state: string, codeVerifier: string): Promise<SessionRecord> {
    const config = await this.#config()
    let tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>
    try {
      tokens = await oidc.authorizationCodeGrant(config, callbackUrl, { pkceCodeVerifier: codeVerifier, expectedState: state, idTokenExpected: true })
    } catch (err) {
      if (err instanceof oidc.ResponseBodyError || err instanceof oidc.AuthorizationResponseError) {
        throw new LoginRefused(`${err.error}${err.error_description !== undefined ? `: ${err.error_description}` : ''}`, { cause: err })
      }
      // A callback that fails openid-client's checks (missing iss, bad response) is refused too;
      // anything else (the provider unreachable) is a failure on our side.
      if (err instanceof oidc.ClientError) throw new LoginRefused(err.message, { cause: err })
      throw err
    }
    const sub = tokens.claims()?.sub as string
    const info = await oidc.fetchUserInfo(config, tokens.access_token, sub)
    return {
      sub,
      email: info.email ?? '',
      name: info.name ?? info.preferred_username ?? '',
      role: roleFromAccessToken(tokens.access_token),
      access_token: tokens.access_token,
      refresh_token: tokens.refresh_token ?? '',
      id_token: tokens.id_token ?? ''
    }
  }

  /** The provider's end-session URL, returning to the application afterwards. */
  async logoutUrl (idToken: string | undefined): Promise<URL> {
    return oidc.buildEndSessionUrl(await this.#config(), {
      client_id: this.#options.clientId,
      post_logout_redirect_uri: this.#options.postLogoutRedirectUri,
      ...(idToken !== undefined && idToken !== '' ? { id_token_hint: idToken } : {})
    })
  }
}
