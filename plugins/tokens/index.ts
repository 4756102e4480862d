// tokens: bearer-token authentication of the control API with three roles (viewer, deployer, admin)
// and, for viewers and deployers, the projects a token is limited to;
// the bootstrap admin token in the state directory, and the guard other plugins put on their routes.
import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify'
import { definePlugin } from '../../kernel/index.js'
import { tokenCommands } from './commands.js'
import type { Role } from './roles.js'
import type { TokenInfo } from './token-store.js'

export interface TokenService {
  /** An onRequest hook for a route or a route scope: 401 without a valid token, 403 below `role`. */
  requireRole(role: Role): onRequestAsyncHookHandler
  /** The token a guarded request was admitted with. */
  caller(request: FastifyRequest): TokenInfo | undefined
  /** The projects the token of a guarded request is limited to; undefined when it reaches every project. */
  projects(request: FastifyRequest): readonly string[] | undefined
  /** Whether the token of a guarded request reaches `project`. */
  reaches(request: FastifyRequest, project: string): boolean
  /** Whether the token a guarded request was admitted with is still valid: false once it is revoked (a long session ends then). */
  stillValid(request: FastifyRequest): boolean
}

export { PROJECT_NAME } from './roles.js'
export { TOKENS_CODES } from './errors.js'

declare module '../../kernel/index.js' {
  interface Services { tokens: TokenService }
}

export default definePlugin({
  name: 'tokens',
  version: '0.1.0',
  product: 'orchestration',
  description: 'Bearer tokens with roles for the control API; the admin token is created on first boot.',
  optionalDependsOn: ['cluster'],

  async setup (ctx) {
    const { setupTokens } = await import('./runtime.js')
    return await setupTokens(ctx)
  },

  commands: tokenCommands
})
