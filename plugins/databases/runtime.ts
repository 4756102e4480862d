// POST /api/v1/databases (admin): write services/<name>/service.toml in the server's working
// directory, store the generated password as a secret, deploy the service, and answer with its
// connection strings once the engine reports it healthy. Everything is checked before anything is
// written; a create that fails after that is rolled back (the deployed service, the file and its
// folder, the secret). Imported by setup only.
import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { BadRequest, BerthError, Conflict, messageOf, Unavailable, type PluginContext } from '../../kernel/index.js'
import { leaderRoutes } from '../cluster/index.js'
import { IMAGE, NAME } from '../reconciler/api.js'
import { ENGINES, engineService, PORTS, type Engine } from './engines.js'
import { DATABASES_CODES } from './errors.js'
import type { DatabasesConfig } from './index.js'

/** How long a new database may take to become healthy before the answer says it is not yet. */
const HEALTHY_WITHIN_MS = 120_000
/** Longest image reference accepted (registry, name, tag and digest together). */
const MAX_IMAGE = 512
/** Host ports tried from the engine's first one when none is asked for. */
const PORTS_TRIED = 100

export interface CreatedDatabase {
  service: string
  engine: Engine
  image: string
  secret: string
  file: string
  /** From this host: the fixed published port, with the password. */
  connection: string
  /** From other services on its node: the service's name on the engine's network, with the secret's reference. */
  service_connection: string
  healthy: boolean
}

/** Whether nothing listens on `port` of this host now (bound on every address for a moment). */
async function portFree (port: number): Promise<boolean> {
  return await new Promise(resolve => {
    const server = createServer()
    server.once('error', () => { resolve(false) })
    server.listen({ port, host: '0.0.0.0', exclusive: true }, () => { server.close(() => { resolve(true) }) })
  })
}

export function setupDatabases (ctx: PluginContext<DatabasesConfig>): void {
  const { reconciler, engine, node, servicesDir } = ctx.use('reconciler')
  const secrets = ctx.use('secrets')
  const tokens = ctx.use('tokens')

  /** The host port: the one asked for, else the first free one from the engine's; refused when taken. */
  const hostPort = async (kind: Engine, asked: number | undefined): Promise<number> => {
    const claimed = new Map(reconciler.specs().flatMap(s => s.extra_ports.map(p => [p.host, s.name] as const)))
    if (asked !== undefined) {
      const owner = claimed.get(asked)
      if (owner !== undefined) throw new Conflict(`host port ${asked} is claimed by service ${owner}`)
      if (!await portFree(asked)) throw new Conflict(`host port ${asked} is in use on this host`)
      return asked
    }
    const first = PORTS[kind].firstHost
    for (let port = first; port < first + PORTS_TRIED; port++) if (!claimed.has(port) && await portFree(port)) return port
    throw new Conflict(`no free host port from ${first} to ${first + PORTS_TRIED - 1}: choose one with port (--port)`)
  }

  const volumeExists = async (volume: string): Promise<boolean> => {
    try {
      return await engine.hasVolume(volume)
    } catch (err) {
      throw new Unavailable(`the container engine cannot be asked about volume ${volume}: ${messageOf(err)}`)
    }
  }

  ctx.http('control', leaderRoutes(ctx.useOptional('cluster'), async app => {
    app.post<{ Body: { engine?: unknown, name?: unknown, image?: unknown, port?: unknown } | undefined }>('/', { onRequest: tokens.requireRole('admin') }, async (request, reply) => {
      const { engine: kind, name, image, port } = request.body ?? {}
      if (typeof kind !== 'string' || !(ENGINES as readonly string[]).includes(kind)) throw new BadRequest(`engine must be one of ${ENGINES.join(', ')}, got ${JSON.stringify(kind)}`)
      if (typeof name !== 'string' || !NAME.test(name)) throw new BadRequest(`name must be a service name (lowercase letters, digits and dashes), got ${JSON.stringify(name)}`)
      // Checked before the service file and the secret are written, as the deploy would check it after.
      if (image !== undefined && (typeof image !== 'string' || image.length > MAX_IMAGE || !IMAGE.test(image))) {
        throw new BadRequest(`image must be an image reference such as postgres:16 (at most ${MAX_IMAGE} characters), got ${JSON.stringify(image).slice(0, 80)}`)
      }
      if (port !== undefined && (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535)) throw new BadRequest(`port must be a host port from 1 to 65535, got ${JSON.stringify(port).slice(0, 20)}`)
      const folder = join(servicesDir, name)
      if (existsSync(folder) || reconciler.specs().some(s => s.name === name)) throw new Conflict(`a service named ${name} already exists (${folder})`)
      const secret = `${name.toUpperCase().replaceAll('-', '_')}_PASSWORD`
      if (secrets.has(secret, name)) throw new Conflict(`the secret ${secret} of project ${name} exists already: remove it (berth secrets rm ${secret} --project ${name}) or choose another name`)
      // The folder is the project: the volume is <name>_data. Data there was initialised with another password.
      const volume = `${name}_data`
      if (await volumeExists(volume)) throw new Conflict(`the volume ${volume} exists already and holds the data of an earlier ${name}, made with another password: remove it (docker volume rm ${volume}) or choose another name`)
      const engineKind = kind as Engine
      const ref = (image as string | undefined) ?? (engineKind === 'postgres' ? ctx.config.postgres_image : ctx.config.redis_image)
      const service = engineService({ engine: engineKind, name, image: ref, secret, hostPort: await hostPort(engineKind, port as number | undefined), node: node.name })
      const password = randomBytes(24).toString('base64url')
      const file = join(folder, 'service.toml')

      /** Undo what the create wrote; a line that says so, and what could not be undone. */
      const rollBack = async (): Promise<string> => {
        const left: string[] = []
        const undo = async (what: string, step: () => unknown): Promise<void> => {
          try {
            await step()
          } catch (err) {
            left.push(`${what} (${messageOf(err)})`)
          }
        }
        if (reconciler.specs().some(s => s.name === name)) await undo(`the service ${name}`, async () => await reconciler.removeService(name))
        await undo(file, () => { rmSync(folder, { recursive: true, force: true }) })
        await undo(`the secret ${secret}`, async () => await secrets.remove(secret, name))
        if (await engine.hasVolume(volume).catch(() => false)) left.push(`the volume ${volume} it created (Berth never removes volumes: docker volume rm ${volume})`)
        if (left.length > 0) ctx.log.error({ service: name, left }, 'db create: the rollback left some of what it made')
        return left.length === 0 ? 'rolled back: nothing of it is kept' : `rolled back, except ${left.join(', ')}`
      }

      try {
        await secrets.set(secret, password, name)
        mkdirSync(folder, { recursive: true })
        writeFileSync(file, service.file)
        const result = await reconciler.deployFiles({ service: name, by: `db create (${tokens.caller(request)?.name ?? 'admin'})` })
        if (result.errors.length > 0) throw new Error(`the deploy failed: ${result.errors.map(e => e.error).join('; ')}`)
        const deadline = Date.now() + HEALTHY_WITHIN_MS
        let container = (await reconciler.localContainers()).find(c => c.service === name)
        while (container?.health !== 'healthy' && Date.now() < deadline) {
          await new Promise(resolve => setTimeout(resolve, 500))
          container = (await reconciler.localContainers()).find(c => c.service === name)
        }
        const published = container === undefined ? undefined : await engine.address(container.id, PORTS[engineKind].container)
        if (published === undefined) throw new Error(`${name} was deployed but publishes no address`)
        const created: CreatedDatabase = {
          service: name,
          engine: engineKind,
          image: ref,
          secret,
          file,
          connection: service.connection(encodeURIComponent(password), `${published.host}:${published.port}`),
          service_connection: service.connection(`\${secrets.${secret}}`, `${name}:${PORTS[engineKind].container}`),
          healthy: container?.health === 'healthy'
        }
        return await reply.code(201).send(created)
      } catch (err) {
        // The reconciler's refusals keep their status (a broken service file 400, an engine down 503); a failed deploy is 502.
        const [status, code] = err instanceof BerthError ? [err.statusCode, err.code] : [DATABASES_CODES.DB_DEPLOY.status, DATABASES_CODES.DB_DEPLOY.code]
        throw new BerthError(`db create ${name}: ${messageOf(err)}; ${await rollBack()}`, status, code)
      }
    })
  }), { prefix: '/api/v1/databases' })
}
