// Telemetry state in LMDB: devices and their keys, received chunks (for idempotency), faults (and the
// index of those waiting for symbolication, by build), crash issues, metrics, reboots, traces, heartbeats, groups,
// OTA targets, images and releases, and ELF uploads. Time-series keys start with [device, time], so a device's time range is one ordered range read.
import type { Database } from 'lmdb'
import type { PluginStore } from '../../kernel/index.js'
import type { StoredMark } from './chunk-marks.js'
import type { CrashIssue, IssueIdentity, IssueMember, MemberKind } from './crash-issues.js'
import { DeviceLocks } from './device-locks.js'
import { pendingKey, type Device, type ElfFile, type Group, type LostChunk, type OtaTarget, type PendingChunk, type PendingKey, type SeriesKey, type StoredFault, type StoredMetric, type StoredReboot, type StoredTrace, type StoredHeartbeat } from './storage/contract.js'

export { faultKey, pendingKey } from './storage/contract.js'
export type { Device, ElfFile, Group, LostChunk, OtaTarget, PendingChunk, PendingKey, SeriesKey, StoredFault, StoredMetric, StoredReboot, StoredTrace, StoredHeartbeat } from './storage/contract.js'

/** The database of ELF files a backup carries. */
const ELF_FILES = 'elf-files'

/** Marks of the store's format in `meta`: set once the change they name has been applied to older data. */
const PENDING_INDEXED = 'pending-faults-indexed'

export class TelemetryStore {
  readonly devices: Database<Device, string>
  readonly keys: Database<Uint8Array, string>
  /** Idempotency marks of stored chunks, by seenKey(). */
  readonly seen: Database<StoredMark, string>
  readonly faults: Database<StoredFault, SeriesKey>
  readonly metrics: Database<StoredMetric, SeriesKey>
  readonly reboots: Database<StoredReboot, SeriesKey>
  readonly traces: Database<StoredTrace, SeriesKey>
  readonly heartbeats: Database<StoredHeartbeat, SeriesKey>
  readonly groups: Database<Group, string>
  readonly ota: Database<OtaTarget, string>
  readonly elves: Database<ElfFile, string>
  readonly versions: Database<string, string>
  readonly fragments: Database<PendingChunk, string>
  /** Chunks dropped incomplete, until their device sends them again (or LOST_KEPT_MS). */
  readonly lostFragments: Database<LostChunk, string>
  /**
   * Faults the symbolication plugin has still to resolve (never tried, waiting for their build's ELF,
   * or to be tried again), by build: written with the fault, removed once its symbol is final.
   */
  readonly pendingFaults: Database<true, PendingKey>
  /** Crash issues by id (crash-issues.ts). */
  readonly issues: Database<CrashIssue, string>
  /** An issue's counts by device, version and hour: [issue, kind, member]. */
  readonly issueMembers: Database<IssueMember, [string, MemberKind, string]>
  /** An issue's faults: [issue, received_at, device, sequence]. */
  readonly issueFaults: Database<true, [string, number, string, number]>
  /** The symbol issue a PC issue's faults go to once it was symbolicated, by the PC issue's id. */
  readonly issueAliases: Database<IssueIdentity, string>
  /** Small JSON documents by [kind, id] (storage/contract.ts DocumentKind). */
  readonly documents: Database<unknown, [string, string]>
  /** Bytes kept whole (firmware images), by id. */
  readonly blobs: Database<Buffer, string>
  /** ELF files carried by a backup, by file name; written out to the ELF directory at start (elf-files.ts). */
  readonly restoredElves: Database<Buffer, string>
  /** Marks of the store's format (PENDING_INDEXED). */
  readonly meta: Database<true, string>
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
    this.heartbeats = store.db('heartbeats')
    this.groups = store.db('groups')
    this.ota = store.db('ota')
    this.elves = store.db('elves')
    this.versions = store.db('versions')
    this.fragments = store.db('fragments')
    this.lostFragments = store.db('fragments-lost')
    this.pendingFaults = store.db('pending-faults')
    this.issues = store.db('issues')
    this.issueMembers = store.db('issue-members')
    this.issueFaults = store.db('issue-faults')
    this.issueAliases = store.db('issue-aliases')
    this.documents = store.db('documents')
    this.blobs = store.db('blobs', { encoding: 'binary' })
    this.restoredElves = store.db(ELF_FILES, { encoding: 'binary' })
    this.meta = store.db('meta')
  }

  /**
   * Index the faults stored before `pendingFaults` existed, once: those never symbolicated, and those
   * left unsymbolicated whose device reported a build (they may resolve yet).
   */
  async indexPendingFaults (): Promise<number> {
    if (this.meta.get(PENDING_INDEXED) !== undefined) return 0
    return await this.transaction(() => {
      let indexed = 0
      for (const { value } of this.faults.getRange()) {
        if (value.symbol === null || (value.build_id !== null && value.symbol.startsWith('unsymbolicated'))) {
          this.pendingFaults.put(pendingKey(value), true)
          indexed++
        }
      }
      this.meta.put(PENDING_INDEXED, true)
      return indexed
    })
  }

  /** Remove the device's series entries received before `before` (and its faults' pending marks); call inside a transaction. */
  removeSeries (device: string, before: number): number {
    let removed = 0
    for (const { key, value } of this.faults.getRange({ start: [device], end: [device, before] })) {
      this.pendingFaults.remove(pendingKey(value))
      if (value.issue !== null && value.issue !== undefined) this.issueFaults.remove([value.issue, value.received_at, value.device, value.sequence])
      this.faults.remove(key)
      removed++
    }
    for (const db of [this.metrics, this.reboots, this.traces, this.heartbeats]) {
      for (const key of db.getKeys({ start: [device], end: [device, before] })) {
        db.remove(key)
        removed++
      }
    }
    return removed
  }

  /** Run `fn` in one write transaction; resolves after the commit. */
  async transaction<T> (fn: () => T): Promise<T> {
    return await this.#store.transaction(fn)
  }

  /** A backup of these databases with the ELF files `elfFiles` ([file name, bytes]) in `restoredElves`, where a restore puts them. */
  async backup (path: string, elfFiles: Iterable<readonly [string, Buffer]>): Promise<void> {
    await this.#store.backup(path, { [ELF_FILES]: elfFiles })
  }
}

/** Key under which a stored chunk is remembered for idempotency (chunk-marks.ts). */
export function seenKey (device: string, sequence: number): string {
  return `${device}:${sequence}`
}
