// The four campaign roles, how a role is read from the access token's realm_access.roles claim,
// and the access rule of server functions (a function names its roles; admin may call every one).
import { decodeJwt } from 'jose'

export const ROLES = ['admin', 'staff', 'volunteer', 'readonly'] as const
export type Role = typeof ROLES[number]

/** Used when the token names none of the four roles (the spec's rule). */
export const DEFAULT_ROLE: Role = 'staff'

/** The first of admin > staff > volunteer > readonly found in `roles`, else `staff`. */
export function roleFromClaim (roles: readonly unknown[]): Role {
  return ROLES.find(role => roles.includes(role)) ?? DEFAULT_ROLE
}

/**
 * The role carried by a JWT access token in `realm_access.roles`. The token comes straight from the
 * token endpoint over the back channel, so its claims are read without verifying the signature again.
 * A token that is not a JWT or has no such claim counts as naming no role.
 */
export function roleFromAccessToken (accessToken: string): Role {
  let claims: Record<string, unknown>
  try {
    claims = decodeJwt(accessToken)
  } catch {
    return DEFAULT_ROLE
  }
  const realmAccess = claims.realm_access
  const roles = typeof realmAccess === 'object' && realmAccess !== null ? (realmAccess as { roles?: unknown }).roles : undefined
  return roleFromClaim(Array.isArray(roles) ? roles : [])
}

/** Whether `role` may call something open to `allowed`: admin always may (the spec's "require role"). */
export function mayCall (role: Role, allowed: readonly Role[]): boolean {
  return role === 'admin' || allowed.includes(role)
}
