// POST /api/{name}: CBOR arguments in, CBOR result out. Mounted under /api with CBOR_ERRORS, so the
// kernel answers every failure under /api as CBOR {error} with its status mapping: 400 bad CBOR or
// arguments, 401, 403, 404 (unknown functions and routes), 405 another method, 413 over the size
// limit, 415 not CBOR, 500.
import type { FastifyError, FastifyPluginAsync } from 'fastify'
import { BadRequest, MethodNotAllowed, NotFound, PayloadTooLarge, UnsupportedMediaType, messageOf } from '../../kernel/index.js'
import { CBOR_TYPE, decodeCbor, encodeCbor } from './cbor.js'
import type { FunctionRegistry } from './functions.js'
import type { SessionAuth } from './session-auth.js'
import { CAMPAIGN_CODES } from './errors.js'

export interface FunctionRoutesOptions {
  registry: FunctionRegistry
  auth: SessionAuth
  /** Largest request body in bytes. */
  maxRequestBytes: number
}

/** Routes relative to the /api prefix they are mounted under. */
export function functionRoutes ({ registry, auth, maxRequestBytes }: FunctionRoutesOptions): FastifyPluginAsync {
  return async app => {
    app.removeAllContentTypeParsers()
    // The route takes the largest body any function does; each function's own limit is checked by its
    // Content-Length before the body is read, and by the body's size when it came without one.
    const largest = registry.largestRequest(maxRequestBytes)
    const limitOf = (name: string): number => registry.get(name)?.maxRequestBytes ?? maxRequestBytes
    const tooLarge = (name: string): PayloadTooLarge => new PayloadTooLarge(`the request body is larger than ${limitOf(name)} bytes, the most ${name} takes`)
    app.addHook('preParsing', async (request, _reply, payload) => {
      const { name } = request.params as { name: string }
      if (Number(request.headers['content-length'] ?? 0) > limitOf(name)) throw tooLarge(name)
      return payload
    })
    app.addContentTypeParser(CBOR_TYPE, { parseAs: 'buffer', bodyLimit: largest }, (request, body, done) => {
      try {
        const { name } = request.params as { name: string }
        if ((body as Buffer).length > limitOf(name)) throw tooLarge(name)
        done(null, decodeCbor(body as Buffer))
      } catch (err) {
        done((err instanceof PayloadTooLarge ? err : new BadRequest(`malformed CBOR body: ${messageOf(err)}`)) as unknown as FastifyError)
      }
    })

    app.post<{ Params: { name: string } }>('/:name', { bodyLimit: largest, config: { access: 'function' } }, async (request, reply) => {
      const type = request.headers['content-type']?.split(';')[0].trim().toLowerCase()
      if (type !== CBOR_TYPE) throw new UnsupportedMediaType(`unsupported content type: ${type ?? 'none'}`)
      const result = await registry.call(request.params.name, request.body, { session: await auth.current(request) })
      return await reply.type(CBOR_TYPE).send(encodeCbor(result ?? null))
    })

    // A server function is called with POST only; the others name the function, or its absence.
    app.route<{ Params: { name: string } }>({
      method: app.supportedMethods.filter(method => method !== 'POST'),
      url: '/:name',
      config: { access: 'open' },
      handler: async (request, reply) => {
        if (registry.get(request.params.name) === undefined) throw new NotFound(`no server function "${request.params.name}"`, { code: CAMPAIGN_CODES.NO_SUCH_FUNCTION })
        reply.header('allow', 'POST')
        throw new MethodNotAllowed(`server functions are called with POST, not ${request.method}`)
      }
    })
  }
}
