// The orchestration endpoints of the control API under /api/v1, each behind the role it needs:
// viewers read (status, logs, cluster info), deployers change what runs. A token limited to projects
// sees and acts on their services only: another project's service is answered as one that does not
// exist (404), and what acts on every project (stop, reload, a deploy of every file) is refused (403).
import type { FastifyPluginAsync, FastifyRequest } from 'fastify'
import { BadRequest, Conflict, Forbidden, NotFound } from '../../kernel/index.js'
import type { TokenService } from '../tokens/index.js'
import { takeCanary } from './canary.js'
import type { ClusterInfo } from './cluster-info.js'
import type { JobScheduler } from './jobs.js'
import type { Reconciler } from './reconciler.js'
import type { ReloadRecord } from './reload.js'
import { RECONCILER_CODES } from './errors.js'
import { TOKENS_CODES } from '../tokens/index.js'

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

/** `name`, when a service so named is deployed and the request's token reaches its project; else the 404 of a service that does not exist. */
export function serviceVisibility (reconciler: Reconciler, tokens: TokenService): (request: FastifyRequest, name: string) => string {
  return (request, name) => {
    const project = reconciler.specs().find(s => s.name === name)?.project
    if (project === undefined || !tokens.reaches(request, project)) throw new NotFound(`no service named "${name}" is deployed`, { code: RECONCILER_CODES.NO_SUCH_SERVICE })
    return name
  }
}

export function reconcilerRoutes ({ reconciler, jobs, tokens, defaultTail, clusterInfo, stopping, reload }: RouteDeps): FastifyPluginAsync {
  const viewer = { onRequest: tokens.requireRole('viewer') }
  // An agent's services come from its leader: its own API refuses changes.
  const notAnAgent = async (): Promise<void> => {
    if (reconciler.leader !== undefined) throw new Conflict(`this node is an agent of the leader at ${reconciler.leader}: change services through the leader`, { code: RECONCILER_CODES.NOT_LEADER })
  }
  const deployer = { onRequest: [tokens.requireRole('deployer'), notAnAgent] }
  const by = (request: FastifyRequest): string | undefined => tokens.caller(request)?.name
  const visible = serviceVisibility(reconciler, tokens)
  /** A change of every project's services: refused to a token limited to projects. */
  const everyProject = (request: FastifyRequest, what: string): void => {
    const projects = tokens.projects(request)
    if (projects !== undefined) throw new Forbidden(`${what} acts on every project; this token is limited to ${projects.join(', ')}`, { code: TOKENS_CODES.PROJECT_SCOPE })
  }

  return async app => {
    app.post<{ Querystring: { service?: string, prune?: string }, Body: unknown }>('/deploy', deployer, async request => {
      const { service } = request.query
      const prune = parseFlag('prune', request.query.prune)
      const { canary, rest } = takeCanary(request.body)
      const named = isEmptyBody(rest)
      const projects = tokens.projects(request)
      if (!named && service !== undefined) throw new BadRequest('give either a body with services or ?service=, not both')
      if (prune && (!named || service !== undefined || canary !== undefined)) throw new BadRequest('prune goes with a deploy of every service file (no body, no ?service=, no canary)')
      if (canary !== undefined) {
        if (named && service === undefined) throw new BadRequest('a canary deploys one service: name it with ?service= or give one entry in services')
        return await reconciler.deployCanary(named ? { service: service as string } : { body: rest }, canary, by(request), projects)
      }
      if (named) return await reconciler.deployFiles({ service, by: by(request), prune, projects })
      return await reconciler.deployRequest(rest, by(request), projects)
    })

    app.post('/reload', deployer, async (request, reply) => {
      everyProject(request, 'a reload')
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
      const services = await reconciler.status(request.query.project, { stats: parseFlag('stats', request.query.stats) })
      return { services: services.filter(s => tokens.reaches(request, s.project)) }
    })

    app.get('/jobs', viewer, async request => {
      const projects = new Map(reconciler.specs().map(s => [s.name, s.project]))
      return { jobs: jobs.statuses().filter(j => tokens.reaches(request, projects.get(j.service) ?? '')) }
    })

    app.get<{ Params: { service: string, job: string } }>('/jobs/:service/:job', viewer, async request => {
      const { service, job } = request.params
      const project = reconciler.specs().find(s => s.name === service)?.project
      const runs = project !== undefined && tokens.reaches(request, project) ? jobs.runs(service, job) : undefined
      if (runs === undefined) throw new NotFound(`service "${service}" has no job named "${job}"`, { code: RECONCILER_CODES.NO_SUCH_JOB })
      return { job: jobs.statuses().find(s => s.service === service && s.job === job), runs }
    })

    app.post<NameParams & { Body: { replicas?: unknown } | undefined }>('/services/:name/scale', deployer, async request => {
      return await reconciler.scale(visible(request, request.params.name), request.body?.replicas, by(request))
    })

    app.post<NameParams>('/services/:name/promote', deployer, async request => await reconciler.promote(visible(request, request.params.name), by(request)))

    app.post<NameParams>('/services/:name/rollback', deployer, async request => await reconciler.rollback(visible(request, request.params.name), by(request)))

    app.post<NameParams>('/services/:name/redeploy', deployer, async request => await reconciler.redeploy(visible(request, request.params.name), by(request)))

    app.post<NameParams>('/services/:name/restart', deployer, async request => await reconciler.restart(visible(request, request.params.name)))

    app.delete<NameParams>('/services/:name', deployer, async request => await reconciler.removeService(visible(request, request.params.name)))

    app.delete<NameParams>('/projects/:name', deployer, async request => {
      const { name } = request.params
      if (!tokens.reaches(request, name)) throw new NotFound(`no project named "${name}" is deployed`, { code: RECONCILER_CODES.NO_SUCH_SERVICE })
      return await reconciler.removeProject(name)
    })

    app.post('/stop', deployer, async request => {
      everyProject(request, 'a stop')
      return await reconciler.stopAll()
    })

    app.get<NameParams & { Querystring: { tail?: string, follow?: string } }>('/services/:name/logs', viewer, async (request, reply) => {
      const tail = parseTail(request.query.tail, defaultTail)
      const follow = parseFlag('follow', request.query.follow)
      const stream = await reconciler.logs(visible(request, request.params.name), { tail, follow })
      if (follow) {
        const end = (): void => { stream.end() }
        stopping.addEventListener('abort', end, { once: true })
        stream.once('close', () => { stopping.removeEventListener('abort', end) })
      }
      return await reply.type('text/plain; charset=utf-8').send(stream)
    })

    app.get('/cluster/info', viewer, async () => await (reconciler.clusterInfo ?? clusterInfo)())

    app.get('/deploys', viewer, async request => {
      if (tokens.projects(request) === undefined) return { deploys: reconciler.history() }
      const projects = new Map(reconciler.history().flatMap(d => d.services.map(s => [s.name, s.project] as const)))
      const seen = (name: string): boolean => tokens.reaches(request, projects.get(name) ?? '')
      return {
        deploys: reconciler.history().flatMap(d => {
          const services = d.services.filter(s => tokens.reaches(request, s.project))
          return services.length === 0 ? [] : [{ ...d, services, deployed: d.deployed.filter(seen), errors: d.errors.filter(e => tokens.reaches(request, e.project)) }]
        })
      }
    })
  }
}
