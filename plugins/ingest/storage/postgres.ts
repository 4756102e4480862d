// The storage contract on PostgreSQL (`[ingest].database_url`): the schema of migrations/ in the schema
// `ingest`, migrated at start under an advisory lock (two nodes starting at once apply each migration
// once). A request holds its devices' turns as transaction-scoped advisory locks, so every node sharing
// the database takes them in turn; its writes are multi-row inserts in that one transaction, and the
// caller acknowledges after the commit. Metrics live in daily partitions; retention drops whole ones.
import postgres, { type Sql, type TransactionSql } from 'postgres'
import { seenKey } from '../store.js'
import { DIGEST_BYTES, isCopy, type StoredMark } from '../chunk-marks.js'
import {
  StorageUnavailable, type Device, type DeviceChange, type ElfFile, type ElfUpload, type Group, type IngestReads, type IngestSession, type IngestWrites,
  type OtaTarget, type PendingKey, type SeriesKey, type SeriesKind, type SeriesRecord, type StoredFault, type SymbolUpdate, type TelemetryStorage
} from './contract.js'
import { MIGRATIONS } from './migrations/index.js'

/** The schema the tables live in (the connection's search_path). */
export const SCHEMA = 'ingest'
/** First key of the plugin's advisory locks (two-key form); the second names what is locked. */
const LOCK_SPACE = 0x42657274
const MIGRATION_LOCK = 1
const PARTITION_LOCK = 2
/** Device turns: the second key is hashtext(device id), in this space. */
const DEVICE_LOCK_SPACE = LOCK_SPACE + 1
/** Scheduled jobs: the second key is hashtext(job name). */
const JOB_LOCK_SPACE = LOCK_SPACE + 2
const DAY_MS = 86_400_000
/** Rows per page of a list read, and per multi-row insert. */
const PAGE = 500
const INSERT_ROWS = 1000

const DEVICE_COLUMNS = ['id', 'name', 'group', 'serial', 'hardware_version', 'software_type', 'software_version', 'build_id', 'registered', 'encrypted', 'created_at', 'last_seen', 'boot_count', 'offline'] as const
/** Columns of each series in the order of its records (apply.ts), its key columns after device, and its table. */
const SERIES = {
  faults: { columns: ['device', 'sequence', 'received_at', 'pc', 'lr', 'sp', 'psr', 'cfsr', 'hfsr', 'mmfar', 'bfar', 'uptime_ms', 'software_version', 'build_id', 'symbol'], key: ['received_at', 'sequence'] },
  metrics: { columns: ['device', 'sequence', 'received_at', 'key', 'kind', 'value', 'uptime_ms'], key: ['received_at', 'sequence', 'entry'] },
  reboots: { columns: ['device', 'sequence', 'received_at', 'reason', 'boot_count', 'pc', 'lr'], key: ['received_at', 'sequence'] },
  traces: { columns: ['device', 'sequence', 'received_at', 'uptime_ms', 'dropped', 'text'], key: ['received_at', 'sequence'] }
} as const

/** SQLSTATE classes and client codes that mean the database cannot be reached now (not that the request is wrong). */
const UNAVAILABLE_STATES = /^(08|53|57P)/
const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EPIPE', 'CONNECT_TIMEOUT', 'CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED'])

/** `err` as StorageUnavailable when it says the database cannot be reached; else as it is. */
function classify (err: unknown): unknown {
  if (err instanceof StorageUnavailable) return err
  const code = (err as { code?: unknown }).code
  if (typeof code === 'string' && (UNAVAILABLE_CODES.has(code) || UNAVAILABLE_STATES.test(code))) {
    return new StorageUnavailable(`the telemetry database cannot be reached (${code}): ${(err as Error).message}`, { cause: err })
  }
  return err
}

async function guarded<T> (work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (err) {
    throw classify(err)
  }
}

/** `url` without its password, for messages. */
export function redactUrl (url: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.password !== '') parsed.password = '***'
    return parsed.href
  } catch {
    return 'an unparsable URL'
  }
}

/** The name of the metrics partition of `day` (days since the epoch). */
function partitionName (day: number): string {
  return `metrics_d${day}`
}

export interface PostgresOptions {
  /** Most connections this node opens. */
  max?: number
}

export class PostgresStorage implements TelemetryStorage {
  readonly backend = 'postgres'
  readonly #sql: Sql
  /** Days whose metrics partition is known to exist. */
  readonly #partitions = new Set<number>()

  constructor (url: string, options: PostgresOptions = {}) {
    this.#sql = postgres(url, {
      max: options.max ?? 10,
      onnotice: () => {},
      connect_timeout: 5,
      connection: { search_path: SCHEMA, application_name: 'berth-ingest' },
      // Times, sequences and register values fit in a double: bigint columns read as numbers.
      types: { bigint: { to: 20, from: [20], serialize: (value: number) => String(value), parse: (value: string) => Number(value) } }
    })
  }

  async open (): Promise<number> {
    await guarded(async () => { await this.migrate() })
    const today = Math.floor(Date.now() / DAY_MS)
    await this.#ensurePartitions([today, today + 1])
    return 0
  }

  /** Apply the migrations not applied yet, under the migration lock (idempotent; safe when nodes start together). */
  async migrate (): Promise<number[]> {
    return await this.#sql.begin(async tx => {
      await tx`select pg_advisory_xact_lock(${LOCK_SPACE}, ${MIGRATION_LOCK})`
      await tx.unsafe(`create schema if not exists ${SCHEMA}`)
      await tx`create table if not exists schema_migrations (version integer primary key, name text not null, applied_at timestamptz not null default now())`
      const done = new Set((await tx<Array<{ version: number }>>`select version from schema_migrations`).map(row => row.version))
      const applied: number[] = []
      for (const migration of MIGRATIONS) {
        if (done.has(migration.version)) continue
        await tx.unsafe(migration.sql)
        await tx`insert into schema_migrations (version, name) values (${migration.version}, ${migration.name})`
        applied.push(migration.version)
      }
      return applied
    })
  }

  async close (): Promise<void> {
    await this.#sql.end({ timeout: 5 })
  }

  /** Create the metrics partitions of `days` that do not exist yet (in a transaction of their own, under the partition lock). */
  async #ensurePartitions (days: Iterable<number>): Promise<void> {
    const missing = [...new Set(days)].filter(day => !this.#partitions.has(day))
    if (missing.length === 0) return
    await guarded(async () => {
      await this.#sql.begin(async tx => {
        await tx`select pg_advisory_xact_lock(${LOCK_SPACE}, ${PARTITION_LOCK})`
        for (const day of missing) {
          await tx.unsafe(`create table if not exists ${partitionName(day)} partition of metrics for values from (${day * DAY_MS}) to (${(day + 1) * DAY_MS})`)
        }
      })
    })
    for (const day of missing) this.#partitions.add(day)
  }

  /**
   * Under a session advisory lock of the job (tried, not waited for: a node that finds it held leaves
   * the run to its holder, and a node that dies releases it with its connection), with the time of the
   * job's last run in scheduled_jobs.
   */
  async scheduled (name: string, everyMs: number, work: () => Promise<unknown>): Promise<boolean> {
    const reserved = await guarded(async () => await this.#sql.reserve())
    try {
      const [{ locked }] = await guarded(async () => await reserved<Array<{ locked: boolean }>>`select pg_try_advisory_lock(${JOB_LOCK_SPACE}, hashtext(${name})) as locked`)
      if (!locked) return false
      try {
        const now = Date.now()
        const [last] = await guarded(async () => await reserved<Array<{ at: number }>>`select at from scheduled_jobs where name = ${name}`)
        if (last !== undefined && now - last.at < everyMs / 2) return false
        await work()
        await guarded(async () => { await reserved`insert into scheduled_jobs (name, at) values (${name}, ${now}) on conflict (name) do update set at = excluded.at` })
        return true
      } finally {
        await reserved`select pg_advisory_unlock(${JOB_LOCK_SPACE}, hashtext(${name}))`.catch(() => {})
      }
    } finally {
      reserved.release()
    }
  }

  /** Run `work` in a transaction holding the turns of `devices` (advisory locks, taken in id order so two requests never wait on each other). */
  async #withDevices<T> (devices: Iterable<string>, work: (tx: TransactionSql) => Promise<T>): Promise<T> {
    const ids = [...new Set(devices)].sort()
    return await guarded(async () => await this.#sql.begin(async tx => {
      for (const id of ids) await tx`select pg_advisory_xact_lock(${DEVICE_LOCK_SPACE}, hashtext(${id}))`
      return await work(tx)
    }) as T)
  }

  async ingest<T> (devices: Iterable<string>, work: (session: IngestSession) => Promise<T>): Promise<T> {
    let reads: IngestReads | undefined
    return await this.#withDevices(devices, async tx => await work({
      read: async (ids, pairs, sealed) => {
        reads = await readFor(tx, ids, pairs, sealed)
        return reads
      },
      write: async writes => {
        await this.#ensurePartitions(writes.metrics.map(({ metric }) => Math.floor(metric.received_at / DAY_MS)))
        await writeAll(tx, writes, reads?.marks ?? new Map())
      }
    }))
  }

  async device (id: string): Promise<Device | undefined> {
    return await guarded(async () => (await this.#sql<Device[]>`select ${this.#sql(DEVICE_COLUMNS)} from devices where id = ${id}`)[0])
  }

  devices (after?: string): AsyncIterable<Device> {
    return this.#keyset<Device>('devices', DEVICE_COLUMNS, 'id', after, row => row.id)
  }

  async changeDevice (id: string, change: (current: Device | undefined) => DeviceChange | undefined): Promise<Device | undefined> {
    return await this.#withDevices([id], async tx => {
      const [current] = await tx<Device[]>`select ${tx(DEVICE_COLUMNS)} from devices where id = ${id}`
      const next = change(current)
      if (next === undefined) return undefined
      await upsertDevices(tx, [next.device])
      if (next.key instanceof Uint8Array) await tx`insert into device_keys (device, key) values (${id}, ${Buffer.from(next.key)}) on conflict (device) do update set key = excluded.key`
      if (next.key === null) await tx`delete from device_keys where device = ${id}`
      return next.device
    })
  }

  async deleteDevice (id: string): Promise<boolean> {
    return await this.#withDevices([id], async tx => {
      const deleted = await tx`delete from devices where id = ${id}`
      if (deleted.count === 0) return false
      for (const table of ['chunk_marks', 'faults', 'metrics', 'reboots', 'traces']) await tx`delete from ${tx(table)} where device = ${id}`
      return true
    })
  }

  async markOffline (ids: readonly string[], silent: (device: Device) => boolean): Promise<Device[]> {
    return await this.#withDevices(ids, async tx => {
      const current = await tx<Device[]>`select ${tx(DEVICE_COLUMNS)} from devices where id = any(${[...ids]}) order by id`
      const marked = current.filter(silent).map(device => ({ ...device, offline: true }))
      if (marked.length > 0) await tx`update devices set offline = true where id = any(${marked.map(d => d.id)})`
      return marked
    })
  }

  async * series<K extends SeriesKind> (kind: K, start: SeriesKey, end: number, exclusive = false): AsyncIterable<{ key: SeriesKey, value: SeriesRecord[K] }> {
    const { columns, key } = SERIES[kind]
    const sql = this.#sql
    const device = String(start[0])
    let from = start.slice(1).map(Number)
    let strict = exclusive
    for (;;) {
      const names = key.slice(0, from.length)
      const rows = await guarded(async () => await sql.unsafe<Array<Record<string, number | string | null>>>(
        `select ${[...columns, ...(kind === 'metrics' ? ['entry'] : [])].map(c => `"${c}"`).join(', ')} from ${kind}
         where device = $1 and (${names.join(', ')}) ${strict ? '>' : '>='} (${names.map((_, i) => `$${i + 2}`).join(', ')}) and received_at < $${names.length + 2}
         order by ${key.join(', ')} limit ${PAGE}`, [device, ...from, end]))
      for (const row of rows) {
        const rowKey: SeriesKey = [device, ...key.map(k => row[k] as number)]
        if (kind === 'metrics') delete row.entry
        yield { key: rowKey, value: row as unknown as SeriesRecord[K] }
      }
      if (rows.length < PAGE) return
      const last = rows[rows.length - 1]
      from = key.map(k => last[k] as number)
      if (kind === 'metrics') from = [last.received_at as number, last.sequence as number, Number((rows.at(-1) as Record<string, unknown>).entry ?? 0)]
      strict = true
    }
  }

  async * faultsSince (since: number): AsyncIterable<StoredFault> {
    const columns = SERIES.faults.columns
    let after: [string, number, number] = ['', since, -1]
    for (;;) {
      const [device, at, sequence] = after
      const rows = await guarded(async () => await this.#sql<StoredFault[]>`
        select ${this.#sql(columns)} from faults where received_at >= ${since} and (received_at, device, sequence) > (${at}, ${device}, ${sequence})
        order by received_at, device, sequence limit ${PAGE}`)
      yield * rows
      if (rows.length < PAGE) return
      const last = rows[rows.length - 1]
      after = [last.device, last.received_at, last.sequence]
    }
  }

  async chunkCount (): Promise<number> {
    return await guarded(async () => (await this.#sql<Array<{ n: number }>>`select count(*)::bigint as n from (select distinct device, sequence from chunk_marks) m`)[0].n)
  }

  async deleteBefore (cutoff: number): Promise<number> {
    return await guarded(async () => await this.#sql.begin(async tx => {
      let removed = 0
      for (const table of ['faults', 'reboots', 'traces']) removed += (await tx`delete from ${tx(table)} where received_at < ${cutoff}`).count
      // Whole days before the cutoff: their partitions are dropped; the day of the cutoff loses its older rows.
      const partitions = await tx<Array<{ name: string }>>`
        select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid join pg_class p on p.oid = i.inhparent
        join pg_namespace n on n.oid = p.relnamespace where p.relname = 'metrics' and n.nspname = ${SCHEMA}`
      for (const { name } of partitions) {
        const day = Number(/^metrics_d(\d+)$/.exec(name)?.[1] ?? NaN)
        if (!Number.isInteger(day) || (day + 1) * DAY_MS > cutoff) continue
        removed += (await tx<Array<{ n: number }>>`select count(*)::bigint as n from ${tx(name)}`)[0].n
        await tx`drop table ${tx(name)}`
        this.#partitions.delete(day)
      }
      removed += (await tx`delete from metrics where received_at < ${cutoff}`).count
      await tx`
        delete from chunk_marks m using (select device, sequence from chunk_marks group by device, sequence having max(at) < ${cutoff}) old
        where m.device = old.device and m.sequence = old.sequence`
      return removed
    }))
  }

  async group (name: string): Promise<Group | undefined> {
    return await guarded(async () => (await this.#sql<Group[]>`select name, description, created_at, updated_at from groups where name = ${name}`)[0])
  }

  groups (after?: string): AsyncIterable<Group> {
    return this.#keyset<Group>('groups', ['name', 'description', 'created_at', 'updated_at'], 'name', after, row => row.name)
  }

  async createGroup (group: Group): Promise<boolean> {
    return await guarded(async () => (await this.#sql`insert into groups ${this.#sql(group)} on conflict (name) do nothing`).count === 1)
  }

  async putGroup (group: Group): Promise<void> {
    await guarded(async () => {
      await this.#sql`insert into groups ${this.#sql(group)} on conflict (name) do update set description = excluded.description, created_at = excluded.created_at, updated_at = excluded.updated_at`
    })
  }

  async removeGroup (name: string): Promise<void> {
    await guarded(async () => { await this.#sql`delete from groups where name = ${name}` })
  }

  async groupMembers (name: string): Promise<number> {
    return await guarded(async () => (await this.#sql<Array<{ n: number }>>`select count(*)::bigint as n from devices where "group" = ${name}`)[0].n)
  }

  async otaTarget (id: string): Promise<OtaTarget | undefined> {
    return await guarded(async () => (await this.#sql<OtaTarget[]>`select ${this.#sql(OTA_COLUMNS)} from ota_targets where id = ${id}`)[0])
  }

  otaTargets (after?: string): AsyncIterable<OtaTarget> {
    return this.#keyset<OtaTarget>('ota_targets', OTA_COLUMNS, 'id', after, row => row.id)
  }

  async putOtaTarget (target: OtaTarget): Promise<void> {
    await guarded(async () => {
      await this.#sql`insert into ota_targets ${this.#sql(target, OTA_COLUMNS)} on conflict (id) do update set
        "group" = excluded."group", software_type = excluded.software_type, version = excluded.version, build_id = excluded.build_id, url = excluded.url, created_at = excluded.created_at`
    })
  }

  async removeOtaTarget (id: string): Promise<void> {
    await guarded(async () => { await this.#sql`delete from ota_targets where id = ${id}` })
  }

  async elf (buildId: string): Promise<ElfFile | undefined> {
    return await guarded(async () => (await this.#sql<ElfFile[]>`select ${this.#sql(ELF_COLUMNS)} from elf_files where build_id = ${buildId}`)[0])
  }

  async elves (): Promise<ElfFile[]> {
    return await guarded(async () => [...await this.#sql<ElfFile[]>`select ${this.#sql(ELF_COLUMNS)} from elf_files order by build_id`])
  }

  async putElf ({ record, version }: ElfUpload): Promise<void> {
    await guarded(async () => {
      await this.#sql.begin(async tx => {
        await tx`insert into elf_files ${tx(record, ELF_COLUMNS)} on conflict (build_id) do update set
          software_type = excluded.software_type, software_version = excluded.software_version, size = excluded.size, file = excluded.file, uploaded_at = excluded.uploaded_at`
        if (version !== null) await tx`insert into elf_versions (name, build_id) values (${version}, ${record.build_id}) on conflict (name) do update set build_id = excluded.build_id`
      })
    })
  }

  async pendingBuilds (): Promise<string[]> {
    return await guarded(async () => (await this.#sql<Array<{ build: string }>>`select distinct coalesce(build_id, '') as build from faults where pending order by 1`).map(row => row.build))
  }

  async pendingFaults (buildId: string, after: PendingKey | undefined, limit: number): Promise<PendingKey[]> {
    const [, device, at, sequence] = after ?? [buildId, '', -1, -1]
    const rows = await guarded(async () => await this.#sql<Array<{ device: string, received_at: number, sequence: number }>>`
      select device, received_at, sequence from faults where pending and coalesce(build_id, '') = ${buildId}
      and (device, received_at, sequence) > (${device}, ${at}, ${sequence}) order by device, received_at, sequence limit ${limit}`)
    return rows.map(row => [buildId, row.device, row.received_at, row.sequence])
  }

  async isPending ([, device, at, sequence]: PendingKey): Promise<boolean> {
    return await guarded(async () => (await this.#sql`select 1 from faults where device = ${device} and received_at = ${at} and sequence = ${sequence} and pending`).length === 1)
  }

  async fault ([device, at, sequence]: SeriesKey): Promise<StoredFault | undefined> {
    return await guarded(async () => (await this.#sql<StoredFault[]>`
      select ${this.#sql(SERIES.faults.columns)} from faults where device = ${device} and received_at = ${at} and sequence = ${sequence}`)[0])
  }

  async setSymbols (updates: readonly SymbolUpdate[]): Promise<string[]> {
    return await guarded(async () => await this.#sql.begin(async tx => {
      const symbols: string[] = []
      for (const { key: [, device, at, sequence], symbol, final } of updates) {
        const [current] = await tx<Array<{ symbol: string | null }>>`select symbol from faults where device = ${device} and received_at = ${at} and sequence = ${sequence} for update`
        if (current === undefined) continue
        const changed = current.symbol !== symbol
        await tx`update faults set symbol = ${symbol}, pending = pending and not ${final} where device = ${device} and received_at = ${at} and sequence = ${sequence}`
        if (changed) symbols.push(symbol)
      }
      return symbols
    }))
  }

  /** Rows of `table` in `key` order after `after`, a page at a time. */
  async * #keyset<T extends object> (table: string, columns: readonly string[], key: string, after: string | undefined, keyOf: (row: T) => string): AsyncIterable<T> {
    let last = after
    for (;;) {
      const from = last
      const sql = this.#sql
      const rows = await guarded(async () => await sql<T[]>`
        select ${sql(columns)} from ${sql(table)} ${from === undefined ? sql`` : sql`where ${sql(key)} > ${from}`} order by ${sql(key)} limit ${PAGE}`)
      yield * rows
      if (rows.length < PAGE) return
      last = keyOf(rows[rows.length - 1])
    }
  }
}

const OTA_COLUMNS = ['id', 'group', 'software_type', 'version', 'build_id', 'url', 'created_at'] as const
const ELF_COLUMNS = ['build_id', 'software_type', 'software_version', 'size', 'file', 'uploaded_at'] as const

/** What a request reads, in three queries: its devices, their keys, and the marks of its (device, sequence) pairs. */
async function readFor (tx: TransactionSql, ids: readonly string[], pairs: ReadonlyArray<readonly [string, number]>, sealed: readonly string[]): Promise<IngestReads> {
  const reads: IngestReads = { devices: new Map(), keys: new Map(), marks: new Map() }
  if (ids.length > 0) {
    for (const device of await tx<Device[]>`select ${tx(DEVICE_COLUMNS)} from devices where id = any(${[...ids]})`) reads.devices.set(device.id, device)
  }
  if (sealed.length > 0) {
    for (const row of await tx<Array<{ device: string, key: Buffer }>>`select device, key from device_keys where device = any(${[...sealed]})`) reads.keys.set(row.device, row.key)
  }
  if (pairs.length > 0) {
    const rows = await tx<Array<{ device: string, sequence: number, digest: Buffer, at: number }>>`
      select m.device, m.sequence, m.digest, m.at from chunk_marks m
      join unnest(${pairs.map(p => p[0])}::text[], ${pairs.map(p => p[1])}::bigint[]) as w (device, sequence) on m.device = w.device and m.sequence = w.sequence
      order by m.at desc`
    const digests = new Map<string, Buffer[]>()
    for (const row of rows) {
      const seen = seenKey(row.device, row.sequence)
      if (!reads.marks.has(seen)) reads.marks.set(seen, { at: row.at, digests: new Uint8Array(0) })
      digests.set(seen, [...(digests.get(seen) ?? []), row.digest])
    }
    for (const [seen, list] of digests) (reads.marks.get(seen) as { digests: Uint8Array }).digests = new Uint8Array(Buffer.concat(list))
  }
  return reads
}

async function upsertDevices (tx: TransactionSql, devices: readonly Device[]): Promise<void> {
  if (devices.length === 0) return
  await tx`insert into devices ${tx(devices as Device[], DEVICE_COLUMNS)} on conflict (id) do update set
    ${tx.unsafe(DEVICE_COLUMNS.filter(c => c !== 'id').map(c => `"${c}" = excluded."${c}"`).join(', '))}`
}

/** Multi-row inserts of `rows`, INSERT_ROWS at a time. */
async function insertRows (tx: TransactionSql, table: string, rows: ReadonlyArray<Record<string, unknown>>, columns: readonly string[]): Promise<void> {
  for (let i = 0; i < rows.length; i += INSERT_ROWS) {
    await tx`insert into ${tx(table)} ${tx(rows.slice(i, i + INSERT_ROWS) as Array<Record<string, postgres.ParameterOrJSON<never>>>, ...columns)}`
  }
}

/**
 * Every write of a request. A mark's digest new to its (device, sequence) is inserted: should another
 * node have stored the same content meanwhile, the primary key refuses it and the whole transaction
 * fails (answered 503; the retry finds a duplicate). A digest stored before (a first transmission
 * reusing the sequence, see chunk-marks.ts) has its time moved on; a sequence keeps its newest digests only.
 */
async function writeAll (tx: TransactionSql, writes: IngestWrites, read: Map<string, StoredMark>): Promise<void> {
  await insertRows(tx, 'reboots', writes.reboots as unknown as Array<Record<string, unknown>>, SERIES.reboots.columns)
  await insertRows(tx, 'faults', writes.faults as unknown as Array<Record<string, unknown>>, SERIES.faults.columns)
  await insertRows(tx, 'traces', writes.traces as unknown as Array<Record<string, unknown>>, SERIES.traces.columns)
  await insertRows(tx, 'metrics', writes.metrics.map(({ metric, index }) => ({ ...metric, entry: index })), [...SERIES.metrics.columns, 'entry'])
  const fresh: Array<Record<string, unknown>> = []
  for (const { device, sequence, mark, digest } of writes.marks) {
    const before = read.get(seenKey(device, sequence))
    const known = before !== undefined && isCopy(before, digest, false)
    if (known) {
      await tx`update chunk_marks set at = ${mark.at} where device = ${device} and sequence = ${sequence} and digest = ${Buffer.from(digest)}`
    } else {
      fresh.push({ device, sequence, digest: Buffer.from(digest), at: mark.at })
    }
    if (before !== undefined && typeof before !== 'number' && before.digests.length >= mark.digests.length) {
      const kept = []
      for (let at = 0; at < mark.digests.length; at += DIGEST_BYTES) kept.push(Buffer.from(mark.digests.subarray(at, at + DIGEST_BYTES)))
      await tx`delete from chunk_marks where device = ${device} and sequence = ${sequence} and not (digest = any(${kept}))`
    }
  }
  // Marks of one request are distinct (device, sequence, digest): a request stores a content once.
  await insertRows(tx, 'chunk_marks', dedupe(fresh), ['device', 'sequence', 'digest', 'at'])
  await upsertDevices(tx, writes.devices)
}

/** The last row of each (device, sequence, digest). */
function dedupe (rows: Array<Record<string, unknown>>): Array<Record<string, unknown>> {
  const byKey = new Map<string, Record<string, unknown>>()
  for (const row of rows) byKey.set(`${String(row.device)}:${String(row.sequence)}:${(row.digest as Buffer).toString('hex')}`, row)
  return [...byKey.values()]
}
