// The storage contract of the ingest plugin: the records it keeps (devices, idempotency marks, the time
// series, groups, OTA targets, ELF records) and every read and write the plugin makes of them. Two
// implementations: lmdb.ts (the embedded default, in the kernel store) and postgres.ts (a shared
// PostgreSQL database, for several ingest nodes). Fragments of chunks still arriving are node-local
// state and stay in the kernel store on both (see docs/telemetry-storage.md).
import { Unavailable } from '../../../kernel/index.js'
import type { TelemetryEvent } from '../apply.js'
import type { ChunkMark, StoredMark } from '../chunk-marks.js'
import type { StoredCoredump } from '../coredump.js'
import type { CrashIssue, IssueEvent, IssueMember, MemberKind } from '../crash-issues.js'
import type { FaultRecord, Heartbeat, MetricEntry, RebootReason } from '../wire/payloads.js'
import { INGEST_CODES } from '../errors.js'

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

/** One frame of a fault's backtrace, innermost first: its address (the PC, or a return address) and `<function> at <file>:<line>`. */
export interface BacktraceFrame {
  address: number
  symbol: string
  /** How it was found: by the image's call-frame information, or by scanning the stack (absent on frames stored before unwinding by call-frame information). */
  unwind?: 'cfi' | 'scan'
  /** On the last frame, when the stack snapshot ended before the code did: the callers beyond it were not sent. */
  truncated?: true
}

export interface StoredFault extends Omit<FaultRecord, 'stack' | 'coredump' | 'coredump_truncated'> {
  /** The stack snapshot the device sent, as hex ('' when none; absent on faults stored before snapshots existed). */
  stack?: string
  /** The coredump the device sent with it, bounded (coredump.ts); absent (null on PostgreSQL) when none. */
  coredump?: StoredCoredump | null
  /** Unwound from the PC, LR and stack snapshot once symbolicated (empty until then; absent on faults stored before backtraces existed). */
  backtrace?: BacktraceFrame[]
  device: string
  sequence: number
  received_at: number
  software_version: string | null
  build_id: string | null
  /** `<function> at <file>:<line>` once symbolicated. */
  symbol: string | null
  /** The crash issue it is counted in (crash-issues.ts); null until the storage groups it. */
  issue: string | null
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

export interface StoredHeartbeat extends Heartbeat {
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
  /** The file's name in the ELF directory (`[ingest].elf_dir`): see elf-files.ts. */
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

/** A chunk whose fragments were dropped incomplete (too old): the device is told to send it whole again. */
export interface LostChunk {
  lost_at: number
  /** Fragments that had come, of `count`. */
  received: number
  count: number
}

/** [device, received_at, sequence] (metrics add the entry index). */
export type SeriesKey = Array<string | number>

/** [build_id ('' when the device reported none), device, received_at, sequence]: a fault still to symbolicate. */
export type PendingKey = [string, string, number, number]

/** Where a fault waits in `pendingFaults`. */
export function pendingKey (fault: Pick<StoredFault, 'build_id' | 'device' | 'received_at' | 'sequence'>): PendingKey {
  return [fault.build_id ?? '', fault.device, fault.received_at, fault.sequence]
}

/** The fault's own key in `faults`, from its pending key. */
export function faultKey (pending: PendingKey): SeriesKey {
  return pending.slice(1)
}


/** A fault's place among its issue's faults: [received_at, device, sequence]. */
export type IssueFaultKey = [number, string, number]

/** The series a device's chunks fill. */
export type SeriesKind = 'faults' | 'metrics' | 'reboots' | 'traces' | 'heartbeats'

export interface SeriesRecord {
  faults: StoredFault
  metrics: StoredMetric
  reboots: StoredReboot
  traces: StoredTrace
  heartbeats: StoredHeartbeat
}

/** A metric sample with its position in its chunk (part of its key). */
export interface IndexedMetric {
  metric: StoredMetric
  index: number
}

/** The mark to store for (device, sequence) after accepting a chunk of `digest` under it. */
export interface MarkWrite {
  device: string
  sequence: number
  mark: ChunkMark
  /** The chunk's digest (the newest in `mark`). */
  digest: Uint8Array
}

/** Everything accepted chunks change, committed together. */
export interface IngestWrites {
  devices: Device[]
  marks: MarkWrite[]
  faults: StoredFault[]
  metrics: IndexedMetric[]
  reboots: StoredReboot[]
  traces: StoredTrace[]
  heartbeats: StoredHeartbeat[]
}

export function emptyWrites (): IngestWrites {
  return { devices: [], marks: [], faults: [], metrics: [], reboots: [], traces: [], heartbeats: [] }
}

/** What a request reads before it decides: records of its devices, their keys, and the marks of its (device, sequence) pairs. */
export interface IngestReads {
  devices: Map<string, Device>
  keys: Map<string, Uint8Array>
  /** By seenKey(device, sequence). */
  marks: Map<string, StoredMark>
}

/** A request's access to the storage while it holds its devices' turns. */
export interface IngestSession {
  /** The records of `devices`, the marks of `marks`, and the AES keys of `keys` (devices that sent sealed frames). */
  read(devices: readonly string[], marks: ReadonlyArray<readonly [string, number]>, keys: readonly string[]): Promise<IngestReads>
  /**
   * Write `writes`, the faults counted in their crash issues; resolves once they are committed, with
   * what the issues tell (new ones, regressions). On LMDB the puts are issued at once (inside a
   * kernel-store transaction callback they join it); on PostgreSQL they are part of the session's transaction.
   */
  write(writes: IngestWrites): Promise<IssueEvent[]>
}

/** A device's record changed under its turn; `key` Uint8Array sets its AES key, null removes it. */
export interface DeviceChange {
  device: Device
  key?: Uint8Array | null
}

/** A fault's new symbol; `final` removes it from the pending faults. */
export interface SymbolUpdate {
  key: PendingKey
  symbol: string
  /** The frames unwound, when the symbol is final and resolved. */
  backtrace?: BacktraceFrame[]
  final: boolean
}

/** An ELF upload's record, with the `<type>@<version>` name it is known by (when it has a version). */
export interface ElfUpload {
  record: ElfFile
  version: string | null
  /** The file itself, kept in the storage where nodes share it (PostgreSQL); LMDB leaves it to the ELF directory. */
  bytes?: Buffer
}

/**
 * The storage of the ingest plugin. Lists come in key order (devices by id, groups by name, OTA
 * targets by id, series by [device, received_at, sequence(, index)]); `after` starts past that key.
 * Every method may throw StorageUnavailable when the database cannot be reached.
 */
export interface TelemetryStorage {
  /** 'lmdb' or 'postgres'. */
  readonly backend: string
  /** Apply what the storage needs at start (migrations, indexes of older data, older faults counted into their crash issues). Returns faults newly indexed for symbolication. */
  open(): Promise<number>
  close(): Promise<void>

  /**
   * A scheduled job (`name`) due every `everyMs`: run `work` unless another node sharing the storage is
   * running it now or ran it less than half a period ago; returns false when it was left to another.
   */
  scheduled(name: string, everyMs: number, work: () => Promise<unknown>): Promise<boolean>

  /** Tell the other nodes sharing the storage what this one published (PostgreSQL: NOTIFY; LMDB: nothing to tell). */
  announce(events: readonly TelemetryEvent[]): Promise<void>
  /** Hear what the other nodes published (PostgreSQL: LISTEN; LMDB: never called back). */
  listen(heard: (events: TelemetryEvent[]) => void): Promise<void>

  /** Run `work` holding the turns of `devices` (on every node sharing the storage), in one transaction where it has one. */
  ingest<T>(devices: Iterable<string>, work: (session: IngestSession) => Promise<T>): Promise<T>

  device(id: string): Promise<Device | undefined>
  devices(after?: string): AsyncIterable<Device>
  /** Read-modify-write of a device's record under its turn: `change` sees the current record; undefined writes nothing. */
  changeDevice(id: string, change: (current: Device | undefined) => DeviceChange | undefined): Promise<Device | undefined>
  /** A device's record, key, marks and series, gone; false when it did not exist. */
  deleteDevice(id: string): Promise<boolean>
  /** Ids of the devices not marked offline whose last chunk came before `before`, in id order. */
  silentDevices(before: number): Promise<string[]>
  /** Mark offline, under their turns, the devices among `ids` that `silent` still holds for; returns them. */
  markOffline(ids: readonly string[], silent: (device: Device) => boolean): Promise<Device[]>

  /** A device's series from `start` (exclusive when `exclusive`) to before `end` (a received_at). */
  series<K extends SeriesKind>(kind: K, start: SeriesKey, end: number, exclusive?: boolean): AsyncIterable<{ key: SeriesKey, value: SeriesRecord[K] }>
  /** Every device's faults received at or after `since`. */
  faultsSince(since: number): AsyncIterable<StoredFault>
  /** Faults received at or after `since`, of crash issue `issue` (null: all). */
  faultCount(since: number, issue: string | null): Promise<number>
  /** Each device's latest value of metric `key` received from `since` to before `until`, for the devices of `group` (null: all); devices without one are absent. */
  latestMetrics(key: string, since: number, until: number, group: string | null): Promise<Map<string, number>>
  /** Number of chunks remembered (idempotency marks: one per (device, sequence)). */
  chunkCount(): Promise<number>

  /** Delete series and marks received before `cutoff`; returns the series entries removed. */
  deleteBefore(cutoff: number): Promise<number>

  group(name: string): Promise<Group | undefined>
  groups(after?: string): AsyncIterable<Group>
  /** False when it exists already. */
  createGroup(group: Group): Promise<boolean>
  putGroup(group: Group): Promise<void>
  removeGroup(name: string): Promise<void>
  groupMembers(name: string): Promise<number>

  otaTarget(id: string): Promise<OtaTarget | undefined>
  otaTargets(after?: string): AsyncIterable<OtaTarget>
  putOtaTarget(target: OtaTarget): Promise<void>
  removeOtaTarget(id: string): Promise<void>

  elf(buildId: string): Promise<ElfFile | undefined>
  elves(): Promise<ElfFile[]>
  putElf(upload: ElfUpload): Promise<void>
  /** The ELF file of `buildId` as the storage keeps it (PostgreSQL); undefined where it keeps none (LMDB: the ELF directory has it). */
  elfBytes(buildId: string): Promise<Buffer | undefined>

  /** The builds ('' for none) that have faults waiting for symbolication. */
  pendingBuilds(): Promise<string[]>
  /** Pending faults' keys of `buildId` after `after`, at most `limit`. */
  pendingFaults(buildId: string, after: PendingKey | undefined, limit: number): Promise<PendingKey[]>
  isPending(key: PendingKey): Promise<boolean>
  fault(key: SeriesKey): Promise<StoredFault | undefined>
  /** Store symbols (unchanged ones skipped), moving symbolicated faults into their symbol's crash issue; returns the symbols written and what the issues tell. */
  setSymbols(updates: readonly SymbolUpdate[]): Promise<{ symbols: string[], events: IssueEvent[] }>

  /** Every crash issue (hundreds, not millions: lists are filtered, sorted and paged from this). */
  issues(): Promise<CrashIssue[]>
  issue(id: string): Promise<CrashIssue | undefined>
  /** An issue's devices, versions or hours with their counts, in member order. */
  issueMembers(id: string, kind: MemberKind): Promise<IssueMember[]>
  /** The ids of the issues that occurred on a device or in a version. */
  issuesWith(kind: MemberKind, member: string): Promise<string[]>
  /** Faults counted per device across every crash issue (devices without one are absent). */
  deviceFaultCounts(): Promise<Map<string, number>>
  /** An issue's faults still stored, newest first ([received_at, device, sequence] descending), after `before` in that order, at most `limit`. */
  issueFaults(id: string, before: IssueFaultKey | undefined, limit: number): Promise<StoredFault[]>
  /** Read-modify-write of an issue (its status) under its turn; undefined when it does not exist. */
  changeIssue(id: string, change: (current: CrashIssue) => CrashIssue): Promise<CrashIssue | undefined>

  /** Small JSON documents of one kind (OTA images' records, releases, devices' OTA events, alert rules, their states and history), by id. */
  document<T>(kind: DocumentKind, id: string): Promise<T | undefined>
  /** Every document of a kind, in id order (kinds whose count stays in the thousands). */
  documents<T>(kind: DocumentKind): Promise<T[]>
  /** Read-modify-write of a document, one at a time per document on every node: `change` sees the current one; undefined writes nothing; null removes it. Returns what is stored after. */
  changeDocument<T>(kind: DocumentKind, id: string, change: (current: T | undefined) => T | null | undefined): Promise<T | undefined>
  /** Bytes kept whole by id (firmware images). */
  putBlob(id: string, bytes: Buffer): Promise<void>
  blob(id: string): Promise<Buffer | undefined>
  removeBlob(id: string): Promise<void>
}

/** The kinds of documents the storage keeps. */
export type DocumentKind = 'ota-image' | 'ota-release' | 'ota-log' | 'alert-rule' | 'alert-state' | 'alert' | 'fragment' | 'fragment-lost'

/** The storage cannot be reached (the database is down or refuses connections): answered 503 with Retry-After; nothing of the request was stored. */
export class StorageUnavailable extends Unavailable {
  /** When a client should try again. */
  readonly retryAfterSeconds = 5

  constructor (message: string, options?: ErrorOptions) {
    super(message, { ...options, code: INGEST_CODES.INGEST_STORAGE_UNAVAILABLE })
  }
}
