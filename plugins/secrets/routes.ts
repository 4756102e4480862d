// Control API routes of the secret store (admin only), under /api/v1/secrets: set, list names, delete.
import type { FastifyPluginAsync } from 'fastify'
import { BadRequest, NotFound } from '../../kernel/index.js'
import { Type } from '../../kernel/schema.js'
import type { TokenService } from '../tokens/index.js'
import { SECRET_NAME } from './references.js'
import type { SecretStore } from './secret-store.js'

/** Largest secret value, in bytes of UTF-8. */
export const MAX_VALUE_BYTES = 64 * 1024

const SetBody = Type.Object({ value: Type.String() })

function checkName (name: string): void {
  if (!SECRET_NAME.test(name)) throw new BadRequest(`secret name "${name}" must be letters, digits and underscores, not starting with a digit (at most 128)`)
}

export function secretRoutes (store: SecretStore, tokens: TokenService): FastifyPluginAsync {
  return async app => {
    app.addHook('onRequest', tokens.requireRole('admin'))

    app.put<{ Params: { name: string }, Body: { value: string } }>('/:name', {
      bodyLimit: 2 * MAX_VALUE_BYTES, schema: { body: SetBody }
    }, async (request, reply) => {
      const { name } = request.params
      checkName(name)
      const { value } = request.body
      if (Buffer.byteLength(value) > MAX_VALUE_BYTES) throw new BadRequest(`secret "${name}": the value is longer than ${MAX_VALUE_BYTES} bytes`)
      const { created, info } = await store.set(name, value)
      return await reply.code(created ? 201 : 200).send(info)
    })

    app.get('/', async () => ({ secrets: store.list() }))

    app.delete<{ Params: { name: string } }>('/:name', async request => {
      const { name } = request.params
      checkName(name)
      if (!await store.remove(name)) throw new NotFound(`no secret named "${name}"`, { code: 'BERTH_NO_SUCH_SECRET' })
      return { deleted: name }
    })
  }
}
