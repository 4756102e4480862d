// ingest: the device telemetry server on the telemetry listener — chunk ingest over the wire format of
// docs/chunk-format.md, devices, groups, OTA targets, faults, metrics, live events, alerts, retention.
import { definePlugin } from '../../kernel/index.js'
import type { TelemetryEvent } from './apply.js'
import { telemetryCommands } from './commands.js'
import { ingestSection, INGEST_ENV } from './config.js'
import type { Telemetry } from './telemetry.js'
import type { AlertRecord } from './alert-rules.js'

/** What other plugins (and tests) may use. */
export interface IngestService {
  readonly telemetry: Telemetry
  /** How a person signs in to the dashboard, for the start-up summary (`berth server` on a terminal). */
  readonly signIn: string
  /** Run the offline check now (it also runs every `offline_check_seconds`, 60 by default). */
  checkOffline(now?: number): Promise<TelemetryEvent[]>
  /** Evaluate the metric and crash-rate alert rules now (the schedule does it every alert_check_seconds). */
  evaluateAlerts(now?: number): Promise<AlertRecord[]>
  /** Apply retention now (it also runs when the plugin starts, and every hour); returns the entries deleted. */
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
  product: 'telemetry',
  description: 'Device telemetry ingest: chunks, devices, faults, metrics, alerts.',
  // dev-idp runs the development identity provider when [ingest].sso.dev_idp asks for it.
  optionalDependsOn: ['dev-idp'],
  config: ingestSection,
  env: INGEST_ENV,
  listeners: [{ name: 'telemetry', port: 6881, description: 'device ingest, the telemetry API and its dashboard (/dashboard/)' }],

  async setup (ctx) {
    // Imported here rather than above: the CLI reads every plugin's definition for its commands and
    // config schema, and should not load the ingest runtime to do so.
    const { setupIngest } = await import('./runtime.js')
    return await setupIngest(ctx)
  },

  async start (ctx, service) {
    const { startIngest } = await import('./runtime.js')
    startIngest(ctx, service)
  },

  commands: telemetryCommands
})
