// campaign: the campaign operations web app on the app listener: OIDC login with PKCE, sessions (in
// memory, or in Redis shared by several instances), four roles, CBOR server functions of the modules, the web UI, and the development IDP of
// the dev-idp plugin when asked for (`[campaign].dev_idp`, or `berth server --dev`).
import { definePlugin } from '../../kernel/index.js'
import type { DevIdp } from '../dev-idp/index.js'
import type { FunctionRegistry } from './functions.js'
import type { PostStore } from './records/posts.js'
import type { SessionBackend } from './session-backend.js'
import type { CampaignStore } from './store/contract.js'
import type { IdpClient } from './oidc-client.js'
import { CAMPAIGN_ENV, campaignSection } from './settings.js'

export interface CampaignService {
  readonly registry: FunctionRegistry
  /** The sentiment monitor's post stream. */
  readonly posts: PostStore
  /** Sessions and pending logins, in memory or in Redis. */
  readonly sessions: SessionBackend
  /** The modules' data, in LMDB or PostgreSQL. */
  readonly store: CampaignStore
  /** The embedded development IDP, while it runs (`dev_idp` on). */
  devIdp?: DevIdp
  /** The provider client and the application's base URL, set at start. */
  login?: { idp: IdpClient, appUrl: URL, issuer: string }
}

declare module '../../kernel/index.js' {
  interface Services { campaign: CampaignService }
}

export default definePlugin({
  name: 'campaign',
  version: '0.1.0',
  product: 'campaign',
  description: 'Campaign operations app: OIDC + PKCE login, sessions, roles, CBOR server functions, web UI.',
  // The generative provider's key may be kept in the secret store; dev-idp runs the development
  // identity provider when [campaign].dev_idp asks for it.
  optionalDependsOn: ['secrets', 'dev-idp'],
  config: campaignSection,
  env: CAMPAIGN_ENV,
  listeners: [{ name: 'app', port: 6882, description: 'the campaign web application' }],

  async setup (ctx) {
    // Imported here rather than above: the CLI reads every plugin's definition for its commands and
    // config schema, and should not load the campaign runtime to do so.
    const { setupCampaign } = await import('./runtime.js')
    return setupCampaign(ctx)
  },

  async start (ctx, service) {
    const { startCampaign } = await import('./runtime.js')
    await startCampaign(ctx, service)
  },

  async stop (_ctx, service) {
    await service.sessions.close()
    await service.store.close()
    await service.devIdp?.close()
    service.devIdp = undefined
    service.login = undefined
  },

  commands (cli) {
    cli.serverOption({ flags: '--dev', description: 'development: sign in to the campaign app through an embedded identity provider on loopback', variable: 'CAMPAIGN_DEV_IDP' })
  }
})
