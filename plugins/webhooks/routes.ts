// Control API routes under /api/v1/webhooks: register, list, remove and read the history (bearer
// token; a token limited to projects sees the registrations of their services only), and the receivers POST /api/v1/webhooks/{git|github|gitea|gitlab}, authenticated by the
// signature over the raw body instead (so they read the body as bytes, up to MAX_PUSH_BYTES): a push
// runs; a ping, a test delivery or another event, once signed, is answered 200 and runs nothing.
import type { FastifyPluginAsync, FastifyRequest } from 'fastify'
import { BadRequest, Forbidden, NotFound, Unauthorized } from '../../kernel/index.js'
import { TOKENS_CODES, type TokenService } from '../tokens/index.js'
import { eventOf, PROVIDERS, readDelivery, signatureValid, type Provider } from './push.js'
import { checkRegistration, INFRA, publicView, type Registrations } from './registrations.js'
import type { Runner } from './runner.js'
import { RECONCILER_CODES } from '../reconciler/api.js'
import { WEBHOOKS_CODES } from './errors.js'

/** Largest push body accepted (GitHub caps its payloads at 25 MB; pushes are far smaller). */
export const MAX_PUSH_BYTES = 5 * 1024 * 1024

const ID = /^[0-9a-f]{12}$/

/**
 * `reachable(service)` throws `Unavailable` when a redeploy of the service would have to wait for its
 * node (a cluster's agent that is offline): the push is refused with 503 before anything runs.
 */
export function webhookRoutes (registrations: Registrations, runner: Runner, tokens: TokenService, reachable: (service: string) => void = () => {}, projectOf: (service: string) => string | undefined = () => undefined): FastifyPluginAsync {
  const viewer = { onRequest: tokens.requireRole('viewer') }
  const deployer = { onRequest: tokens.requireRole('deployer') }
  /** Whether the request's token reaches what a registration deploys: a token limited to projects, only their deployed services (never __infra__). */
  const sees = (request: FastifyRequest, service: string): boolean => {
    if (tokens.projects(request) === undefined) return true
    const project = service === INFRA ? undefined : projectOf(service)
    return project !== undefined && tokens.reaches(request, project)
  }
  const known = (request: FastifyRequest, id: string): string => {
    const missing = new NotFound(`no webhook with id ${id}`, { code: WEBHOOKS_CODES.NO_SUCH_WEBHOOK })
    if (!ID.test(id)) throw missing
    const registration = registrations.get(id)
    if (!sees(request, registration.service_name)) throw missing
    return registration.id
  }

  return async app => {
    app.post('/', deployer, async (request, reply) => {
      const checked = checkRegistration(request.body)
      if (!sees(request, checked.service_name)) {
        if (checked.service_name === INFRA) throw new Forbidden(`${INFRA} deploys every project; this token is limited to ${tokens.projects(request)?.join(', ') ?? ''}`, { code: TOKENS_CODES.PROJECT_SCOPE })
        throw new NotFound(`no service named "${checked.service_name}" is deployed`, { code: RECONCILER_CODES.NO_SUCH_SERVICE })
      }
      const registration = await registrations.add(checked)
      return await reply.code(201).send(publicView(registration))
    })

    app.get('/', viewer, async request => ({ webhooks: registrations.list().filter(r => sees(request, r.service_name)).map(publicView) }))

    app.delete<{ Params: { id: string } }>('/:id', deployer, async request => {
      const id = known(request, request.params.id)
      await registrations.remove(id)
      runner.forget(id)
      return { deleted: id }
    })

    app.get<{ Params: { id: string } }>('/:id/history', viewer, async request => {
      const id = known(request, request.params.id)
      return { webhook: id, invocations: runner.history(id) }
    })

    await app.register(async receivers => {
      // The signature covers the raw bytes: this scope reads them instead of the listener's JSON.
      receivers.removeContentTypeParser('application/json')
      receivers.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit: MAX_PUSH_BYTES }, (_request, body, done) => { done(null, body) })
      receivers.post<{ Params: { provider: string } }>('/:provider', { bodyLimit: MAX_PUSH_BYTES }, async (request, reply) => {
        const provider = request.params.provider as Provider
        if (!PROVIDERS.includes(provider)) throw new NotFound(`no webhook receiver for "${request.params.provider}": use one of ${PROVIDERS.join(', ')}`)
        if (!Buffer.isBuffer(request.body)) throw new BadRequest('send the push as application/json')
        let parsed: unknown
        try {
          parsed = JSON.parse(request.body.toString('utf8'))
        } catch {
          throw new BadRequest('the body is not valid JSON')
        }
        const event = eventOf(provider, request.headers)
        const delivery = readDelivery(provider, event, parsed)
        if (typeof delivery === 'string') throw new BadRequest(delivery)
        const { repo } = delivery
        // A ping of an organisation's hook names no repository: any registration's secret may have signed it.
        const candidates = registrations.list().filter(r => repo === undefined || r.repo === repo)
        if (candidates.length === 0) throw new NotFound(repo === undefined ? 'no webhook is registered' : `no webhook is registered for ${repo}`, { code: WEBHOOKS_CODES.NO_SUCH_WEBHOOK })
        const body = request.body
        const signed = candidates.filter(r => signatureValid(provider, request.headers, body, r.secret))
        if (signed.length === 0) {
          throw new Unauthorized(provider === 'gitlab' ? 'missing or wrong X-Gitlab-Token' : 'missing or bad signature: expected X-Hub-Signature-256: sha256=<HMAC-SHA256 of the body>', { code: WEBHOOKS_CODES.BAD_SIGNATURE })
        }
        if ('ignored' in delivery) return await reply.code(200).send({ event, webhooks: signed.map(r => r.id), detail: delivery.ignored })
        const push = delivery
        const matched = signed.filter(r => r.branch === push.branch)
        if (matched.length === 0) throw new NotFound(`no webhook of ${push.repo} is registered for branch ${push.branch}`, { code: WEBHOOKS_CODES.NO_SUCH_WEBHOOK })
        for (const registration of matched) if (registration.service_name !== INFRA) reachable(registration.service_name)
        for (const registration of matched) runner.submit({ registration, push })
        return await reply.code(202).send({ accepted: matched.map(r => ({ id: r.id, service_name: r.service_name })), sha: push.sha })
      })
    })
  }
}
