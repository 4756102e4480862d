// The tokens plugin at work: the token store, the bootstrap admin token, the guard and the routes.
// Imported by setup only, so `berth` commands never load it.
import type { PluginContext } from '../../kernel/index.js'
import { Guard } from './guard.js'
import type { TokenService } from './index.js'
import { tokenRoutes } from './routes.js'
import { TokenStore, type TokenRecord } from './token-store.js'
import { controlState } from '../cluster/index.js'

export async function setupTokens (ctx: PluginContext): Promise<TokenService> {
  const cluster = ctx.useOptional('cluster')
  const store = new TokenStore(controlState(ctx).db<TokenRecord>('tokens'))
  // Masters sharing the tokens each keep a bootstrap admin token of their own.
  const member = cluster?.control?.self.id
  const file = await store.ensureAdminToken(ctx.stateDir, member === undefined ? 'admin' : `admin-${member}`)
  ctx.log.info({ file }, 'admin token ready')
  ctx.note(`admin token: ${file} (berth commands on this machine read it; API clients send it as "Authorization: Bearer <token>")`)
  const guard = new Guard(store)
  ctx.http('control', tokenRoutes(store, guard), { prefix: '/api/v1/tokens' })
  return {
    requireRole: role => guard.requireRole(role),
    caller: request => guard.caller(request),
    projects: request => guard.caller(request)?.projects,
    reaches: (request, project) => {
      const projects = guard.caller(request)?.projects
      return projects === undefined || projects.includes(project)
    },
    stillValid: request => {
      const caller = guard.caller(request)
      return caller !== undefined && store.get(caller.id) !== undefined
    }
  }
}
