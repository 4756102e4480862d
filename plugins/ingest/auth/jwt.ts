// SSO mode: bearer JWTs from the identity provider, verified against its signing keys (JWKS, refreshed
// every 5 minutes); when verification fails the provider's userinfo endpoint decides. Roles come from
// realm_access.roles: fleet-admin → admin, fleet-provisioner → provisioner, anything else → viewer.
import type { FastifyRequest } from 'fastify'
import { createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose'
import type { Role } from '../config.js'
import type { Authenticator, Principal } from './principal.js'

const JWKS_MAX_AGE_MS = 5 * 60_000
const USERINFO_TIMEOUT_MS = 5_000

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

export class JwtAuthenticator implements Authenticator {
  readonly mode = 'sso'
  readonly challenge = 'Bearer realm="berth telemetry"'
  readonly #endpoints: ReturnType<typeof realmEndpoints>
  readonly #keys: ReturnType<typeof createRemoteJWKSet>

  constructor (sso: SsoSettings) {
    this.#endpoints = realmEndpoints(sso)
    this.#keys = createRemoteJWKSet(new URL(this.#endpoints.jwks), { cacheMaxAge: JWKS_MAX_AGE_MS })
  }

  async authenticate (request: FastifyRequest): Promise<Principal | undefined> {
    const header = request.headers.authorization
    if (header === undefined || !/^bearer /i.test(header)) return undefined
    const token = header.slice(7).trim()
    const claims = await this.#verify(token) ?? await this.#userinfo(token)
    if (claims === undefined) return undefined
    const name = typeof claims.preferred_username === 'string' ? claims.preferred_username : claims.sub ?? 'unknown'
    return { name, role: roleFromClaims(claims) }
  }

  async #verify (token: string): Promise<JWTPayload | undefined> {
    try {
      return (await jwtVerify(token, this.#keys, { issuer: this.#endpoints.issuer })).payload
    } catch {
      return undefined
    }
  }

  async #userinfo (token: string): Promise<JWTPayload | undefined> {
    try {
      const response = await fetch(this.#endpoints.userinfo, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(USERINFO_TIMEOUT_MS) })
      return response.ok ? await response.json() as JWTPayload : undefined
    } catch {
      return undefined
    }
  }
}
