// SSO mode: bearer JWTs from the identity provider, verified against its signing keys (JWKS, refreshed
// every 5 minutes) and issued for the dashboard's client; a token that cannot be verified goes to the
// provider's userinfo endpoint (answers kept, calls limited: userinfo.ts). Roles come from
// realm_access.roles: fleet-admin → admin, fleet-provisioner → provisioner, anything else → viewer.
import type { FastifyRequest } from 'fastify'
import { createRemoteJWKSet, decodeJwt, errors, jwtVerify, type JWTPayload } from 'jose'
import type { Role } from '../config.js'
import type { Authenticator, Principal } from './principal.js'
import { Userinfo } from './userinfo.js'

const JWKS_MAX_AGE_MS = 5 * 60_000

export interface SsoSettings {
  idp_url: string
  realm: string
  client_id: string
}

/** Keycloak-style realm paths. */
export function realmEndpoints (sso: SsoSettings): { issuer: string, authorization: string, token: string, userinfo: string, logout: string, jwks: string } {
  const issuer = `${sso.idp_url.replace(/\/+$/, '')}/realms/${encodeURIComponent(sso.realm)}`
  const base = `${issuer}/protocol/openid-connect`
  return { issuer, authorization: `${base}/auth`, token: `${base}/token`, userinfo: `${base}/userinfo`, logout: `${base}/logout`, jwks: `${base}/certs` }
}

export function roleFromClaims (claims: JWTPayload): Role {
  const roles = (claims.realm_access as { roles?: unknown } | undefined)?.roles
  const list = Array.isArray(roles) ? roles : []
  if (list.includes('fleet-admin')) return 'admin'
  if (list.includes('fleet-provisioner')) return 'provisioner'
  return 'viewer'
}

/**
 * Whether a token was issued for `clientId`, as Keycloak issues them: its authorized party (`azp`, the
 * client that asked for it; `client_id` in RFC 9068 access tokens, which have no `azp`) is that
 * client, or its audience (`aud`) names it (a Keycloak audience mapper addressing another client's
 * tokens to this API). Keycloak's `aud` is often just `account`, which names no client of ours.
 */
export function issuedFor (claims: JWTPayload, clientId: string): boolean {
  const party = typeof claims.azp === 'string' ? claims.azp : claims.client_id
  const audience = Array.isArray(claims.aud) ? claims.aud : [claims.aud]
  return party === clientId || audience.includes(clientId)
}

/** The claims of a JWT without verifying it, or undefined for an opaque token. */
function unverifiedClaims (token: string): JWTPayload | undefined {
  try {
    return decodeJwt(token)
  } catch {
    return undefined
  }
}

export class JwtAuthenticator implements Authenticator {
  readonly mode = 'sso'
  readonly challenge = 'Bearer realm="berth telemetry"'
  readonly #endpoints: ReturnType<typeof realmEndpoints>
  readonly #clientId: string
  readonly #keys: ReturnType<typeof createRemoteJWKSet>
  readonly #userinfo: Userinfo

  constructor (sso: SsoSettings) {
    this.#endpoints = realmEndpoints(sso)
    this.#clientId = sso.client_id
    this.#keys = createRemoteJWKSet(new URL(this.#endpoints.jwks), { cacheMaxAge: JWKS_MAX_AGE_MS })
    this.#userinfo = new Userinfo(this.#endpoints.userinfo)
  }

  async authenticate (request: FastifyRequest): Promise<Principal | undefined> {
    const header = request.headers.authorization
    if (header === undefined || !/^bearer /i.test(header)) return undefined
    const claims = await this.#claims(header.slice(7).trim())
    if (claims === undefined) return undefined
    const name = typeof claims.preferred_username === 'string' ? claims.preferred_username : claims.sub ?? 'unknown'
    return { name, role: roleFromClaims(claims) }
  }

  /**
   * A verified token counts only when it was issued for our client; one whose claims fail (expired,
   * another issuer) is refused. Only a token that cannot be verified goes to userinfo, and a JWT
   * among those only when its claims name our client: userinfo vouches for any client's token.
   */
  async #claims (token: string): Promise<JWTPayload | undefined> {
    let verified: JWTPayload
    try {
      verified = (await jwtVerify(token, this.#keys, { issuer: this.#endpoints.issuer })).payload
    } catch (err) {
      if (err instanceof errors.JWTClaimValidationFailed) return undefined
      const claims = unverifiedClaims(token)
      if (claims === undefined) return await this.#userinfo.claims(token)
      return issuedFor(claims, this.#clientId) ? await this.#userinfo.claims(token, claims.exp) : undefined
    }
    return issuedFor(verified, this.#clientId) ? verified : undefined
  }
}
