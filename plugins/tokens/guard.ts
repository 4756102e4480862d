// The route guard other plugins put on their control API routes: 401 without a valid bearer token,
// 403 when the token's role is below the one the route needs. It remembers who made each request.
import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify'
import { Forbidden, KERNEL_CODES, Unauthorized } from '../../kernel/index.js'
import { allows, type Role } from './roles.js'
import type { TokenInfo, TokenStore } from './token-store.js'
import { TOKENS_CODES } from './errors.js'

const BEARER = /^Bearer +(\S+)\s*$/i

export class Guard {
  readonly #store: TokenStore
  readonly #callers = new WeakMap<FastifyRequest, TokenInfo>()

  constructor (store: TokenStore) {
    this.#store = store
  }

  /** An onRequest hook admitting tokens whose role is `role` or above. */
  requireRole (role: Role): onRequestAsyncHookHandler {
    return async request => {
      const caller = this.#authenticate(request)
      if (!allows(caller.role, role)) {
        throw new Forbidden(`token "${caller.name}" has role ${caller.role}; ${request.method} ${request.routeOptions.url ?? request.url} needs ${role}`, { code: KERNEL_CODES.ROLE_TOO_LOW })
      }
      this.#callers.set(request, caller)
    }
  }

  /** The token (id, name, role) a guarded request was admitted with. */
  caller (request: FastifyRequest): TokenInfo | undefined {
    return this.#callers.get(request)
  }

  #authenticate (request: FastifyRequest): TokenInfo {
    const header = request.headers.authorization
    if (header === undefined || header === '') throw new Unauthorized('missing bearer token (Authorization: Bearer <token>)')
    const token = BEARER.exec(header)?.[1]
    if (token === undefined) throw new Unauthorized('the Authorization header must be "Bearer <token>"')
    const record = this.#store.verify(token)
    if (record === undefined) throw new Unauthorized('invalid or revoked token', { code: TOKENS_CODES.TOKEN_INVALID })
    const { hash: _hash, ...info } = record
    return info
  }
}
