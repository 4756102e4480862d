// The one hook that enforces each route's `telemetryAccess`: a device key (constant-time), a user of at least
// a role, or nothing. Routes that say nothing need an admin, so a forgotten label fails closed.
import { createHash, timingSafeEqual } from 'node:crypto'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { KERNEL_CODES, Forbidden, Unauthorized } from '../../../kernel/index.js'
import { roleAllows, type Access, type Authenticator, type Principal } from './principal.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Who may call the route (telemetry API). */
    telemetryAccess?: Access
  }
  interface FastifyRequest {
    /** The authenticated user, on routes that need one. */
    principal?: Principal
  }
}

const digest = (value: string): Buffer => createHash('sha256').update(value).digest()

export function deviceKeyMatches (request: FastifyRequest, expected: Buffer): boolean {
  const given = request.headers['x-api-key']
  return typeof given === 'string' && timingSafeEqual(digest(given), expected)
}

export function installGuard (app: FastifyInstance, authenticator: Authenticator, apiKey: string): void {
  const expected = digest(apiKey)
  app.addHook('onRequest', async (request, reply) => {
    if (request.method === 'OPTIONS') return
    const access = request.routeOptions.config.telemetryAccess ?? 'admin'
    if (access === 'public') return
    if (access === 'device' || access === 'device-or-viewer' || access === 'device-or-provisioner') {
      if (deviceKeyMatches(request, expected)) return
      if (access === 'device') throw new Unauthorized('missing or invalid X-API-Key')
    }
    const principal = await authenticator.authenticate(request)
    if (principal === undefined) {
      // A script that says so (the dashboard) signs in with its own form: a challenge would make the
      // browser open its credentials dialog over the page instead.
      if (request.headers['x-requested-with'] !== 'XMLHttpRequest') reply.header('www-authenticate', authenticator.challenge)
      throw new Unauthorized(authenticator.mode === 'sso' ? 'a valid bearer token is required' : 'valid Basic credentials are required')
    }
    const required = access === 'device-or-provisioner' ? 'provisioner' : access === 'device-or-viewer' ? 'viewer' : access
    if (!roleAllows(principal.role, required)) {
      throw new Forbidden(`role ${principal.role} may not ${request.method} ${request.routeOptions.url ?? request.url}; it needs ${required}`, { code: KERNEL_CODES.ROLE_TOO_LOW })
    }
    request.principal = principal
  })
}
