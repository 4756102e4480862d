// The web UI: the pages (behind the login) answer with the built index.html, and the built assets
// (open to all) are served from memory with their content types. Built by `npm run build:ui`.
import { join } from 'node:path'
import type { FastifyPluginAsync } from 'fastify'
import { NotFound, PACKAGE_ROOT } from '../../kernel/index.js'
import { loadBuiltUi } from '../../kernel/runtime-api.js'
import { messagePage } from './html.js'

/** Where `npm run build:ui` writes the UI. */
export const UI_BUILD_DIR = join(PACKAGE_ROOT, 'dist', 'campaign-ui')

/** The UI's pages, `/` and `/{module}` for each module: they share one index.html, which chooses by path. */
export function uiRoutes (modules: readonly string[], dir = UI_BUILD_DIR): FastifyPluginAsync {
  const { index, assets } = loadBuiltUi(dir)
  return async app => {
    app.get<{ Params: { name: string } }>('/assets/:name', { config: { access: 'open' } }, async (request, reply) => {
      const asset = assets.get(request.params.name)
      if (asset === undefined) throw new NotFound(`no asset ${request.params.name}`)
      // Asset names carry a content hash: a name never changes content.
      return await reply.type(asset.type).header('cache-control', 'public, max-age=31536000, immutable').send(asset.body)
    })
    for (const path of ['/', ...modules.map(module => `/${module}`)]) {
      app.get(path, async (_request, reply) => {
        if (index === undefined) return await reply.code(503).type('text/html').send(messagePage('UI not built', 'Run npm run build:ui, then restart the server.'))
        return await reply.type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(index)
      })
    }
  }
}
