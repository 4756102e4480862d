// The storage contract on PostgreSQL (`[ingest].database_url`): the schema of migrations/ in the schema
// `ingest`, migrated at start under an advisory lock (two nodes starting at once apply each migration
// once). A request holds its devices' turns as transaction-scoped advisory locks, so every node sharing
// the database takes them in turn; its reads and its writes are one function call each in that one
// transaction (postgres-request.ts), and the caller acknowledges after the commit. Metrics live in daily partitions; retention drops whole ones.
import pg from 'pg'
import { inTransaction, migrateSchema, unreachable } from '../../../kernel/runtime-api.js'
import type { TelemetryEvent } from '../apply.js'
import type { StoredMark } from '../chunk-marks.js'
import { issueOf, moveOf, newOccurrences, pcIssue, type CrashIssue, type IssueEvent, type IssueIdentity, type IssueMember, type MemberKind, type Occurrence } from '../crash-issues.js'
import {
  StorageUnavailable, type Device, type DeviceChange, type DocumentKind, type ElfFile, type ElfUpload, type Group, type IngestSession, type IssueFaultKey,
  type OtaTarget, type PendingKey, type SeriesKey, type SeriesKind, type SeriesRecord, type StoredFault, type SymbolUpdate, type TelemetryStorage
} from './contract.js'
import { MIGRATIONS } from './migrations/index.js'
import { EVENTS_CHANNEL, NodeChannel } from './postgres-events.js'
import { aliasesOf, applyToIssues, issuesUpdate, readIssuesRequest, type IssuesRead } from './postgres-issues.js'
import { jsonLiteral, jsonText, parseReads, readRequest, writeRequest } from './postgres-request.js'

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
/** Crash issues' turns (read_issues takes them too): the second key is hashtext(issue id). */
const ISSUE_LOCK_SPACE = LOCK_SPACE + 3
/** Documents' turns: the second key is hashtext('<kind>/<id>'). */
const DOCUMENT_LOCK_SPACE = LOCK_SPACE + 4
const DAY_MS = 86_400_000
/** Rows per page of a list read, and per multi-row insert of a copy. */
const PAGE = 500
const INSERT_ROWS = 1000
/** Faults stored before crash issues existed, counted into their issues per transaction at start. */
const GROUP_BATCH = 1000

export const DEVICE_COLUMNS = ['id', 'name', 'group', 'serial', 'hardware_version', 'software_type', 'software_version', 'build_id', 'registered', 'encrypted', 'created_at', 'last_seen', 'boot_count', 'offline'] as const
/** Columns of each series in the order of its records (apply.ts), its key columns after device, and its table. */
export const SERIES = {
  faults: { columns: ['device', 'sequence', 'received_at', 'pc', 'lr', 'sp', 'psr', 'cfsr', 'hfsr', 'mmfar', 'bfar', 'uptime_ms', 'stack', 'software_version', 'build_id', 'symbol', 'backtrace', 'issue', 'coredump'], key: ['received_at', 'sequence'] },
  metrics: { columns: ['device', 'sequence', 'received_at', 'key', 'kind', 'value', 'uptime_ms'], key: ['received_at', 'sequence', 'entry'] },
  reboots: { columns: ['device', 'sequence', 'received_at', 'reason', 'boot_count', 'pc', 'lr'], key: ['received_at', 'sequence'] },
  traces: { columns: ['device', 'sequence', 'received_at', 'uptime_ms', 'dropped', 'text'], key: ['received_at', 'sequence'] },
  heartbeats: { columns: ['device', 'sequence', 'received_at', 'uptime_ms', 'boot_count'], key: ['received_at', 'sequence'] }
} as const

/** `err` as StorageUnavailable when it says the database cannot be reached; else as it is. */
function classify (err: unknown): unknown {
  if (err instanceof StorageUnavailable) return err
  const code = (err as { code?: unknown }).code
  const message = err instanceof Error ? err.message : ''
  const cause = unreachable(err)
  if (cause !== undefined) return new StorageUnavailable(`the telemetry database cannot be reached (${cause}): ${message}`, { cause: err })
  // The same content stored under a (device, sequence) by another transaction at once, or two transactions in each other's way: nothing was stored, the retry decides.
  if ((code === '23505' && (err as { constraint?: unknown }).constraint === 'chunk_marks_pkey') || code === '40001' || code === '40P01') {
    return new StorageUnavailable(`the telemetry database refused the transaction (${code}): another one changed the same records at the same moment; send it again`, { cause: err })
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

/** The name of the metrics partition of `day` (days since the epoch). */
function partitionName (day: number): string {
  return `metrics_d${day}`
}

export interface PostgresOptions {
  /** Most connections this node opens. */
  max?: number
}

export type Row = Record<string, unknown>
type Client = pg.PoolClient

/** Bigint columns (times, sequences, register values: all fit in a double) read as numbers. */
const TYPES = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => oid === 20 ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser
}

function quoted (names: readonly string[]): string {
  return names.map(name => `"${name}"`).join(', ')
}

/** A multi-row insert of `rows` into `table`'s `columns`: its text and parameters. */
function insertOf (table: string, columns: readonly string[], rows: readonly Row[]): [string, unknown[]] {
  const params: unknown[] = []
  const tuples = rows.map(row => `(${columns.map(column => { params.push(row[column]); return `$${params.length}` }).join(', ')})`)
  return [`insert into ${table} (${quoted(columns)}) values ${tuples.join(', ')}`, params]
}

export class PostgresStorage implements TelemetryStorage {
  readonly backend = 'postgres'
  readonly #config: pg.ClientConfig
  readonly #pool: pg.Pool
  /** Days whose metrics partition is known to exist. */
  readonly #partitions = new Set<number>()
  /** The other nodes sharing the database, told this one's events. */
  readonly #channel: NodeChannel

  constructor (url: string, options: PostgresOptions = {}) {
    this.#config = {
      connectionString: url,
      connectionTimeoutMillis: 5000,
      application_name: 'berth-ingest',
      options: `-c search_path=${SCHEMA} -c standard_conforming_strings=on`,
      types: TYPES
    }
    this.#pool = new pg.Pool({ ...this.#config, max: options.max ?? 10 })
    // NOTIFY in a transaction of its own: PostgreSQL serialises the commits of transactions that notify, so a request's never does.
    this.#channel = new NodeChannel(this.#config, async payloads => { await this.#query('select pg_notify($1, payload) from unnest($2::text[]) as payload', [EVENTS_CHANNEL, payloads]) })
    // An idle connection the server closed (a restart): the next query finds out, and answers 503.
    this.#pool.on('error', () => {})
  }

  async open (): Promise<number> {
    await this.migrate()
    const today = Math.floor(Date.now() / DAY_MS)
    await this.#ensurePartitions([today, today + 1])
    await this.#groupUngroupedFaults()
    return 0
  }

  /**
   * Count faults stored before crash issues existed (or copied in without theirs) into their issues, a
   * batch a transaction, each batch starting past the last (the index entries of faults grouped
   * before stay until a vacuum: a scan from the start would step over all of them every time).
   */
  async #groupUngroupedFaults (): Promise<void> {
    let after: [string, number, number] = ['', -1, -1]
    for (;;) {
      const grouped = await this.#transaction(async client => {
        const faults = (await client.query<StoredFault>(`select ${quoted(SERIES.faults.columns)} from faults where issue is null and (device, received_at, sequence) > ($1, $2, $3)
          order by device, received_at, sequence limit ${GROUP_BATCH} for update skip locked`, after)).rows
        const aliases: Array<{ pc: string, issue: IssueIdentity }> = []
        const occurrences = faults.map((stored): Occurrence => {
          const issue = issueOf(stored)
          if (issue.grouping === 'symbol') aliases.push({ pc: pcIssue(stored).id, issue })
          return { issue, fault: { ...stored, issue: issue.id }, sign: 1 }
        })
        await applyToIssues(client, occurrences, aliases)
        return faults
      })
      if (grouped.length < GROUP_BATCH) return
      const last = grouped[grouped.length - 1]
      after = [last.device, last.received_at, last.sequence]
    }
  }

  /** Apply the migrations not applied yet, under the migration lock (idempotent; safe when nodes start together). */
  async migrate (): Promise<number[]> {
    return await this.#transaction(async client => await migrateSchema(client, SCHEMA, [LOCK_SPACE, MIGRATION_LOCK], MIGRATIONS))
  }

  async close (): Promise<void> {
    await this.#channel.close()
    await this.#pool.end()
  }

  async #query<T = Row> (text: string, params: unknown[] = []): Promise<T[]> {
    return await guarded(async () => (await this.#pool.query(text, params)).rows as T[])
  }

  /** Run `work` in one transaction on one connection; a connection that failed is not reused. */
  async #transaction<T> (work: (client: Client) => Promise<T>): Promise<T> {
    return await guarded(async () => await inTransaction(this.#pool, work))
  }

  /** Create the metrics partitions of `days` that do not exist yet (in a transaction of their own, under the partition lock). */
  async #ensurePartitions (days: Iterable<number>): Promise<void> {
    const missing = [...new Set(days)].filter(day => !this.#partitions.has(day))
    if (missing.length === 0) return
    await this.#transaction(async client => {
      await client.query('select pg_advisory_xact_lock($1, $2)', [LOCK_SPACE, PARTITION_LOCK])
      for (const day of missing) {
        await client.query(`create table if not exists ${partitionName(day)} partition of metrics for values from (${day * DAY_MS}) to (${(day + 1) * DAY_MS})`)
      }
    })
    for (const day of missing) this.#partitions.add(day)
  }

  async announce (events: readonly TelemetryEvent[]): Promise<void> {
    await this.#channel.announce(events)
  }

  async listen (heard: (events: TelemetryEvent[]) => void): Promise<void> {
    await guarded(async () => { await this.#channel.listen(heard) })
  }

  /**
   * Under a session advisory lock of the job (tried, not waited for: a node that finds it held leaves
   * the run to its holder, and a node that dies releases it with its connection), with the time of the
   * job's last run in scheduled_jobs.
   */
  async scheduled (name: string, everyMs: number, work: () => Promise<unknown>): Promise<boolean> {
    const client = await guarded(async () => await this.#pool.connect())
    const ignore = (): void => {}
    client.on('error', ignore)
    let failed: unknown
    try {
      const [{ locked }] = (await guarded(async () => await client.query<{ locked: boolean }>('select pg_try_advisory_lock($1, hashtext($2)) as locked', [JOB_LOCK_SPACE, name]))).rows
      if (!locked) return false
      try {
        const now = Date.now()
        const [last] = (await guarded(async () => await client.query<{ at: number }>('select at from scheduled_jobs where name = $1', [name]))).rows
        if (last !== undefined && now - last.at < everyMs / 2) return false
        await work()
        await guarded(async () => { await client.query('insert into scheduled_jobs (name, at) values ($1, $2) on conflict (name) do update set at = excluded.at', [name, now]) })
        return true
      } finally {
        await client.query('select pg_advisory_unlock($1, hashtext($2))', [JOB_LOCK_SPACE, name]).catch((err: unknown) => { failed = err })
      }
    } catch (err) {
      failed = err
      throw err
    } finally {
      // A failed connection is closed by the pool, not taken back: it keeps the no-op listener, since the
      // server may still end it with an error (a database being stopped) while it closes.
      if (!(failed instanceof Error)) client.off('error', ignore)
      // A connection whose unlock failed still holds the lock: it is closed, which releases it.
      client.release(failed instanceof Error ? failed : undefined)
    }
  }

  /** Run `work` in a transaction holding the turns of `devices` (advisory locks, taken in id order so two requests never wait on each other). */
  async #withDevices<T> (devices: Iterable<string>, work: (client: Client) => Promise<T>): Promise<T> {
    const ids = [...new Set(devices)].sort()
    return await this.#transaction(async client => {
      if (ids.length > 0) await client.query('select pg_advisory_xact_lock($1, hashtext(id)) from unnest($2::text[]) as id order by id', [DEVICE_LOCK_SPACE, ids])
      return await work(client)
    })
  }

  /**
   * A request in three round trips: `begin` with its turns and reads (read_request), its writes
   * (write_chunks_issues), `commit`. A write without a read takes the turns first. With faults, one
   * more before the writes reads their issues' aliases, and the writes read the issues (taking their
   * turns), which go back with the commit.
   */
  async ingest<T> (devices: Iterable<string>, work: (session: IngestSession) => Promise<T>): Promise<T> {
    const lock = [...new Set(devices)].sort()
    return await guarded(async () => {
      const client = await this.#pool.connect()
      const ignore = (): void => {}
      client.on('error', ignore)
      let open = false
      let marks: ReadonlyMap<string, StoredMark> = new Map()
      let failed: unknown
      try {
        const result = await work({
          read: async (ids, pairs, sealed) => {
            open = true
            const answers = await client.query(`begin; select read_request(${jsonLiteral(readRequest(lock, ids, pairs, sealed))}) as reads`) as unknown as pg.QueryResult[]
            const reads = parseReads(answers[1].rows[0].reads)
            marks = reads.marks
            return reads
          },
          write: async writes => {
            await this.#ensurePartitions(writes.metrics.map(({ metric }) => Math.floor(metric.received_at / DAY_MS)))
            if (!open) await client.query(`begin; select read_request(${jsonLiteral(readRequest(lock, [], [], []))})`)
            open = true
            // The faults join their crash issues in this transaction: inserted carrying them, then counted (the issues' turns taken in id order).
            const aliases = writes.faults.length === 0 ? new Map<string, IssueIdentity>() : await aliasesOf(client, writes.faults.map(fault => pcIssue(fault).id))
            const occurrences = newOccurrences(writes.faults, pc => aliases.get(pc))
            const issues = occurrences.length === 0 ? null : jsonText(readIssuesRequest(occurrences))
            const [{ read }] = (await client.query<{ read: IssuesRead | null }>({
              name: 'berth_ingest_write', text: 'select write_chunks_issues($1::jsonb, $2::jsonb) as read', values: [jsonText(writeRequest(writes, marks)), issues]
            })).rows
            let events: IssueEvent[] = []
            if (read === null) {
              await client.query('commit')
            } else {
              const update = issuesUpdate(read, occurrences, [], true)
              events = update.events
              // The issues written and the commit in one round trip: should apply_issues fail, the commit is not run and the transaction is rolled back below.
              await client.query(`select apply_issues(${jsonLiteral(update.request)}); commit`)
            }
            open = false
            return events
          }
        })
        if (open) await client.query('commit')
        return result
      } catch (err) {
        failed = err
        if (open) await client.query('rollback').catch(() => {})
        throw err
      } finally {
        // A failed connection is closed by the pool, not taken back: it keeps the no-op listener, since the
        // server may still end it with an error (a database being stopped) while it closes.
        if (!(failed instanceof Error)) client.off('error', ignore)
        client.release(failed instanceof Error ? failed : undefined)
      }
    })
  }

  async device (id: string): Promise<Device | undefined> {
    return (await this.#query<Device>(`select ${quoted(DEVICE_COLUMNS)} from devices where id = $1`, [id]))[0]
  }

  devices (after?: string): AsyncIterable<Device> {
    return this.#keyset<Device>('devices', DEVICE_COLUMNS, 'id', after, row => row.id)
  }

  async changeDevice (id: string, change: (current: Device | undefined) => DeviceChange | undefined): Promise<Device | undefined> {
    return await this.#withDevices([id], async client => {
      const [current] = (await client.query<Device>(`select ${quoted(DEVICE_COLUMNS)} from devices where id = $1`, [id])).rows
      const next = change(current)
      if (next === undefined) return undefined
      await upsertDevices(client, [next.device])
      if (next.key instanceof Uint8Array) await client.query('insert into device_keys (device, key) values ($1, $2) on conflict (device) do update set key = excluded.key', [id, Buffer.from(next.key)])
      if (next.key === null) await client.query('delete from device_keys where device = $1', [id])
      return next.device
    })
  }

  async deleteDevice (id: string): Promise<boolean> {
    return await this.#withDevices([id], async client => {
      const deleted = await client.query('delete from devices where id = $1', [id])
      if (deleted.rowCount === 0) return false
      for (const table of ['chunk_marks', 'faults', 'metrics', 'reboots', 'traces', 'heartbeats']) await client.query(`delete from ${table} where device = $1`, [id])
      return true
    })
  }

  async silentDevices (before: number): Promise<string[]> {
    return (await this.#query<{ id: string }>('select id from devices where not offline and last_seen < $1 order by id', [before])).map(row => row.id)
  }

  async markOffline (ids: readonly string[], silent: (device: Device) => boolean): Promise<Device[]> {
    return await this.#withDevices(ids, async client => {
      const current = (await client.query<Device>(`select ${quoted(DEVICE_COLUMNS)} from devices where id = any($1::text[]) order by id`, [[...ids]])).rows
      const marked = current.filter(silent).map(device => ({ ...device, offline: true }))
      if (marked.length > 0) await client.query('update devices set offline = true where id = any($1::text[])', [marked.map(d => d.id)])
      return marked
    })
  }

  async * series<K extends SeriesKind> (kind: K, start: SeriesKey, end: number, exclusive = false): AsyncIterable<{ key: SeriesKey, value: SeriesRecord[K] }> {
    const { columns, key } = SERIES[kind]
    const device = String(start[0])
    let from = start.slice(1).map(Number)
    let strict = exclusive
    for (;;) {
      const names = key.slice(0, from.length)
      // A start of the device alone takes all its keys (every key of it sorts after [device]).
      const after = names.length === 0 ? '' : `and (${names.join(', ')}) ${strict ? '>' : '>='} (${names.map((_, i) => `$${i + 2}`).join(', ')})`
      const rows = await this.#query<Record<string, number | string | null>>(
        `select ${quoted([...columns, ...(kind === 'metrics' ? ['entry'] : [])])} from ${kind}
         where device = $1 ${after} and received_at < $${names.length + 2}
         order by ${key.join(', ')} limit ${PAGE}`, [device, ...from, end])
      for (const row of rows) {
        const rowKey: SeriesKey = [device, ...key.map(k => row[k] as number)]
        if (kind === 'metrics') delete row.entry
        // A fault without a coredump has none, as on LMDB.
        if (kind === 'faults' && row.coredump === null) delete row.coredump
        yield { key: rowKey, value: row as unknown as SeriesRecord[K] }
      }
      if (rows.length < PAGE) return
      const last = rows[rows.length - 1]
      from = [last.received_at as number, last.sequence as number, ...(kind === 'metrics' ? [Number(last.entry ?? 0)] : [])]
      strict = true
    }
  }

  async * faultsSince (since: number): AsyncIterable<StoredFault> {
    let after: [number, string, number] = [since, '', -1]
    for (;;) {
      const rows = await this.#query<StoredFault>(`
        select ${quoted(SERIES.faults.columns)} from faults where received_at >= $1 and (received_at, device, sequence) > ($2, $3, $4)
        order by received_at, device, sequence limit ${PAGE}`, [since, ...after])
      yield * rows
      if (rows.length < PAGE) return
      const last = rows[rows.length - 1]
      after = [last.received_at, last.device, last.sequence]
    }
  }

  async faultCount (since: number, issue: string | null): Promise<number> {
    return (await this.#query<{ n: number }>('select count(*)::int as n from faults where received_at >= $1 and ($2::text is null or issue = $2)', [since, issue]))[0].n
  }

  async latestMetrics (key: string, since: number, until: number, group: string | null): Promise<Map<string, number>> {
    // Rows of the time range found through the BRIN index on received_at (metrics arrive in time order).
    const rows = await this.#query<{ device: string, value: number }>(`
      select distinct on (m.device) m.device, m.value from metrics m
      where m.key = $1 and m.received_at >= $2 and m.received_at < $3
        and ($4::text is null or m.device in (select id from devices where "group" = $4))
      order by m.device, m.received_at desc, m.sequence desc, m.entry desc`, [key, since, until, group])
    return new Map(rows.map(row => [row.device, row.value]))
  }

  async chunkCount (): Promise<number> {
    return (await this.#query<{ n: number }>('select count(*)::bigint as n from (select distinct device, sequence from chunk_marks) m'))[0].n
  }

  async deleteBefore (cutoff: number): Promise<number> {
    const dropped: number[] = []
    const removed = await this.#transaction(async client => {
      let removed = 0
      for (const table of ['faults', 'reboots', 'traces', 'heartbeats']) removed += (await client.query(`delete from ${table} where received_at < $1`, [cutoff])).rowCount ?? 0
      // Whole days before the cutoff: their partitions are dropped; the day of the cutoff loses its older rows.
      const partitions = (await client.query<{ name: string }>(`
        select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid join pg_class p on p.oid = i.inhparent
        join pg_namespace n on n.oid = p.relnamespace where p.relname = 'metrics' and n.nspname = $1`, [SCHEMA])).rows
      for (const { name } of partitions) {
        const day = Number(/^metrics_d(\d+)$/.exec(name)?.[1] ?? NaN)
        if (!Number.isInteger(day) || (day + 1) * DAY_MS > cutoff) continue
        removed += (await client.query<{ n: number }>(`select count(*)::bigint as n from ${partitionName(day)}`)).rows[0].n
        await client.query(`drop table ${partitionName(day)}`)
        dropped.push(day)
      }
      removed += (await client.query('delete from metrics where received_at < $1', [cutoff])).rowCount ?? 0
      await client.query(`
        delete from chunk_marks m using (select device, sequence from chunk_marks group by device, sequence having max(at) < $1) old
        where m.device = old.device and m.sequence = old.sequence`, [cutoff])
      return removed
    })
    for (const day of dropped) this.#partitions.delete(day)
    return removed
  }

  async group (name: string): Promise<Group | undefined> {
    return (await this.#query<Group>(`select ${quoted(GROUP_COLUMNS)} from groups where name = $1`, [name]))[0]
  }

  groups (after?: string): AsyncIterable<Group> {
    return this.#keyset<Group>('groups', GROUP_COLUMNS, 'name', after, row => row.name)
  }

  async createGroup (group: Group): Promise<boolean> {
    const [text, params] = insertOf('groups', GROUP_COLUMNS, [group as unknown as Row])
    return (await guarded(async () => await this.#pool.query(`${text} on conflict (name) do nothing`, params))).rowCount === 1
  }

  async putGroup (group: Group): Promise<void> {
    await this.#upsert('groups', GROUP_COLUMNS, 'name', group as unknown as Row)
  }

  async removeGroup (name: string): Promise<void> {
    await this.#query('delete from groups where name = $1', [name])
  }

  async groupMembers (name: string): Promise<number> {
    return (await this.#query<{ n: number }>('select count(*)::bigint as n from devices where "group" = $1', [name]))[0].n
  }

  async otaTarget (id: string): Promise<OtaTarget | undefined> {
    return (await this.#query<OtaTarget>(`select ${quoted(OTA_COLUMNS)} from ota_targets where id = $1`, [id]))[0]
  }

  otaTargets (after?: string): AsyncIterable<OtaTarget> {
    return this.#keyset<OtaTarget>('ota_targets', OTA_COLUMNS, 'id', after, row => row.id)
  }

  async putOtaTarget (target: OtaTarget): Promise<void> {
    await this.#upsert('ota_targets', OTA_COLUMNS, 'id', target as unknown as Row)
  }

  async removeOtaTarget (id: string): Promise<void> {
    await this.#query('delete from ota_targets where id = $1', [id])
  }

  async elf (buildId: string): Promise<ElfFile | undefined> {
    return (await this.#query<ElfFile>(`select ${quoted(ELF_COLUMNS)} from elf_files where build_id = $1`, [buildId]))[0]
  }

  async elves (): Promise<ElfFile[]> {
    return await this.#query<ElfFile>(`select ${quoted(ELF_COLUMNS)} from elf_files order by build_id`)
  }

  async putElf ({ record, version, bytes }: ElfUpload): Promise<void> {
    await this.#transaction(async client => {
      const columns = bytes !== undefined ? [...ELF_COLUMNS, 'bytes'] : ELF_COLUMNS
      const [text, params] = insertOf('elf_files', columns, [{ ...record, bytes }])
      await client.query(`${text} on conflict (build_id) do update set ${columns.slice(1).map(c => `"${c}" = excluded."${c}"`).join(', ')}`, params)
      if (version !== null) await client.query('insert into elf_versions (name, build_id) values ($1, $2) on conflict (name) do update set build_id = excluded.build_id', [version, record.build_id])
    })
  }

  async elfBytes (buildId: string): Promise<Buffer | undefined> {
    return (await this.#query<{ bytes: Buffer | null }>('select bytes from elf_files where build_id = $1', [buildId]))[0]?.bytes ?? undefined
  }

  async pendingBuilds (): Promise<string[]> {
    return (await this.#query<{ build: string }>("select distinct coalesce(build_id, '') as build from faults where pending order by 1")).map(row => row.build)
  }

  async pendingFaults (buildId: string, after: PendingKey | undefined, limit: number): Promise<PendingKey[]> {
    const [, device, at, sequence] = after ?? [buildId, '', -1, -1]
    const rows = await this.#query<{ device: string, received_at: number, sequence: number }>(`
      select device, received_at, sequence from faults where pending and coalesce(build_id, '') = $1
      and (device, received_at, sequence) > ($2, $3, $4) order by device, received_at, sequence limit $5`, [buildId, device, at, sequence, limit])
    return rows.map(row => [buildId, row.device, row.received_at, row.sequence])
  }

  async isPending ([, device, at, sequence]: PendingKey): Promise<boolean> {
    return (await this.#query('select 1 from faults where device = $1 and received_at = $2 and sequence = $3 and pending', [device, at, sequence])).length === 1
  }

  async fault ([device, at, sequence]: SeriesKey): Promise<StoredFault | undefined> {
    return (await this.#query<StoredFault>(`select ${quoted(SERIES.faults.columns)} from faults where device = $1 and received_at = $2 and sequence = $3`, [device, at, sequence]))[0]
  }

  async setSymbols (updates: readonly SymbolUpdate[]): Promise<{ symbols: string[], events: IssueEvent[] }> {
    return await this.#transaction(async client => {
      const symbols: string[] = []
      const occurrences: Occurrence[] = []
      const aliases: Array<{ pc: string, issue: IssueIdentity }> = []
      for (const { key: [, device, at, sequence], symbol, backtrace, final } of updates) {
        const [current] = (await client.query<StoredFault>(`select ${quoted(SERIES.faults.columns)} from faults where device = $1 and received_at = $2 and sequence = $3 for update`, [device, at, sequence])).rows
        if (current === undefined) continue
        await client.query('update faults set symbol = $4, pending = pending and not $5, backtrace = $6::jsonb where device = $1 and received_at = $2 and sequence = $3',
          [device, at, sequence, symbol, final, JSON.stringify(backtrace ?? [])])
        if (current.symbol === symbol) continue
        symbols.push(symbol)
        const move = final ? moveOf(current, { symbol, backtrace: backtrace ?? [] }) : undefined
        if (move === undefined) continue
        occurrences.push(...move.occurrences)
        aliases.push(move.alias)
      }
      return { symbols, events: await applyToIssues(client, occurrences, aliases) }
    })
  }

  async issues (): Promise<CrashIssue[]> {
    return (await this.#query<{ issue: CrashIssue }>('select issue from crash_issues')).map(row => row.issue)
  }

  async issue (id: string): Promise<CrashIssue | undefined> {
    return (await this.#query<{ issue: CrashIssue }>('select issue from crash_issues where id = $1', [id]))[0]?.issue
  }

  async issueMembers (id: string, kind: MemberKind): Promise<IssueMember[]> {
    return await this.#query<IssueMember>('select issue, kind, member, count, last_seen from crash_issue_members where issue = $1 and kind = $2 order by member', [id, kind])
  }

  async issuesWith (kind: MemberKind, member: string): Promise<string[]> {
    return (await this.#query<{ issue: string }>('select issue from crash_issue_members where kind = $1 and member = $2', [kind, member])).map(row => row.issue)
  }

  async deviceFaultCounts (): Promise<Map<string, number>> {
    const rows = await this.#query<{ member: string, faults: number }>("select member, sum(count)::bigint as faults from crash_issue_members where kind = 'device' group by member")
    return new Map(rows.map(row => [row.member, row.faults]))
  }

  async issueFaults (id: string, before: IssueFaultKey | undefined, limit: number): Promise<StoredFault[]> {
    const [at, device, sequence] = before ?? [Number.MAX_SAFE_INTEGER, '', 0]
    return await this.#query<StoredFault>(`select ${quoted(SERIES.faults.columns)} from faults where issue = $1 and (received_at, device, sequence) < ($2, $3, $4)
      order by received_at desc, device desc, sequence desc limit $5`, [id, at, device, sequence, limit])
  }

  async changeIssue (id: string, change: (current: CrashIssue) => CrashIssue): Promise<CrashIssue | undefined> {
    return await this.#transaction(async client => {
      // The issue's turn, as read_issues takes it: a fault counted meanwhile cannot write back the status it read before.
      await client.query('select pg_advisory_xact_lock($1, hashtext($2))', [ISSUE_LOCK_SPACE, id])
      const [row] = (await client.query<{ issue: CrashIssue }>('select issue from crash_issues where id = $1', [id])).rows
      if (row === undefined) return undefined
      const next = change(row.issue)
      await client.query('update crash_issues set issue = $2 where id = $1', [id, jsonText(next)])
      return next
    })
  }

  async document<T> (kind: DocumentKind, id: string): Promise<T | undefined> {
    return (await this.#query<{ doc: T }>('select doc from documents where kind = $1 and id = $2', [kind, id]))[0]?.doc
  }

  async documents<T> (kind: DocumentKind): Promise<T[]> {
    return (await this.#query<{ doc: T }>('select doc from documents where kind = $1 order by id', [kind])).map(row => row.doc)
  }

  async changeDocument<T> (kind: DocumentKind, id: string, change: (current: T | undefined) => T | null | undefined): Promise<T | undefined> {
    return await this.#transaction(async client => {
      await client.query('select pg_advisory_xact_lock($1, hashtext($2))', [DOCUMENT_LOCK_SPACE, `${kind}/${id}`])
      const current = (await client.query<{ doc: T }>('select doc from documents where kind = $1 and id = $2', [kind, id])).rows[0]?.doc
      const next = change(current)
      if (next === undefined) return current
      if (next === null) await client.query('delete from documents where kind = $1 and id = $2', [kind, id])
      else await client.query('insert into documents (kind, id, doc) values ($1, $2, $3) on conflict (kind, id) do update set doc = excluded.doc', [kind, id, jsonText(next)])
      return next ?? undefined
    })
  }

  async putBlob (id: string, bytes: Buffer): Promise<void> {
    await this.#query('insert into blobs (id, bytes) values ($1, $2) on conflict (id) do update set bytes = excluded.bytes', [id, bytes])
  }

  async blob (id: string): Promise<Buffer | undefined> {
    return (await this.#query<{ bytes: Buffer }>('select bytes from blobs where id = $1', [id]))[0]?.bytes
  }

  async removeBlob (id: string): Promise<void> {
    await this.#query('delete from blobs where id = $1', [id])
  }

  /**
   * Rows copied in from elsewhere (`berth telemetry migrate`): multi-row inserts in one transaction,
   * rows whose key is there already left as they are, so a copy can run again. Returns rows inserted.
   */
  async importRows (table: string, columns: readonly string[], rows: readonly Row[]): Promise<number> {
    if (table === 'metrics') await this.#ensurePartitions(rows.map(row => Math.floor(Number(row.received_at) / DAY_MS)))
    return await this.#transaction(async client => {
      let inserted = 0
      for (let i = 0; i < rows.length; i += INSERT_ROWS) {
        const [text, params] = insertOf(table, columns, rows.slice(i, i + INSERT_ROWS))
        inserted += (await client.query(`${text} on conflict do nothing`, params)).rowCount ?? 0
      }
      return inserted
    })
  }

  /** Insert `row`, or replace the row of its `key`. */
  async #upsert (table: string, columns: readonly string[], key: string, row: Row): Promise<void> {
    const [text, params] = insertOf(table, columns, [row])
    await this.#query(`${text} on conflict (${key}) do update set ${columns.filter(c => c !== key).map(c => `"${c}" = excluded."${c}"`).join(', ')}`, params)
  }

  /** Rows of `table` in `key` order after `after`, a page at a time. */
  async * #keyset<T> (table: string, columns: readonly string[], key: string, after: string | undefined, keyOf: (row: T) => string): AsyncIterable<T> {
    let last = after
    for (;;) {
      const rows = last === undefined
        ? await this.#query<T>(`select ${quoted(columns)} from ${table} order by ${key} limit ${PAGE}`)
        : await this.#query<T>(`select ${quoted(columns)} from ${table} where ${key} > $1 order by ${key} limit ${PAGE}`, [last])
      yield * rows
      if (rows.length < PAGE) return
      last = keyOf(rows[rows.length - 1])
    }
  }
}

export const GROUP_COLUMNS = ['name', 'description', 'created_at', 'updated_at'] as const
export const OTA_COLUMNS = ['id', 'group', 'software_type', 'version', 'build_id', 'url', 'created_at'] as const
export const ELF_COLUMNS = ['build_id', 'software_type', 'software_version', 'size', 'file', 'uploaded_at'] as const

async function upsertDevices (client: Client, devices: readonly Device[]): Promise<void> {
  if (devices.length === 0) return
  const [text, params] = insertOf('devices', DEVICE_COLUMNS, devices as unknown as Row[])
  await client.query(`${text} on conflict (id) do update set ${DEVICE_COLUMNS.filter(c => c !== 'id').map(c => `"${c}" = excluded."${c}"`).join(', ')}`, params)
}
