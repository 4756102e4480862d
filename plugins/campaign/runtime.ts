// The campaign plugin's runtime: sessions, pending logins, the modules (started through their
// registry, modules/catalogue.ts), routes on the app listener, and the identity provider client at
// start. Imported by setup only.
import { ApiTokens, type ApiTokenRecord } from './api-tokens.js'
import { accessControl } from './access.js'
import { CBOR_ERRORS } from './cbor.js'
import { authRoutes } from './auth-routes.js'
import { functionRoutes } from './function-routes.js'
import { sameOriginOnly, securityHeaders } from './page-security.js'
import { FunctionRegistry } from './functions.js'
import { generatorFrom, type SecretResolver } from './language/generator-settings.js'
import { startModules } from './modules/catalogue.js'
import { PostStore } from './records/posts.js'
import { ROLES } from './roles.js'
import { AuditedStore, AuditLog } from './audit.js'
import { IdpClient } from './oidc-client.js'
import { sessionBackend } from './session-backend.js'
import { uiRoutes } from './ui-routes.js'
import type { CampaignStore } from './store/contract.js'
import { LmdbCampaignStore } from './store/lmdb-store.js'
import { messageOf, type PluginContext } from '../../kernel/index.js'
import { reachabilityCheck } from '../../kernel/runtime-api.js'
import { devIdpFor } from '../dev-idp/index.js'
import type { CampaignService } from './index.js'
import { checkSettings, DEV_IDP_SETTING, signInConfigured, type CampaignConfig } from './settings.js'

const SWEEP_MS = 60_000
/** How often the health report asks whether the identity provider answers. */
const IDP_CHECK_MS = 30_000
/** The embedded development IDP's passwords, in the state directory. */
const DEV_IDP_FILE = 'campaign-dev-idp-passwords'
/** What to do when no identity provider is configured. */
const REMEDY = `set [campaign].idp_url (CAMPAIGN_IDP_URL), or, for development, turn on ${DEV_IDP_SETTING}`

export async function setupCampaign (ctx: PluginContext<CampaignConfig>): Promise<CampaignService> {
  const config = ctx.config
  checkSettings(config, ctx.production)
  const startedAt = Date.now()
  const backend = await sessionBackend(ctx)
  const { sessions, pending, auth } = backend
  const storage = await campaignStore(ctx)
  const store = new AuditedStore(storage)
  const audit = new AuditLog(storage)
  const tokens = new ApiTokens(store.table<ApiTokenRecord>('api-tokens'), store.table<string>('api-token-uses'))
  auth.acceptTokens(async bearer => await tokens.session(bearer))
  const secrets = ctx.useOptional('secrets') as SecretResolver | undefined
  // Unsubscribe links and the reply webhook's default URL name the public address, as the login callback does.
  const appUrl = (): string => config.app_url !== '' ? config.app_url : ctx.address('app').href
  const registry = new FunctionRegistry()
  const bucketsFailed = (err: unknown): void => { ctx.log.warn({ err: messageOf(err) }, 'the sentiment buckets could not be built from the stored posts; summaries read the posts until a build succeeds') }
  const posts = new PostStore(store, config.max_posts, bucketsFailed)
  // A store with posts from before the buckets builds them in the background; summaries read the posts meanwhile.
  void ctx.track(posts.prepare().catch(bucketsFailed))
  const service: CampaignService = { registry, posts, sessions: backend, store }
  const modules = await startModules({
    ctx,
    store,
    audit,
    posts,
    registry,
    auth,
    generator: generatorFrom(config, secrets),
    secrets,
    tokens,
    appUrl,
    issuer: () => service.login?.issuer ?? '',
    startedAt,
    sessionCounts: async () => ({ sessions: await sessions.count(), pending_logins: await pending.count() })
  })

  const access = accessControl(auth, registry)
  ctx.http('app', async app => {
    app.addHook('onRequest', access)
    app.addHook('onSend', securityHeaders)
    await app.register(authRoutes({
      pending,
      auth,
      log: ctx.log,
      login: () => {
        if (!signInConfigured(config)) return undefined
        if (service.login === undefined) throw new Error('the campaign plugin has not started')
        return service.login
      },
      remedy: REMEDY,
      onLogin: modules.onLogin
    }))
    await app.register(uiRoutes(registry.modules))
    for (const routes of modules.routes) await app.register(routes)
  })
  // Every failure under /api is answered in CBOR, unknown routes and refused requests included.
  ctx.http('app', async app => {
    app.addHook('onRequest', sameOriginOnly(config.app_url))
    app.addHook('onRequest', access)
    app.addHook('onSend', securityHeaders)
    await app.register(functionRoutes({ registry, auth, maxRequestBytes: config.max_request_bytes }))
  }, { prefix: '/api', errors: CBOR_ERRORS })
  ctx.http('app', async app => {
    app.addHook('onRequest', access)
    app.addHook('onSend', securityHeaders)
    await app.register(modules.exports)
  }, { prefix: '/export' })
  ctx.schedule.every('sweep-sessions', SWEEP_MS, () => { backend.sweep() })
  if (config.dev_fallback) ctx.log.warn('development fallback on: check-auth reports an admin when nobody is signed in')
  return service
}

/** The modules' store: PostgreSQL with [campaign].database_url, else the plugin's LMDB databases. */
async function campaignStore (ctx: PluginContext<CampaignConfig>): Promise<CampaignStore> {
  const url = ctx.config.database_url
  if (url === '') return new LmdbCampaignStore(ctx.store)
  const { PostgresCampaignStore } = await import('./store/postgres-store.js')
  return await PostgresCampaignStore.open(url, '[campaign].database_url (CAMPAIGN_DATABASE_URL)')
}

export async function startCampaign (ctx: PluginContext<CampaignConfig>, service: CampaignService): Promise<void> {
  const config = ctx.config
  const appUrl = config.app_url !== '' ? config.app_url : ctx.address('app').href
  const redirectUri = new URL('/auth/callback', appUrl).href
  const app = `campaign app: ${appUrl}`
  if (!signInConfigured(config)) {
    ctx.log.warn(`nobody can sign in to the campaign app: no identity provider is configured; ${REMEDY}`)
    ctx.report({ sign_in: 'off: no identity provider' })
    ctx.note(`${app} — nobody can sign in: no identity provider is configured; ${REMEDY}`)
    return
  }
  let idpUrl = config.idp_url.replace(/\/+$/, '')
  let devSignIn: string | undefined
  if (config.dev_idp) {
    const embedded = await devIdpFor(ctx, DEV_IDP_SETTING).start({
      file: DEV_IDP_FILE,
      roles: ROLES,
      domain: 'campaign.test',
      realm: config.idp_realm,
      clientId: config.idp_client_id,
      redirectUris: [redirectUri],
      postLogoutRedirectUris: [appUrl],
      port: config.dev_idp_port
    })
    service.devIdp = embedded.idp
    idpUrl = embedded.idp.url
    devSignIn = embedded.signIn
  }
  const issuer = `${idpUrl}/realms/${config.idp_realm}`
  ctx.note(`${app} — ${devSignIn ?? `sign in through ${issuer}`}`)
  service.login = {
    issuer,
    appUrl: new URL(appUrl),
    idp: new IdpClient({ issuer: new URL(issuer), clientId: config.idp_client_id, redirectUri, postLogoutRedirectUri: appUrl })
  }
  const discovery = `${issuer}/.well-known/openid-configuration`
  const checkIdp = async (): Promise<void> => { ctx.check('identity-provider', await reachabilityCheck(discovery, 'nobody can sign in until it answers; open sessions go on')) }
  ctx.schedule.every('identity-provider-check', IDP_CHECK_MS, checkIdp)
  void ctx.track(checkIdp())
}

