// What the telemetry routes share: settings, the storage, the ingestor, the live event log, the auth
// seam, and the ingest counters.
import type { Counter } from 'prom-client'
import type { PluginMetrics } from '../../kernel/index.js'
import type { TelemetryEvent } from './apply.js'
import type { Authenticator } from './auth/principal.js'
import type { IngestSettings } from './config.js'
import type { EventLog } from './event-log.js'
import type { Ingestor } from './ingestor.js'
import type { TelemetryStorage } from './storage/contract.js'
import type { TelemetryStore } from './store.js'

export interface Telemetry {
  readonly settings: IngestSettings
  /** Where the telemetry is kept: LMDB or PostgreSQL (storage/). */
  readonly storage: TelemetryStorage
  /** The kernel store's databases: fragments waiting for their chunk (node-local), and what backups carry on LMDB. */
  readonly store: TelemetryStore
  readonly ingestor: Ingestor
  readonly events: EventLog
  readonly authenticator: Authenticator
  /** The key devices present (configured or generated). */
  readonly apiKey: string
  /** Absolute directory of uploaded ELF files. */
  readonly elfDir: string
  /** Scratch directory for backups. */
  readonly stateDir: string
  readonly frames: Counter<'status'>
  /** Chunks stored under a sequence that held other content before (new boots of devices without entropy). */
  readonly sequenceReuses: Counter
  readonly metrics: PluginMetrics
  /** Aborted when the server begins to stop: live event streams end then. */
  readonly stopping: AbortSignal
  /** Publish events after their transaction committed. */
  publish(events: readonly TelemetryEvent[]): void
}
