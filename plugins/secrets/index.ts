// secrets: an encrypted secret store (AES-256-GCM at rest, key file created 0600 on first boot)
// managed through the control API, resolving `${secrets.NAME}` in service environments from the
// service's project's secrets and those shared with it.
import { definePlugin, type SectionSchema } from '../../kernel/index.js'
import type { Static } from '@sinclair/typebox'
import { secretCommands } from './commands.js'
import type { SecretVisibility } from './secret-store.js'

export interface SecretService {
  /**
   * `env` with every `${secrets.NAME}` replaced by its value: a service's (`project` given) from its
   * project's secrets and those shared with it; the server's own settings (no project) from shared
   * ones. Throws `UnknownSecret` naming the subject, the variable and the secret. The result goes
   * into a container's environment (or the setting) only.
   */
  resolve(env: Readonly<Record<string, string>>, subject: string, project?: string): Record<string, string>
  /** Store (or replace) a project's secret, or (no project) one shared with every project, as `PUT /api/v1/secrets/{name}` does. */
  set(name: string, value: string, project?: string): Promise<void>
  /** Whether a secret of that name is stored for the project (or shared, without one). */
  has(name: string, project?: string): boolean
  /** Whether a project's services may use the secret: 'visible' (theirs or shared with them), 'hidden' (another project's only), 'missing'. */
  visibility(name: string, project: string): SecretVisibility
  /** Remove a secret, as `DELETE /api/v1/secrets/{name}` does; false when there was none. */
  remove(name: string, project?: string): Promise<boolean>
}

declare module '../../kernel/index.js' {
  interface Services { secrets: SecretService }
}

const secretsSection = ((Type) => Type.Object({
  key_file: Type.String({ default: 'secrets.key', description: 'AES-256 key file (base64), relative to the state directory; created 0600 on first boot.' })
}, { additionalProperties: false })) satisfies SectionSchema

export type SecretsConfig = Static<ReturnType<typeof secretsSection>>

export default definePlugin({
  name: 'secrets',
  version: '0.1.0',
  product: 'orchestration',
  description: 'Encrypted secret store; values reach containers only through their environment.',
  dependsOn: ['tokens'],
  optionalDependsOn: ['cluster'],
  config: secretsSection,

  async setup (ctx) {
    const { setupSecrets } = await import('./runtime.js')
    return setupSecrets(ctx, ctx.use('tokens'))
  },

  commands: secretCommands
})
