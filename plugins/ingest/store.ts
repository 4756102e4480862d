// Telemetry state in LMDB: devices and their keys, received chunks (for idempotency), faults, metrics,
// reboots, traces, groups, OTA targets and ELF files. Time-series keys start with [device, time], so a
// device's time range is one ordered range read.
import type { Database } from 'lmdb'
import type { PluginStore } from '../../kernel/index.js'
import type { StoredMark } from './chunk-marks.js'
import { DeviceLocks } from './device-locks.js'
import type { FaultRecord, MetricEntry, RebootReason } from './wire/payloads.js'

export interface Device {
  id: string
  name: string
  group: string | null
  serial: string | null
  hardware_version: string | null
  software_type: string | null
  software_version: string | null
  build_id: string | null
  /** True once registered through the API (false for devices registered by their first chunk). */
  registered: boolean
  encrypted: boolean
  created_at: number
  last_seen: number | null
  boot_count: number | null
  offline: boolean
}

export interface StoredFault extends FaultRecord {
  device: string
  sequence: number
  received_at: number
  software_version: string | null
  build_id: string | null
  /** `<function> at <file>:<line>` once symbolicated. */
  symbol: string | null
}

export interface StoredMetric extends MetricEntry {
  device: string
  sequence: number
  received_at: number
}

export interface StoredReboot extends RebootReason {
  device: string
  sequence: number
  received_at: number
}

export interface StoredTrace {
  device: string
  sequence: number
  received_at: number
  uptime_ms: number
  dropped: number
  text: string
}

export interface Group {
  name: string
  description: string
  created_at: number
  updated_at: number
}

export interface OtaTarget {
  id: string
  group: string | null
  software_type: string
  version: string
  build_id: string | null
  url: string | null
  created_at: number
}

export interface ElfFile {
  build_id: string
  software_type: string | null
  software_version: string | null
  size: number
  file: string
  uploaded_at: number
}

/** A chunk whose fragments are still arriving. */
export interface PendingChunk {
  type: number
  flags: number
  count: number
  parts: Array<Uint8Array | null>
  bytes: number
  first_at: number
  /** Some fragment arrived with the retransmission flag (version 2). */
  retransmitted?: boolean
}

/** [device, received_at, sequence] (metrics add the entry index). */
export type SeriesKey = Array<string | number>

export class TelemetryStore {
  readonly devices: Database<Device, string>
  readonly keys: Database<Uint8Array, string>
  /** Idempotency marks of stored chunks, by seenKey(). */
  readonly seen: Database<StoredMark, string>
  readonly faults: Database<StoredFault, SeriesKey>
  readonly metrics: Database<StoredMetric, SeriesKey>
  readonly reboots: Database<StoredReboot, SeriesKey>
  readonly traces: Database<StoredTrace, SeriesKey>
  readonly groups: Database<Group, string>
  readonly ota: Database<OtaTarget, string>
  readonly elves: Database<ElfFile, string>
  readonly versions: Database<string, string>
  readonly fragments: Database<PendingChunk, string>
  /** Held by every read-modify-write of a device's records. */
  readonly locks = new DeviceLocks()
  readonly #store: PluginStore

  constructor (store: PluginStore) {
    this.#store = store
    this.devices = store.db('devices')
    this.keys = store.db('keys', { encoding: 'binary' })
    this.seen = store.db('seen')
    this.faults = store.db('faults')
    this.metrics = store.db('metrics')
    this.reboots = store.db('reboots')
    this.traces = store.db('traces')
    this.groups = store.db('groups')
    this.ota = store.db('ota')
    this.elves = store.db('elves')
    this.versions = store.db('versions')
    this.fragments = store.db('fragments')
  }

  /** Run `fn` in one write transaction; resolves after the commit. */
  async transaction<T> (fn: () => T): Promise<T> {
    return await this.#store.transaction(fn)
  }

  async backup (path: string): Promise<void> {
    await this.#store.backup(path)
  }

  /** The time-series databases, for range queries and retention. */
  get series (): Array<Database<{ received_at: number }, SeriesKey>> {
    return [this.faults, this.metrics, this.reboots, this.traces]
  }
}

/** Key under which a stored chunk is remembered for idempotency (chunk-marks.ts). */
export function seenKey (device: string, sequence: number): string {
  return `${device}:${sequence}`
}
