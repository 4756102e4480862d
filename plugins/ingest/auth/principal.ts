// The auth seam of the telemetry API: who is calling (a principal with a role), how a request proves it
// (an authenticator per mode), and what each role may do.
import type { FastifyRequest } from 'fastify'
import type { Role } from '../config.js'

export interface Principal {
  name: string
  role: Role
}

/** One way of proving identity: Basic users today, JWT from an identity provider in SSO mode. */
export interface Authenticator {
  readonly mode: 'basic' | 'sso'
  /** The challenge sent with 401 answers. */
  readonly challenge: string
  /** The caller, undefined when the request carries no valid credentials. */
  authenticate(request: FastifyRequest): Promise<Principal | undefined>
}

/** Who may call a route: nobody needs to prove anything, a device key, a device key or a user with at least a role, or a user with at least this role. */
export type Access = 'public' | 'device' | 'device-or-viewer' | 'device-or-provisioner' | Role

const RANK: Record<Role, number> = { viewer: 0, provisioner: 1, admin: 2 }

export function roleAllows (role: Role, required: Role): boolean {
  return RANK[role] >= RANK[required]
}
