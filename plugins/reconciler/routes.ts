// The orchestration endpoints of the control API under /api/v1, each behind the role it needs:
// viewers read (status, logs, cluster info), deployers change what runs.
import type { FastifyPluginAsync, FastifyRequest } from 'fastify'
import { BadRequest, Conflict, NotFound } from '../../kernel/index.js'
import type { TokenService } from '../tokens/index.js'
import { takeCanary } from './canary.js'
import type { ClusterInfo } from './cluster-info.js'
import type { JobScheduler } from './jobs.js'
import type { Reconciler } from './reconciler.js'
import type { ReloadRecord } from './reload.js'

/** Most lines a logs request may ask for. */
const MAX_TAIL = 100_000

export interface RouteDeps {
  reconciler: Reconciler
  jobs: JobScheduler
  tokens: TokenService
  /** Lines of logs when `tail` is not given. */
  defaultTail: number
  /** The answer of GET /cluster/info. */
  clusterInfo(): Promise<ClusterInfo>
  /** Aborted when the server stops: followed logs end then. */
  stopping: AbortSignal
  /** Ask for a reload (restart in place, then a redeploy of everything), and the last one asked for. */
  reload: { request(by?: string): Promise<ReloadRecord>, last(): ReloadRecord | undefined }
}

interface NameParams { Params: { name: string } }

function parseTail (text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback
  const tail = Number(text)
  if (!/^\d+$/.test(text) || tail > MAX_TAIL) throw new BadRequest(`tail must be an integer from 0 to ${MAX_TAIL}, got ${JSON.stringify(text)}`)
  return tail
}

function parseFlag (name: string, text: string | undefined): boolean {
  if (text === undefined || text === 'false' || text === '0') return false
  if (text === 'true' || text === '1' || text === '') return true
  throw new BadRequest(`${name} must be true or false, got ${JSON.stringify(text)}`)
}

/** A deploy body that names no services: absent, null or `{}`. */
function isEmptyBody (body: unknown): boolean {
  return body === undefined || body === null || (typeof body === 'object' && !Array.isArray(body) && Object.keys(body).length === 0)
}

export function reconcilerRoutes ({ reconciler, jobs, tokens, defaultTail, clusterInfo, stopping, reload }: RouteDeps): FastifyPluginAsync {
  const viewer = { onRequest: tokens.requireRole('viewer') }
  // An agent's services come from its leader: its own API refuses changes.
  const notAnAgent = async (): Promise<void> => {
    if (reconciler.leader !== undefined) throw new Conflict(`this node is an agent of the leader at ${reconciler.leader}: change services through the leader`, { code: 'BERTH_NOT_LEADER' })
  }
  const deployer = { onRequest: [tokens.requireRole('deployer'), notAnAgent] }
  const by = (request: FastifyRequest): string | undefined => tokens.caller(request)?.name

  return async app => {
    app.post<{ Querystring: { service?: string, prune?: string }, Body: unknown }>('/deploy', deployer, async request => {
      const { service } = request.query
      const prune = parseFlag('prune', request.query.prune)
      const { weight, rest } = takeCanary(request.body)
      const named = isEmptyBody(rest)
      if (!named && service !== undefined) throw new BadRequest('give either a body with services or ?service=, not both')
      if (prune && (!named || service !== undefined || weight !== undefined)) throw new BadRequest('prune goes with a deploy of every service file (no body, no ?service=, no canary)')
      if (weight !== undefined) {
        if (named && service === undefined) throw new BadRequest('a canary deploys one service: name it with ?service= or give one entry in services')
        return await reconciler.deployCanary(named ? { service: service as string } : { body: rest }, weight, by(request))
      }
      if (named) return await reconciler.deployFiles({ service, by: by(request), prune })
      return await reconciler.deployRequest(rest, by(request))
    })

    app.post('/reload', deployer, async (request, reply) => {
      const record = await reload.request(by(request))
      reply.code(202)
      return { reload: record }
    })

    app.get('/reload', viewer, async () => {
      const record = reload.last()
      if (record === undefined) throw new NotFound('no reload has been asked for')
      return { reload: record }
    })

    app.get<{ Querystring: { project?: string, stats?: string } }>('/status', viewer, async request => {
      return { services: await reconciler.status(request.query.project, { stats: parseFlag('stats', request.query.stats) }) }
    })

    app.get('/jobs', viewer, async () => ({ jobs: jobs.statuses() }))

    app.get<{ Params: { service: string, job: string } }>('/jobs/:service/:job', viewer, async request => {
      const { service, job } = request.params
      const runs = jobs.runs(service, job)
      if (runs === undefined) throw new NotFound(`service "${service}" has no job named "${job}"`, { code: 'BERTH_NO_SUCH_JOB' })
      return { job: jobs.statuses().find(s => s.service === service && s.job === job), runs }
    })

    app.post<NameParams & { Body: { replicas?: unknown } | undefined }>('/services/:name/scale', deployer, async request => {
      return await reconciler.scale(request.params.name, request.body?.replicas, by(request))
    })

    app.post<NameParams>('/services/:name/promote', deployer, async request => await reconciler.promote(request.params.name, by(request)))

    app.post<NameParams>('/services/:name/rollback', deployer, async request => await reconciler.rollback(request.params.name, by(request)))

    app.post<NameParams>('/services/:name/redeploy', deployer, async request => await reconciler.redeploy(request.params.name, by(request)))

    app.post<NameParams>('/services/:name/restart', deployer, async request => await reconciler.restart(request.params.name))

    app.delete<NameParams>('/services/:name', deployer, async request => await reconciler.removeService(request.params.name))

    app.delete<NameParams>('/projects/:name', deployer, async request => await reconciler.removeProject(request.params.name))

    app.post('/stop', deployer, async () => await reconciler.stopAll())

    app.get<NameParams & { Querystring: { tail?: string, follow?: string } }>('/services/:name/logs', viewer, async (request, reply) => {
      const tail = parseTail(request.query.tail, defaultTail)
      const follow = parseFlag('follow', request.query.follow)
      const stream = await reconciler.logs(request.params.name, { tail, follow })
      if (follow) {
        const end = (): void => { stream.end() }
        stopping.addEventListener('abort', end, { once: true })
        stream.once('close', () => { stopping.removeEventListener('abort', end) })
      }
      return await reply.type('text/plain; charset=utf-8').send(stream)
    })

    app.get('/cluster/info', viewer, async () => await (reconciler.clusterInfo ?? clusterInfo)())

    app.get('/deploys', viewer, async () => ({ deploys: reconciler.history() }))
  }
}
