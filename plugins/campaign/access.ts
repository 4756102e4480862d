// The middleware every campaign request passes: each route declares its access class; pages without
// a session are redirected to /auth, server functions answer 404/401/403 before their body is read.
import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify'
import { KERNEL_CODES, Forbidden, NotFound, Unauthorized } from '../../kernel/index.js'
import { pathOf } from '../../kernel/runtime-api.js'
import type { FunctionRegistry } from './functions.js'
import { MAX_LOCAL_PATH } from './local-path.js'
import type { SessionAuth } from './session-auth.js'
import { CAMPAIGN_CODES } from './errors.js'

/** `open`: login routes and static assets; `page`: the UI (the default); `function`: POST /api/{name}. */
export type RouteAccess = 'open' | 'page' | 'function'

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: RouteAccess
    /** A `function` route that is not POST /api/{name} (an export): the server function whose roles it has. */
    rolesOf?: string
  }
}

export function accessControl (auth: SessionAuth, registry: FunctionRegistry): onRequestAsyncHookHandler {
  return async (request, reply) => {
    const access = request.routeOptions.config.access ?? 'page'
    if (access === 'open') return
    const session = await auth.current(request)
    if (access === 'page') {
      if (session === undefined) await reply.redirect(loginUrl(request), 302)
      return
    }
    const name = request.routeOptions.config.rolesOf ?? (request.params as { name: string }).name
    const fn = registry.get(name)
    if (fn === undefined) throw new NotFound(`no server function "${name}"`, { code: CAMPAIGN_CODES.NO_SUCH_FUNCTION })
    if (fn.access === 'public') return
    if (session === undefined) throw new Unauthorized('sign in first: no valid session')
    if (!registry.allows(session.role, fn)) throw new Forbidden(`role ${session.role} may not call ${name}`, { code: KERNEL_CODES.ROLE_TOO_LOW })
  }
}

/** Where a visitor without a session goes: the login, returning to the page asked for (without a query too long to keep). */
export function loginUrl (request: FastifyRequest): string {
  const back = request.url.length <= MAX_LOCAL_PATH ? request.url : pathOf(request.url)
  return `/auth?redirect_url=${encodeURIComponent(back)}`
}
