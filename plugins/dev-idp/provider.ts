// An OpenID provider for development and tests (oidc-provider) on loopback with Keycloak-style paths
// under /realms/{realm}: sign-in form, JWT access tokens carrying realm_access.roles, refresh tokens,
// userinfo, and RP-initiated logout. A small node:http front serves the realm prefix and the form.
// The provider (oidc-provider and its signing key) is made on the first request, not at start.
import { randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { exportJWK, generateKeyPair, jwtVerify, createLocalJWKSet, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose'
import type Provider from 'oidc-provider'
import type { Configuration, KoaContextWithOIDC } from 'oidc-provider'
import { loginPage, logoutPage } from './pages.js'
import { checkCredentials, type DevUser } from './users.js'

export interface DevIdpOptions {
  realm: string
  clientId: string
  /** A function is called when the provider is made (its first request): for addresses known only after start. */
  redirectUris: string[] | (() => string[])
  postLogoutRedirectUris: string[] | (() => string[])
  /** More public clients of the realm, with the same redirect URIs: another application on the same realm. */
  otherClientIds?: string[]
  /** Port on 127.0.0.1; 0 picks a free one. */
  port?: number
  users: DevUser[]
}

export interface DevIdp {
  /** `http://127.0.0.1:PORT`: the value of CAMPAIGN_IDP_URL. */
  url: string
  /** `{url}/realms/{realm}`. */
  issuer: string
  users: DevUser[]
  close(): Promise<void>
}

/** What the first request makes. */
interface Made {
  provider: Provider
  callback: ReturnType<Provider['callback']>
  verifyKeys: JWTVerifyGetKey
}

const OIDC_PATH = '/protocol/openid-connect'
const RESOURCE = 'urn:berth:campaign'
const SCOPES = 'openid email profile'
const MAX_FORM_BYTES = 4096

export async function startDevIdp (options: DevIdpOptions): Promise<DevIdp> {
  const users = options.users
  const server = createServer()
  server.listen(options.port ?? 0, '127.0.0.1')
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve)
    server.once('error', reject)
  })
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const prefix = `/realms/${options.realm}`
  const issuer = `${url}${prefix}`
  let made: Promise<Made> | undefined
  const ready = async (): Promise<Made> => {
    made ??= (async () => {
      const { default: OidcProvider } = await import('oidc-provider')
      const { privateKey } = await generateKeyPair('RS256', { extractable: true })
      const signingKey = { ...await exportJWK(privateKey), kid: 'dev-idp', alg: 'RS256', use: 'sig' }
      const provider = new OidcProvider(issuer, providerConfiguration(options, users, signingKey, prefix))
      const { d: _private, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...publicKey } = signingKey
      return { provider, callback: provider.callback(), verifyKeys: createLocalJWKSet({ keys: [publicKey] } as JSONWebKeySet) }
    })()
    return await made
  }

  const userinfo = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const token = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1]
    const { payload } = await jwtVerify(token ?? '', (await ready()).verifyKeys, { issuer, audience: RESOURCE })
      .catch(() => ({ payload: undefined }))
    const user = users.find(u => u.sub === payload?.sub)
    if (user === undefined) {
      res.writeHead(401, { 'www-authenticate': 'Bearer error="invalid_token"' }).end()
      return
    }
    res.writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ sub: user.sub, email: user.email, email_verified: true, name: user.name, preferred_username: user.username }))
  }

  const login = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const { provider } = await ready()
    await provider.interactionDetails(req, res)
    if (req.method !== 'POST') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(loginPage(options.realm))
      return
    }
    const form = new URLSearchParams(await readBody(req))
    const user = checkCredentials(users, form.get('username') ?? '', form.get('password') ?? '')
    if (user === undefined) {
      res.writeHead(401, { 'content-type': 'text/html; charset=utf-8' }).end(loginPage(options.realm, 'Unknown user or wrong password.'))
      return
    }
    await provider.interactionFinished(req, res, { login: { accountId: user.sub } }, { mergeWithLastSubmission: false })
  }

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0]
    const route = path === `${prefix}${OIDC_PATH}/userinfo`
      ? userinfo
      : path.startsWith(`${prefix}/login/`) ? login : undefined
    if (route !== undefined) {
      route(req, res).catch(() => { if (!res.headersSent) res.writeHead(400, { 'content-type': 'text/plain' }).end('sign-in request expired or invalid: start again from the application') })
      return
    }
    if (path !== prefix && !path.startsWith(`${prefix}/`)) {
      res.writeHead(404).end()
      return
    }
    // oidc-provider reads the mount path from the part of originalUrl that url no longer has.
    Object.assign(req, { originalUrl: req.url })
    req.url = (req.url ?? '').slice(prefix.length) || '/'
    ready().then(async ({ callback }) => { await callback(req, res) }, () => { res.writeHead(500).end() })
  })

  return {
    url,
    issuer,
    users,
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>(resolve => server.close(() => { resolve() }))
    }
  }
}

function providerConfiguration (options: DevIdpOptions, users: DevUser[], signingKey: object, prefix: string): Configuration {
  const userBySub = (sub: string): DevUser | undefined => users.find(u => u.sub === sub)
  return {
    clients: [options.clientId, ...options.otherClientIds ?? []].map(clientId => ({
      client_id: clientId,
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      redirect_uris: typeof options.redirectUris === 'function' ? options.redirectUris() : options.redirectUris,
      post_logout_redirect_uris: typeof options.postLogoutRedirectUris === 'function' ? options.postLogoutRedirectUris() : options.postLogoutRedirectUris
    })),
    jwks: { keys: [signingKey] },
    cookies: { keys: [randomBytes(32).toString('base64url')] },
    routes: {
      authorization: `${OIDC_PATH}/auth`,
      token: `${OIDC_PATH}/token`,
      userinfo: `${OIDC_PATH}/userinfo`,
      end_session: `${OIDC_PATH}/logout`,
      jwks: `${OIDC_PATH}/certs`
    },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'preferred_username'] },
    scopes: SCOPES.split(' '),
    pkce: { required: () => true },
    ttl: { Interaction: 600, Session: 86_400, Grant: 86_400, AccessToken: 3600, IdToken: 3600, RefreshToken: 86_400 },
    features: {
      devInteractions: { enabled: false },
      rpInitiatedLogout: {
        enabled: true,
        logoutSource: async (ctx: KoaContextWithOIDC, form: string) => { ctx.body = logoutPage(form) }
      },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => RESOURCE,
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({ scope: SCOPES, audience: RESOURCE, accessTokenFormat: 'jwt', jwt: { sign: { alg: 'RS256' } } })
      }
    },
    interactions: { url: (_ctx: KoaContextWithOIDC, interaction: { uid: string }) => `${prefix}/login/${interaction.uid}` },
    findAccount: async (_ctx: KoaContextWithOIDC, sub: string) => {
      const user = userBySub(sub)
      if (user === undefined) return undefined
      return {
        accountId: sub,
        claims: async () => ({ sub, email: user.email, email_verified: true, name: user.name, preferred_username: user.username })
      }
    },
    extraTokenClaims: async (_ctx: KoaContextWithOIDC, token: { accountId?: string }) => {
      const user = userBySub(token.accountId ?? '')
      return user === undefined ? undefined : { realm_access: { roles: [user.role] } }
    },
    issueRefreshToken: async (_ctx: KoaContextWithOIDC, client: { grantTypeAllowed(type: string): boolean }) => client.grantTypeAllowed('refresh_token'),
    // Every sign-in is consented to: the development provider's clients are the applications under development.
    loadExistingGrant: async (ctx: KoaContextWithOIDC) => {
      const accountId = ctx.oidc.session?.accountId
      if (accountId === undefined || ctx.oidc.client === undefined) return undefined
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId })
      grant.addOIDCScope(SCOPES)
      grant.addResourceScope(RESOURCE, SCOPES)
      await grant.save()
      return grant
    }
  } as Configuration
}

async function readBody (req: IncomingMessage): Promise<string> {
  let body = ''
  for await (const chunk of req) {
    body += String(chunk)
    if (body.length > MAX_FORM_BYTES) throw new Error('form too large')
  }
  return body
}
