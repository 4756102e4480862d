// Control API routes to create (for every project or limited to some), list and revoke tokens (admin
// only), under /api/v1/tokens.
import type { FastifyPluginAsync } from 'fastify'
import { BadRequest, Conflict, NotFound } from '../../kernel/index.js'
import { Type } from '../../kernel/schema.js'
import type { Guard } from './guard.js'
import { isRole, PROJECT_NAME, ROLES } from './roles.js'
import { validTokenName, type TokenStore } from './token-store.js'
import { TOKENS_CODES } from './errors.js'

const CreateBody = Type.Object({ name: Type.String(), role: Type.String(), projects: Type.Optional(Type.Array(Type.String(), { maxItems: 100 })) })

export function tokenRoutes (store: TokenStore, guard: Guard): FastifyPluginAsync {
  return async app => {
    app.addHook('onRequest', guard.requireRole('admin'))

    app.post<{ Body: { name: string, role: string, projects?: string[] } }>('/', { bodyLimit: 4096, schema: { body: CreateBody } }, async (request, reply) => {
      const { name, role, projects } = request.body
      if (!validTokenName(name)) throw new BadRequest('name must be 1-64 letters, digits, dots, dashes or underscores, starting with a letter or digit')
      if (!isRole(role)) throw new BadRequest(`role must be one of ${ROLES.join(', ')}; got "${role}"`)
      if (projects !== undefined) {
        if (role !== 'viewer' && role !== 'deployer') throw new BadRequest(`only viewer and deployer tokens are limited to projects; an ${role} token reaches every project`)
        const bad = projects.find(p => !PROJECT_NAME.test(p))
        if (projects.length === 0 || bad !== undefined) throw new BadRequest(`projects must be one or more project names (lowercase letters, digits and dashes)${bad === undefined ? '' : `, got ${JSON.stringify(bad.slice(0, 70))}`}`)
      }
      const { info, token } = await store.create(name, role, { projects })
      return await reply.code(201).send({ ...info, token })
    })

    app.get('/', async () => ({ tokens: store.list() }))

    app.delete<{ Params: { id: string } }>('/:id', async request => {
      const { id } = request.params
      const record = store.get(id)
      if (record === undefined) throw new NotFound(`no token with id "${id}"`, { code: TOKENS_CODES.NO_SUCH_TOKEN })
      if (record.bootstrap === true) {
        throw new Conflict('the admin token of admin.token cannot be revoked; delete that file and restart the server to replace it', { code: TOKENS_CODES.ADMIN_TOKEN_FIXED })
      }
      await store.revoke(id)
      return { revoked: id }
    })
  }
}
