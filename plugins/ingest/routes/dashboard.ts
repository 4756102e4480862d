// The telemetry dashboard's files on the telemetry listener: /dashboard answers with the built
// index.html and /dashboard/assets/* with the hashed assets, open to all (sign-in happens in the
// app, which calls the API with the user's credentials). Built by `npm run build:ui`.
import { join } from 'node:path'
import { NotFound, PACKAGE_ROOT, Unavailable } from '../../../kernel/index.js'
import { loadBuiltUi } from '../../../kernel/runtime-api.js'
import type { FastifyInstance } from 'fastify'

export const DASHBOARD_BUILD_DIR = join(PACKAGE_ROOT, 'dist', 'telemetry-ui')

export function dashboardRoutes (app: FastifyInstance, dir = DASHBOARD_BUILD_DIR): void {
  const { index, assets } = loadBuiltUi(dir)
  app.get<{ Params: { name: string } }>('/dashboard/assets/:name', { config: { telemetryAccess: 'public' } }, async (request, reply) => {
    const asset = assets.get(request.params.name)
    if (asset === undefined) throw new NotFound(`no dashboard asset ${request.params.name}`)
    return await reply.type(asset.type).header('cache-control', 'public, max-age=31536000, immutable').send(asset.body)
  })
  for (const path of ['/dashboard', '/dashboard/']) {
    app.get(path, { config: { telemetryAccess: 'public' } }, async (_request, reply) => {
      if (index === undefined) throw new Unavailable('the dashboard is not built: run npm run build:ui, then restart the server')
      return await reply.type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(index)
    })
  }
}
