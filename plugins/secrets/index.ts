// secrets: an encrypted secret store (AES-256-GCM at rest, key file created 0600 on first boot)
// managed through the control API, resolving `${secrets.NAME}` in service environments.
import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import { definePlugin, Type } from '../../kernel/index.js'
import { loadKey } from './cipher.js'
import { secretCommands } from './commands.js'
import { secretRoutes } from './routes.js'
import { SecretStore, type SecretRecord } from './secret-store.js'

export interface SecretService {
  /**
   * `env` with every `${secrets.NAME}` replaced by its value; throws `UnknownSecret` naming the
   * service, the variable and the secret. The result goes into a container's environment only.
   */
  resolve(env: Readonly<Record<string, string>>, service: string): Record<string, string>
}

declare module '../../kernel/index.js' {
  interface Services { secrets: SecretService }
}

export default definePlugin({
  name: 'secrets',
  version: '0.1.0',
  description: 'Encrypted secret store; values reach containers only through their environment.',
  dependsOn: ['tokens'],
  config: Type.Object({
    key_file: Type.String({ default: 'secrets.key', description: 'AES-256 key file (base64), relative to the state directory; created 0600 on first boot.' })
  }, { additionalProperties: false }),

  setup (ctx) {
    const db = ctx.store.db<SecretRecord, string>('values')
    const keyFile = resolve(ctx.stateDir, ctx.config.key_file)
    const stored = db.getKeysCount()
    if (stored > 0 && !existsSync(keyFile)) {
      throw new Error(`the key file ${keyFile} is missing but ${stored} secrets are stored; restore it (a new key could not decrypt them)`)
    }
    const key = loadKey(keyFile)
    const store = new SecretStore(db, key)
    ctx.http('control', secretRoutes(store, ctx.use('tokens')), { prefix: '/api/v1/secrets' })
    const service: SecretService = { resolve: (env, name) => store.resolve(env, name) }
    return service
  },

  commands: secretCommands
})
