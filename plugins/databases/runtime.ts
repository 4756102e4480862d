// POST /api/v1/databases (admin): write services/<name>/service.toml in the server's working
// directory, store the generated password as a secret, deploy the service, and answer with its
// connection string once the engine reports it healthy. Imported by setup only.
import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { BadRequest, BerthError, Conflict, type PluginContext } from '../../kernel/index.js'
import { IMAGE, NAME } from '../reconciler/spec.js'
import { ENGINES, engineService, type Engine } from './engines.js'
import type { DatabasesConfig } from './index.js'

/** How long a new database may take to become healthy before the answer says it is not yet. */
const HEALTHY_WITHIN_MS = 120_000
/** Longest image reference accepted (registry, name, tag and digest together). */
const MAX_IMAGE = 512

export interface CreatedDatabase {
  service: string
  engine: Engine
  image: string
  secret: string
  file: string
  connection: string
  healthy: boolean
}

export function setupDatabases (ctx: PluginContext<DatabasesConfig>): void {
  const { reconciler } = ctx.use('reconciler')
  const secrets = ctx.use('secrets')
  const tokens = ctx.use('tokens')
  const servicesDir = ctx.use('reconciler').servicesDir

  ctx.http('control', async app => {
    app.post<{ Body: { engine?: unknown, name?: unknown, image?: unknown } | undefined }>('/', { onRequest: tokens.requireRole('admin') }, async (request, reply) => {
      const { engine, name, image } = request.body ?? {}
      if (typeof engine !== 'string' || !(ENGINES as readonly string[]).includes(engine)) throw new BadRequest(`engine must be one of ${ENGINES.join(', ')}, got ${JSON.stringify(engine)}`)
      if (typeof name !== 'string' || !NAME.test(name)) throw new BadRequest(`name must be a service name (lowercase letters, digits and dashes), got ${JSON.stringify(name)}`)
      // Checked before the service file and the secret are written, as the deploy would check it after.
      if (image !== undefined && (typeof image !== 'string' || image.length > MAX_IMAGE || !IMAGE.test(image))) {
        throw new BadRequest(`image must be an image reference such as postgres:16 (at most ${MAX_IMAGE} characters), got ${JSON.stringify(image).slice(0, 80)}`)
      }
      const folder = join(servicesDir, name)
      if (existsSync(folder) || reconciler.specs().some(s => s.name === name)) throw new Conflict(`a service named ${name} already exists (${folder})`)
      const kind = engine as Engine
      const ref = (image as string | undefined) ?? (kind === 'postgres' ? ctx.config.postgres_image : ctx.config.redis_image)
      const secret = `${name.toUpperCase().replaceAll('-', '_')}_PASSWORD`
      const password = randomBytes(24).toString('base64url')
      const service = engineService(kind, name, ref, secret)
      await secrets.set(secret, password)
      mkdirSync(folder, { recursive: true })
      const file = join(folder, 'service.toml')
      writeFileSync(file, service.file)
      const result = await reconciler.deployFiles({ service: name, by: `db create (${tokens.caller(request)?.name ?? 'admin'})` })
      if (result.errors.length > 0) {
        throw new BerthError(`${file} was written and the secret ${secret} stored, but the deploy failed: ${result.errors.map(e => e.error).join('; ')}`, 502, 'BERTH_DB_DEPLOY')
      }
      const deadline = Date.now() + HEALTHY_WITHIN_MS
      let container = (await reconciler.status()).find(s => s.name === name)?.containers[0]
      while (container?.health !== 'healthy' && Date.now() < deadline) {
        await new Promise(resolve => setTimeout(resolve, 500))
        container = (await reconciler.status()).find(s => s.name === name)?.containers[0]
      }
      if (container?.address === undefined) throw new BerthError(`${name} was deployed but publishes no address`, 502, 'BERTH_DB_DEPLOY')
      const created: CreatedDatabase = {
        service: name, engine: kind, image: ref, secret, file, connection: service.connection(password, container.address), healthy: container.health === 'healthy'
      }
      return await reply.code(201).send(created)
    })
  }, { prefix: '/api/v1/databases' })
}
