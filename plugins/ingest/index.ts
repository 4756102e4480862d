// ingest: the device telemetry server on the telemetry listener — chunk ingest over the wire format of
// docs/chunk-format.md, devices, groups, OTA targets, faults, metrics, live events, alerts, retention.
import cors from '@fastify/cors'
import { definePlugin } from '../../kernel/index.js'
import { findOfflineDevices, WebhookNotifier } from './alerts.js'
import type { TelemetryEvent } from './apply.js'
import { BasicAuthenticator } from './auth/basic.js'
import { installGuard } from './auth/guard.js'
import { JwtAuthenticator } from './auth/jwt.js'
import { hashPassword } from './auth/passwords.js'
import { generatedSecret } from './auth/secret-file.js'
import { ADMIN_PASSWORD_FILE, telemetryCommands } from './commands.js'
import { IngestConfig, INGEST_ENV, ssoEnabled } from './config.js'
import { EventLog } from './event-log.js'
import { Ingestor } from './ingestor.js'
import { RateLimiter } from './rate-limit.js'
import { deleteExpired } from './retention.js'
import { deviceRoutes } from './routes/devices.js'
import { fleetRoutes } from './routes/fleet.js'
import { ingestRoutes } from './routes/ingest.js'
import { serviceRoutes } from './routes/service.js'
import { TelemetryStore } from './store.js'
import type { Telemetry } from './telemetry.js'
import { Reassembler } from './wire/reassembly.js'
import { resolve } from 'node:path'

/** What other plugins (and tests) may use. */
export interface IngestService {
  readonly telemetry: Telemetry
  /** Run the offline check now (it also runs every 60 s). */
  checkOffline(now?: number): Promise<TelemetryEvent[]>
  /** Apply retention now (it also runs every hour); returns the entries deleted. */
  applyRetention(now?: number): Promise<number>
  /** Drop stale fragments now (also every 60 s). */
  expireFragments(now?: number): Promise<number>
}

declare module '../../kernel/index.js' {
  interface Services { ingest: IngestService }
  interface BerthEvents { 'telemetry.event': TelemetryEvent }
}

export default definePlugin({
  name: 'ingest',
  version: '0.1.0',
  description: 'Device telemetry ingest: chunks, devices, faults, metrics, alerts.',
  config: IngestConfig,
  env: INGEST_ENV,

  setup (ctx) {
    const settings = ctx.config
    const store = new TelemetryStore(ctx.store)
    const apiKey = settings.api_key !== '' ? settings.api_key : generatedSecret(ctx.stateDir, 'ingest-api-key')
    const users = settings.users.length > 0
      ? settings.users
      : [{ name: 'admin', role: 'admin' as const, password: hashPassword(generatedSecret(ctx.stateDir, ADMIN_PASSWORD_FILE)) }]
    const authenticator = ssoEnabled(settings) ? new JwtAuthenticator(settings.sso) : new BasicAuthenticator(users)
    const reassembler = new Reassembler(store.fragments, {
      maxChunks: settings.fragments.max_chunks, maxBytes: settings.fragments.max_bytes, ttlMs: settings.fragments.ttl_seconds * 1000
    })
    const events = new EventLog()
    const notifier = new WebhookNotifier(settings.alert_webhooks, ctx.log)
    ctx.onClose(() => { notifier.stop() })
    const chunks = ctx.metrics.counter({ name: 'berth_ingest_chunks_total', help: 'Chunks accepted, by type.', labelNames: ['type'] })
    const alerts = ctx.metrics.counter({ name: 'berth_ingest_alerts_total', help: 'Alerts raised, by kind.', labelNames: ['kind'] })
    ctx.metrics.gauge({
      name: 'berth_ingest_devices', help: 'Known devices, by state.', labelNames: ['state'],
      collect () {
        let offline = 0
        let all = 0
        for (const { value } of store.devices.getRange()) {
          all++
          if (value.offline) offline++
        }
        this.set({ state: 'online' }, all - offline)
        this.set({ state: 'offline' }, offline)
      }
    })
    ctx.metrics.gauge({
      name: 'berth_ingest_reassembly_bytes', help: 'Fragment bytes waiting for the rest of their chunk.',
      collect () { this.set(reassembler.pending.bytes) }
    })

    const publish = (list: readonly TelemetryEvent[]): void => {
      for (const event of list) {
        events.publish(event)
        ctx.events.emit('telemetry.event', event)
        if (event.kind === 'chunk') chunks.labels(event.type).inc()
        if (event.kind === 'device.offline') {
          alerts.labels(event.kind).inc()
          notifier.notify(event)
        }
      }
    }

    const telemetry: Telemetry = {
      settings,
      store,
      ingestor: new Ingestor(store, reassembler, { autoRegister: settings.auto_register }),
      events,
      authenticator,
      apiKey,
      elfDir: settings.elf_dir !== '' ? resolve(ctx.cwd, settings.elf_dir) : resolve(ctx.stateDir, 'elf'),
      stateDir: ctx.stateDir,
      frames: ctx.metrics.counter({ name: 'berth_ingest_frames_total', help: 'Frames received, by outcome.', labelNames: ['status'] }),
      metrics: ctx.metrics,
      publish
    }

    const limiter = settings.rate_limit.enabled ? new RateLimiter(settings.rate_limit) : undefined
    ctx.http('telemetry', async app => {
      await app.register(cors, { origin: settings.cors_origin === '*' ? '*' : settings.cors_origin.split(',').map(o => o.trim()) })
      app.addContentTypeParser('application/octet-stream', { parseAs: 'buffer' }, (_request, body, done) => { done(null, body) })
      installGuard(app, authenticator, apiKey)
      limiter?.install(app, ['/ingest', '/auth'])
      ingestRoutes(app, telemetry)
      deviceRoutes(app, telemetry)
      fleetRoutes(app, telemetry)
      serviceRoutes(app, telemetry)
    })

    const service: IngestService = {
      telemetry,
      checkOffline: async (now = Date.now()) => {
        const offline = await findOfflineDevices(store, settings.offline_after_seconds * 1000, now)
        publish(offline)
        return offline
      },
      applyRetention: async (now = Date.now()) => await deleteExpired(store, settings.retention_days, now),
      expireFragments: async (now = Date.now()) => await store.transaction(() => reassembler.expire(now))
    }
    ctx.schedule.every('offline-check', 60_000, async () => { await service.checkOffline() })
    ctx.schedule.every('retention', 3_600_000, async () => { await service.applyRetention() })
    ctx.schedule.every('fragment-expiry', 60_000, async () => { await service.expireFragments() })
    if (limiter !== undefined) ctx.schedule.every('rate-limit-sweep', 60_000, () => { limiter.sweep() })
    return service
  },

  commands: telemetryCommands
})
