// Control API routes of the secret store (admin only), under /api/v1/secrets: set, list names, delete;
// `?project=` addresses a project's secret, none a shared one (`shared_with` in the body limits it).
import type { FastifyPluginAsync } from 'fastify'
import { BadRequest, NotFound } from '../../kernel/index.js'
import { Type } from '../../kernel/schema.js'
import { PROJECT_NAME, type TokenService } from '../tokens/index.js'
import { SECRET_NAME } from './references.js'
import type { SecretStore } from './secret-store.js'
import { SECRETS_CODES } from './errors.js'

/** Largest secret value, in bytes of UTF-8. */
export const MAX_VALUE_BYTES = 64 * 1024

const SetBody = Type.Object({ value: Type.String(), shared_with: Type.Optional(Type.Array(Type.String(), { maxItems: 100 })) })

function checkName (name: string): void {
  if (!SECRET_NAME.test(name)) throw new BadRequest(`secret name "${name}" must be letters, digits and underscores, not starting with a digit (at most 128)`)
}

/** `?project=`: undefined for a shared secret. */
function projectOf (text: string | undefined): string | undefined {
  if (text === undefined) return undefined
  if (!PROJECT_NAME.test(text)) throw new BadRequest(`project must be a project name (lowercase letters, digits and dashes), got ${JSON.stringify(text.slice(0, 70))}`)
  return text
}

/** How a secret is named in answers: `NAME`, or `NAME` of project `p`. */
function described (name: string, project: string | undefined): string {
  return project === undefined ? `"${name}"` : `"${name}" of project ${project}`
}

export function secretRoutes (store: SecretStore, tokens: TokenService): FastifyPluginAsync {
  return async app => {
    app.addHook('onRequest', tokens.requireRole('admin'))

    app.put<{ Params: { name: string }, Querystring: { project?: string }, Body: { value: string, shared_with?: string[] } }>('/:name', {
      bodyLimit: 2 * MAX_VALUE_BYTES, schema: { body: SetBody }
    }, async (request, reply) => {
      const { name } = request.params
      checkName(name)
      const project = projectOf(request.query.project)
      const { value, shared_with: sharedWith } = request.body
      if (Buffer.byteLength(value) > MAX_VALUE_BYTES) throw new BadRequest(`secret "${name}": the value is longer than ${MAX_VALUE_BYTES} bytes`)
      if (sharedWith !== undefined) {
        if (project !== undefined) throw new BadRequest('shared_with goes with a shared secret: leave out ?project=')
        if (sharedWith.length === 0 || sharedWith.some(p => !PROJECT_NAME.test(p))) throw new BadRequest('shared_with must be one or more project names (lowercase letters, digits and dashes)')
      }
      const { created, info } = await store.set(name, value, { project, sharedWith })
      return await reply.code(created ? 201 : 200).send(info)
    })

    app.get<{ Querystring: { project?: string } }>('/', async request => {
      const project = projectOf(request.query.project)
      return { secrets: store.list().filter(s => project === undefined || s.project === project) }
    })

    app.delete<{ Params: { name: string }, Querystring: { project?: string } }>('/:name', async request => {
      const { name } = request.params
      checkName(name)
      const project = projectOf(request.query.project)
      if (!await store.remove(name, project)) throw new NotFound(`no secret named ${described(name, project)}`, { code: SECRETS_CODES.NO_SUCH_SECRET })
      return { deleted: name, ...(project !== undefined && { project }) }
    })
  }
}
