// The secrets plugin at work: the key file, the encrypted store and its routes. Imported by setup only.
import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import type { PluginContext } from '../../kernel/index.js'
import type { TokenService } from '../tokens/index.js'
import { loadKey } from './cipher.js'
import type { SecretService, SecretsConfig } from './index.js'
import { secretRoutes } from './routes.js'
import { SecretStore, type SecretRecord } from './secret-store.js'
import { controlState } from '../cluster/index.js'

export function setupSecrets (ctx: PluginContext<SecretsConfig>, tokens: TokenService): SecretService {
  const db = controlState(ctx).db<SecretRecord>('values')
  const keyFile = resolve(ctx.stateDir, ctx.config.key_file)
  const stored = db.getKeysCount()
  if (stored > 0 && !existsSync(keyFile)) {
    throw new Error(`the key file ${keyFile} is missing but ${stored} secrets are stored; restore it (a new key could not decrypt them)`)
  }
  const store = new SecretStore(db, loadKey(keyFile))
  ctx.http('control', secretRoutes(store, tokens), { prefix: '/api/v1/secrets' })
  return {
    resolve: (env, subject, project) => store.resolve(env, subject, project),
    set: async (name, value, project) => { await store.set(name, value, { project }) },
    has: (name, project) => store.has(name, project),
    visibility: (name, project) => store.visibility(name, project),
    remove: async (name, project) => await store.remove(name, project)
  }
}
