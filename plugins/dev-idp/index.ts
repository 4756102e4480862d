// dev-idp: an OpenID provider for development (oidc-provider, Keycloak-style realm paths) that a
// product runs on loopback when its own setting asks for it: the campaign app (`[campaign].dev_idp`,
// `berth server --dev`) and the telemetry dashboard (`[ingest].sso.dev_idp`). Each names this plugin
// in `optionalDependsOn`, starts a provider through its service and closes it when it stops. Nothing
// runs unless a product asks, and products refuse to ask in production.
import { definePlugin, StartupError, type PluginContext } from '../../kernel/index.js'
import type { EmbeddedIdp, EmbeddedIdpOptions } from './embedded.js'

export type { DevIdp } from './provider.js'
export type { DevUser } from './users.js'
export type { EmbeddedIdp, EmbeddedIdpOptions } from './embedded.js'

export interface DevIdpService {
  /** Start a provider on loopback with one user per role, passwords in `options.file` (0600) of the state directory; the caller closes it. */
  start(options: EmbeddedIdpOptions): Promise<EmbeddedIdp>
}

declare module '../../kernel/index.js' {
  interface Services { 'dev-idp': DevIdpService }
}

/** The service for a product whose `setting` asks for a provider; refused at start when this server does not run dev-idp. */
export function devIdpFor (ctx: Pick<PluginContext, 'useOptional'>, setting: string): DevIdpService {
  const service = ctx.useOptional('dev-idp')
  if (service === undefined) throw new StartupError(`${setting} needs the dev-idp plugin, which this server does not run (see [server].plugins and disable)`)
  return service
}

export default definePlugin({
  name: 'dev-idp',
  version: '0.1.0',
  description: 'Development identity provider on loopback for the products that ask for one.',

  setup (ctx): DevIdpService {
    return {
      async start (options) {
        // Loaded only when used: oidc-provider warns on import.
        const { startEmbeddedIdp } = await import('./embedded.js')
        return await startEmbeddedIdp(ctx, options)
      }
    }
  }
})
