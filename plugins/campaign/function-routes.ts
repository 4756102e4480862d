// POST /api/{name}: CBOR arguments in, CBOR result out, errors as CBOR {error} with the kernel's
// status mapping (400 bad CBOR or arguments, 401, 403, 404, 413 over the size limit, 415 not CBOR, 500).
import type { FastifyError, FastifyPluginAsync } from 'fastify'
import type { Logger } from 'pino'
import { BadRequest, describeHttpError, messageOf } from '../../kernel/index.js'
import { CBOR_TYPE, decodeCbor, encodeCbor } from './cbor.js'
import type { FunctionRegistry } from './functions.js'
import type { SessionAuth } from './session-auth.js'

export interface FunctionRoutesOptions {
  registry: FunctionRegistry
  auth: SessionAuth
  log: Logger
  /** Largest request body in bytes. */
  maxRequestBytes: number
}

export function functionRoutes ({ registry, auth, log, maxRequestBytes }: FunctionRoutesOptions): FastifyPluginAsync {
  return async app => {
    app.removeAllContentTypeParsers()
    app.addContentTypeParser(CBOR_TYPE, { parseAs: 'buffer', bodyLimit: maxRequestBytes }, (_request, body, done) => {
      try {
        done(null, decodeCbor(body as Buffer))
      } catch (err) {
        done(new BadRequest(`malformed CBOR body: ${messageOf(err)}`) as unknown as FastifyError)
      }
    })
    app.setErrorHandler(async (error: FastifyError, request, reply) => {
      const { status, message } = describeHttpError(error, request)
      if (status >= 500) log.error({ err: error, function: (request.params as { name?: string }).name }, 'server function failed')
      await reply.code(status).type(CBOR_TYPE).send(encodeCbor({ error: message }))
    })

    app.post<{ Params: { name: string } }>('/api/:name', { bodyLimit: maxRequestBytes, config: { access: 'function' } }, async (request, reply) => {
      if (request.headers['content-type']?.split(';')[0].trim().toLowerCase() !== CBOR_TYPE) {
        throw Object.assign(new Error('unsupported content type'), { statusCode: 415 })
      }
      const result = await registry.call(request.params.name, request.body, { session: auth.current(request) })
      return await reply.type(CBOR_TYPE).send(encodeCbor(result ?? null))
    })
  }
}
