// The ingest plugin's runtime: stores, authentication, the wire-format ingestor, routes on the
// telemetry listener, metrics and scheduled jobs. Imported by setup only, so the CLI stays light.
import cors from '@fastify/cors'
import { findOfflineDevices, WebhookNotifier } from './alerts.js'
import type { TelemetryEvent } from './apply.js'
import { BasicAuthenticator } from './auth/basic.js'
import { installGuard } from './auth/guard.js'
import { JwtAuthenticator, realmEndpoints } from './auth/jwt.js'
import { hashPassword } from './auth/passwords.js'
import { generatedSecret, hashedSecret } from './auth/secret-file.js'
import { clientAddress } from './client-address.js'
import { ADMIN_PASSWORD_FILE } from './commands.js'
import { ssoEnabled, type IngestSettings } from './config.js'
import { settleElfFiles } from './elf-files.js'
import { EventLog } from './event-log.js'
import { Ingestor } from './ingestor.js'
import { ingestKeys, RateLimiter, sendRetryAfter } from './rate-limit.js'
import { deleteExpired } from './retention.js'
import { dashboardRoutes } from './routes/dashboard.js'
import { deviceRoutes } from './routes/devices.js'
import { coredumpRoutes } from './routes/coredumps.js'
import { fleetRoutes } from './routes/fleet.js'
import { issueRoutes } from './routes/issues.js'
import { symbolRoutes } from './routes/symbols.js'
import { exportRoutes } from './routes/export.js'
import { checkReleases, otaRoutes } from './routes/ota.js'
import { alertRuleRoutes } from './routes/alert-rules.js'
import { Alerting } from './alerting.js'
import { ingestRoutes } from './routes/ingest.js'
import { serviceRoutes } from './routes/service.js'
import type { TelemetryStorage } from './storage/contract.js'
import { LmdbStorage } from './storage/lmdb.js'
import { TelemetryStore } from './store.js'
import type { Telemetry } from './telemetry.js'
import { Reassembler, type LostEvent } from './wire/reassembly.js'
import { SharedReassembler } from './wire/shared-reassembly.js'
import { join, resolve } from 'node:path'
import { developmentOnly, StartupError, type PluginContext } from '../../kernel/index.js'
import { reachabilityCheck, redactUrl } from '../../kernel/runtime-api.js'
import { devIdpFor } from '../dev-idp/index.js'
import { codecs } from '../../wasm/index.js'
import type { IngestService } from './index.js'

/** How often retention runs (on one node of those sharing a PostgreSQL database). */
const RETENTION_MS = 3_600_000

/** The methods of the telemetry API's routes, as CORS preflights allow them. */
const API_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE']

/** The fleet's roles, as realm roles, for the development identity provider's users. */
const FLEET_REALM_ROLES = ['fleet-admin', 'fleet-provisioner', 'fleet-viewer']
/** The development identity provider's passwords, in the state directory. */
const DEV_IDP_FILE = 'telemetry-dev-idp-passwords'
/** How often the health report asks whether the identity provider's realm answers (SSO mode). */
const IDP_CHECK_MS = 30_000

/**
 * With [ingest].sso.dev_idp (refused when NODE_ENV=production): the development identity provider of
 * the dev-idp plugin (oidc-provider, Keycloak paths) on loopback with one user per fleet role, the settings that
 * point SSO at it, and how to sign in through it.
 */
async function withDevIdp (ctx: PluginContext<IngestSettings>): Promise<{ settings: IngestSettings, signIn?: string }> {
  const settings = ctx.config
  if (!settings.sso.dev_idp) return { settings }
  developmentOnly(ctx.production, '[ingest].sso.dev_idp')
  if (settings.sso.idp_url !== '') throw new StartupError('[ingest].sso.dev_idp runs its own identity provider; leave sso.idp_url (IDP_URL) empty, or turn dev_idp off')
  const realm = settings.sso.realm === '' ? 'fleet' : settings.sso.realm
  const clientId = settings.sso.client_id === '' ? 'dashboard' : settings.sso.client_id
  const dashboard = (): string[] => [new URL('/dashboard/', ctx.address('telemetry')).href]
  const embedded = await devIdpFor(ctx, '[ingest].sso.dev_idp').start({
    file: DEV_IDP_FILE, realm, clientId, redirectUris: dashboard, postLogoutRedirectUris: dashboard, port: settings.sso.dev_idp_port, roles: FLEET_REALM_ROLES, domain: 'fleet.test'
  })
  ctx.onClose(async () => { await embedded.idp.close() })
  return { settings: { ...settings, sso: { ...settings.sso, idp_url: embedded.idp.url, realm, client_id: clientId } }, signIn: embedded.signIn }
}

/** How a person signs in to the dashboard, for the start-up summary. */
function dashboardSignIn (settings: IngestSettings, stateDir: string): string {
  if (ssoEnabled(settings)) return `sign in through ${realmEndpoints(settings.sso).issuer}`
  if (settings.users.length > 0) return `sign in as one of [ingest].users (${settings.users.map(user => user.name).join(', ')})`
  return `sign in as admin with the password in ${join(stateDir, ADMIN_PASSWORD_FILE)}`
}

export async function setupIngest (ctx: PluginContext<IngestSettings>): Promise<IngestService> {
  const devIdp = await withDevIdp(ctx)
  const settings = devIdp.settings
  const store = new TelemetryStore(ctx.store)
  const storage = await openStorage(ctx, store)
  reportCodecs(ctx, storage)
  const elfDir = settings.elf_dir !== '' ? resolve(ctx.cwd, settings.elf_dir) : resolve(ctx.stateDir, 'elf')
  await settleElfFiles(storage, store, elfDir, ctx.log)
  const indexed = await storage.open()
  if (indexed > 0) ctx.log.info({ faults: indexed }, 'faults stored before the pending index was kept are indexed for symbolication')
  const apiKey = settings.api_key !== '' ? settings.api_key : generatedSecret(ctx.stateDir, 'ingest-api-key')
  const users = settings.users.length > 0
    ? settings.users
    : [{ name: 'admin', role: 'admin' as const, password: hashedSecret(ctx.stateDir, ADMIN_PASSWORD_FILE, hashPassword) }]
  const passwordChecks = ctx.metrics.counter({ name: 'berth_ingest_password_checks_total', help: 'Basic-auth password checks, by outcome (refused: the client address had no checks left).', labelNames: ['outcome'] })
  const clientOf = clientAddress(settings.rate_limit.trusted_proxies)
  const basic = ssoEnabled(settings) ? undefined : new BasicAuthenticator(users, settings.auth_failures, clientOf, outcome => { passwordChecks.labels(outcome).inc() })
  const authenticator = basic ?? new JwtAuthenticator(settings.sso)
  const lostFragments = ctx.metrics.counter({ name: 'berth_ingest_fragments_lost_total', help: 'Chunks dropped incomplete, older than fragments.ttl_seconds (dropped), and whole chunks asked for again because a later fragment came for one (resend).', labelNames: ['event'] })
  const fragmentLimits = { maxChunks: settings.fragments.max_chunks, maxBytes: settings.fragments.max_bytes, ttlMs: settings.fragments.ttl_seconds * 1000 }
  const countLost = (event: LostEvent): void => {
    lostFragments.labels(event).inc()
    if (event === 'dropped') ctx.log.warn('an incomplete chunk was dropped, older than fragments.ttl_seconds; its device is asked for it again at its next fragment')
  }
  const reassembler = new Reassembler(store.fragments, store.lostFragments, fragmentLimits, countLost)
  // Nodes sharing a PostgreSQL database share the fragments waiting there: a chunk's may reach any of them.
  const shared = storage.backend === 'postgres' ? new SharedReassembler(storage, fragmentLimits, countLost) : undefined
  const events = new EventLog()
  const notifier = new WebhookNotifier(settings.alert_webhooks, ctx.log, ctx.outbound)
  ctx.onClose(() => { notifier.stop() })
  const alerting = new Alerting(storage, notifier, ctx.log)
  // Grouped connectivity notifications still waiting go out before the notifier stops.
  ctx.onClose(() => { alerting.flush() })
  const chunks = ctx.metrics.counter({ name: 'berth_ingest_chunks_total', help: 'Chunks accepted, by type.', labelNames: ['type'] })
  const alerts = ctx.metrics.counter({ name: 'berth_ingest_alerts_total', help: 'Alerts raised, by kind.', labelNames: ['kind'] })
  ctx.metrics.gauge({
    name: 'berth_ingest_devices', help: 'Known devices, by state.', labelNames: ['state'],
    async collect () {
      let offline = 0
      let all = 0
      for await (const value of storage.devices()) {
        all++
        if (value.offline) offline++
      }
      this.set({ state: 'online' }, all - offline)
      this.set({ state: 'offline' }, offline)
    }
  })
  ctx.metrics.gauge({
    name: 'berth_ingest_reassembly_bytes', help: 'Fragment bytes waiting for the rest of their chunk.',
    collect () { this.set((shared ?? reassembler).pending.bytes) }
  })

  const publish = (list: readonly TelemetryEvent[]): void => {
    if (list.length > 0) storage.announce(list).catch((err: unknown) => { ctx.log.warn({ err }, 'events could not be told to the other ingest nodes') })
    for (const event of list) {
      events.publish(event)
      ctx.events.emit('telemetry.event', event)
      if (event.kind === 'chunk') chunks.labels(event.type).inc()
      if (event.kind === 'device.offline') {
        alerts.labels(event.kind).inc()
        notifier.notify(event)
      }
      if (event.kind === 'device.offline' || event.kind === 'device.online') {
        alerting.onEvent(event).catch((err: unknown) => { ctx.log.warn({ err, device: event.device }, 'connectivity alert rules could not be applied') })
      }
    }
  }

  const telemetry: Telemetry = {
    settings,
    storage,
    store,
    ingestor: new Ingestor(storage, store, reassembler, { autoRegister: settings.auto_register }, shared),
    events,
    authenticator,
    apiKey,
    elfDir,
    stateDir: ctx.stateDir,
    frames: ctx.metrics.counter({ name: 'berth_ingest_frames_total', help: 'Frames received, by outcome.', labelNames: ['status'] }),
    sequenceReuses: ctx.metrics.counter({ name: 'berth_ingest_sequence_reuses_total', help: 'Chunks stored under a sequence number that held other content before (a new boot reusing numbers, or a device reusing them).' }),
    metrics: ctx.metrics,
    stopping: ctx.stopping,
    publish
  }

  // Events of the other nodes sharing the storage reach this node's live stream (their alerts, metrics and symbolication stay theirs).
  await storage.listen(heard => { for (const event of heard) events.publish(event) })

  const limits = settings.rate_limit.enabled ? { auth: new RateLimiter(settings.rate_limit), ingest: new RateLimiter(settings.rate_limit) } : undefined
  ctx.http('telemetry', async app => {
    // Not strict: an OPTIONS request without the preflight headers gets the same 204, not a text/plain 400.
    await app.register(cors, { origin: settings.cors_origin === '*' ? '*' : settings.cors_origin.split(',').map(o => o.trim()), methods: API_METHODS, strictPreflight: false })
    app.addContentTypeParser('application/octet-stream', { parseAs: 'buffer' }, (_request, body, done) => { done(null, body) })
    sendRetryAfter(app)
    installGuard(app, authenticator, apiKey)
    limits?.auth.limit(app, '/auth', 'onRequest', request => [clientOf(request)])
    limits?.ingest.limit(app, '/ingest', 'preHandler', request => ingestKeys(request, clientOf))
    ingestRoutes(app, telemetry)
    deviceRoutes(app, telemetry)
    coredumpRoutes(app, telemetry)
    fleetRoutes(app, telemetry)
    issueRoutes(app, telemetry)
    symbolRoutes(app, telemetry)
    exportRoutes(app, telemetry)
    otaRoutes(app, telemetry)
    alertRuleRoutes(app, telemetry, ctx.outbound)
    serviceRoutes(app, telemetry)
    dashboardRoutes(app)
  })

  const service: IngestService = {
    telemetry,
    signIn: devIdp.signIn ?? dashboardSignIn(settings, ctx.stateDir),
    evaluateAlerts: async (now = Date.now()) => await alerting.evaluate(now),
    checkOffline: async (now = Date.now()) => {
      const offline = await findOfflineDevices(storage, settings.offline_after_seconds * 1000, now)
      publish(offline)
      return offline
    },
    applyRetention: async (now = Date.now()) => await deleteExpired(storage, settings.retention_days, now),
    expireFragments: async (now = Date.now()) => shared !== undefined ? await shared.expire(now) : await reassembler.settle(store.transaction(() => reassembler.expire(now)))
  }
  // Shared with other nodes on PostgreSQL: one of them runs each check (storage.scheduled).
  const offlineCheckMs = settings.offline_check_seconds * 1000
  ctx.schedule.every('offline-check', offlineCheckMs, async () => { await storage.scheduled('offline-check', offlineCheckMs, async () => await service.checkOffline()) })
  const alertCheckMs = settings.alert_check_seconds * 1000
  ctx.schedule.every('alert-rules', alertCheckMs, async () => { await storage.scheduled('alert-rules', alertCheckMs, async () => await alerting.evaluate()) })
  const otaCheckMs = settings.ota_check_seconds * 1000
  ctx.schedule.every('ota-releases', otaCheckMs, async () => { await storage.scheduled('ota-releases', otaCheckMs, async () => await checkReleases(telemetry)) })
  ctx.schedule.every('fragment-expiry', 60_000, async () => { await service.expireFragments() })
  ctx.schedule.every('rate-limit-sweep', 60_000, () => {
    limits?.auth.sweep()
    limits?.ingest.sweep()
    basic?.sweep()
  })
  return service
}

/**
 * When the plugin starts: the dashboard's address and sign-in for the start-up summary; retention runs
 * (on one node of those sharing a PostgreSQL database, unless another ran it in the last half hour)
 * once in the background (start does not wait for it, and a failure is logged, not fatal: a server
 * restarted more often than hourly still prunes), then hourly; in SSO mode the health report says
 * whether the identity provider's realm answers (every 30 s).
 */
export function startIngest (ctx: PluginContext<IngestSettings>, service: IngestService): void {
  ctx.note(`telemetry dashboard: ${new URL('/dashboard/', ctx.address('telemetry')).href} — ${service.signIn}`)
  const { storage } = service.telemetry
  const retention = async (): Promise<void> => { await storage.scheduled('retention', RETENTION_MS, async () => await service.applyRetention()) }
  ctx.track(retention()).catch((err: unknown) => { ctx.log.error({ err }, 'retention at start failed; it runs again within the hour') })
  ctx.schedule.every('retention', RETENTION_MS, retention)
  const settings = service.telemetry.settings
  if (ssoEnabled(settings)) {
    const discovery = `${realmEndpoints(settings.sso).issuer}/.well-known/openid-configuration`
    const checkIdp = async (): Promise<void> => { ctx.check('identity-provider', await reachabilityCheck(discovery, 'the dashboard cannot sign anyone in until it answers')) }
    ctx.schedule.every('identity-provider-check', IDP_CHECK_MS, checkIdp)
    void ctx.track(checkIdp())
  }
}

/**
 * The telemetry's storage: PostgreSQL when [ingest].database_url is set (its schema migrated now), else
 * the kernel store. Closed when the plugin stops.
 */
async function openStorage (ctx: PluginContext<IngestSettings>, store: TelemetryStore): Promise<TelemetryStorage> {
  const url = ctx.config.database_url
  if (url === '') return new LmdbStorage(store)
  const { PostgresStorage } = await import('./storage/postgres.js')
  const storage = new PostgresStorage(url)
  ctx.onClose(async () => { await storage.close() })
  try {
    await storage.migrate()
  } catch (err) {
    throw new StartupError(`[ingest].database_url: the PostgreSQL database at ${redactUrl(url)} could not be prepared: ${(err as Error).message}`)
  }
  return storage
}

/** Which codec implementation decodes chunks (and where the telemetry is kept), in the health report and the metrics; loudly when the codecs are the slow fallback. */
function reportCodecs (ctx: PluginContext<IngestSettings>, storage: TelemetryStorage): void {
  if (codecs.fallbackReason !== undefined) {
    ctx.log.warn({ reason: codecs.fallbackReason }, 'the WASM codecs could not load: chunks are decoded by the TypeScript reference implementation, several times slower')
  }
  ctx.report({ codecs: codecs.backend, storage: storage.backend })
  ctx.metrics.gauge({ name: 'berth_ingest_codecs_info', help: 'The codec implementation decoding chunks: 1 for the active one (wasm, or reference when WASM could not load).', labelNames: ['implementation'] })
    .set({ implementation: codecs.backend }, 1)
}
