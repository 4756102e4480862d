// The campaign store on PostgreSQL (`[campaign].database_url`), shared by every instance of the app:
// one table `campaign.records (tbl, key, value jsonb)` ordered by key in byte order (collation "C"),
// migrated at start under an advisory lock. A transaction runs on one connection and first takes a
// transaction-scoped advisory lock on its subject, so two instances writing for the same donor (or
// document) take turns and each reads what the other committed. Inside a transaction, writes are kept
// (and a key read once is remembered) until the end, then sent in one statement for the puts and one
// for the deletes: an import of thousands of rows costs its reads, not a round trip per write. A database that cannot be reached
// is answered 503 (BERTH_DATABASE_UNAVAILABLE); the pool connects again on the next request.
import pg from 'pg'
import { StartupError, Unavailable } from '../../../kernel/index.js'
import { inTransaction, migrateSchema, redactUrl, unreachable, type Migration } from '../../../kernel/runtime-api.js'
import { CAMPAIGN_CODES } from '../errors.js'
import { arrayFrom, subjectList, type CampaignStore, type RangeOptions, type Subjects, type Table, type TableKey, type Transaction } from './contract.js'

export const SCHEMA = 'campaign'
/** First key of the store's advisory locks (two-key form): migrations, then subjects (hashed). */
const LOCK_SPACE = 0x43616d70
const MIGRATION_LOCK = 1
const SUBJECT_LOCK_SPACE = LOCK_SPACE + 1
/** Rows read per round trip of a range. */
const BATCH = 500

const MIGRATIONS: readonly Migration[] = [{
  version: 1,
  name: 'records',
  sql: `create table ${SCHEMA}.records (
    tbl text not null,
    key text collate "C" not null,
    value jsonb not null,
    primary key (tbl, key)
  )`
}]

/**
 * Tuple keys as text that sorts as the tuple does: each element marked (numbers before strings, as in
 * LMDB), numbers as 16 zero-padded digits, elements joined by U+0001. Plain string keys stay as they are.
 */
const NUMBER = '\u0002'
const STRING = '\u0003'
const SEPARATOR = '\u0001'

function encodeKey (key: TableKey): string {
  if (typeof key === 'string') return key
  return key.map(part => typeof part === 'number' ? NUMBER + String(part).padStart(16, '0') : STRING + part).join(SEPARATOR)
}

function decodeKey (text: string): TableKey {
  if (!text.startsWith(NUMBER) && !text.startsWith(STRING)) return text
  return text.split(SEPARATOR).map(part => part.startsWith(NUMBER) ? Number(part.slice(1)) : part.slice(1))
}

/** `err` as a 503 when it says the database cannot be reached; else as it is. */
function classified (err: unknown): unknown {
  const cause = unreachable(err)
  if (cause === undefined) return err
  return new Unavailable(`the campaign database cannot be reached (${cause}): ${(err as Error).message}`, { code: CAMPAIGN_CODES.DATABASE_UNAVAILABLE, cause: err })
}

async function guarded<T> (work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (err) {
    throw classified(err)
  }
}

type Queryable = Pick<pg.ClientBase, 'query'>

/** A transaction's view of a key it read or wrote: the value (undefined when absent or removed), and when written, the JSON it is sent as. */
interface Known { value: unknown, json?: string | undefined, written: boolean }
/** Rows per statement when a transaction's writes are sent. */
const WRITE_BATCH = 2000

/** What a transaction knows of its keys (by table and encoded key), and sends at its end. */
class PendingWrites {
  readonly #known = new Map<string, Known & { tbl: string, key: string }>()

  known (tbl: string, key: string): Known | undefined {
    return this.#known.get(`${tbl}\u0000${key}`)
  }

  /** A value read from the database (a write is never forgotten for it). */
  remember (tbl: string, key: string, value: unknown): void {
    const id = `${tbl}\u0000${key}`
    if (this.#known.get(id)?.written !== true) this.#known.set(id, { tbl, key, value, written: false })
  }

  /** A put (its JSON taken now, as a write made at once would be) or, with undefined, a removal. */
  write (tbl: string, key: string, value: unknown): void {
    this.#known.set(`${tbl}\u0000${key}`, { tbl, key, value, json: value === undefined ? undefined : JSON.stringify(value), written: true })
  }

  /** Every write, the puts and the deletes each in statements of WRITE_BATCH rows. */
  async flush (db: Queryable): Promise<void> {
    const writes = [...this.#known.values()].filter(entry => entry.written)
    const puts = writes.filter(entry => entry.value !== undefined)
    const deletes = writes.filter(entry => entry.value === undefined)
    for (let i = 0; i < deletes.length; i += WRITE_BATCH) {
      const batch = deletes.slice(i, i + WRITE_BATCH)
      await db.query('delete from records where (tbl, key) in (select * from unnest($1::text[], $2::text[]))', [batch.map(e => e.tbl), batch.map(e => e.key)])
    }
    for (let i = 0; i < puts.length; i += WRITE_BATCH) {
      const batch = puts.slice(i, i + WRITE_BATCH)
      await db.query('insert into records (tbl, key, value) select * from unnest($1::text[], $2::text[], $3::jsonb[]) on conflict (tbl, key) do update set value = excluded.value',
        [batch.map(e => e.tbl), batch.map(e => e.key), batch.map(e => e.json)])
    }
  }
}

class PostgresTable<V, K extends TableKey> implements Table<V, K> {
  readonly #db: Queryable
  readonly #name: string
  /** Inside a transaction: its writes and what it has read. */
  readonly #pending: PendingWrites | undefined

  constructor (db: Queryable, name: string, pending?: PendingWrites) {
    this.#db = db
    this.#name = name
    this.#pending = pending
  }

  async get (key: K): Promise<V | undefined> {
    const encoded = encodeKey(key)
    const known = this.#pending?.known(this.#name, encoded)
    if (known !== undefined) return known.value as V | undefined
    const value = (await this.#rows<{ value: V }>('select value from records where tbl = $1 and key = $2', [this.#name, encoded]))[0]?.value
    this.#pending?.remember(this.#name, encoded, value)
    return value
  }

  async has (key: K): Promise<boolean> {
    return await this.get(key) !== undefined
  }

  async count (): Promise<number> {
    return Number((await this.#rows<{ n: string }>('select count(*) as n from records where tbl = $1', [this.#name]))[0].n)
  }

  async * range (options: RangeOptions = {}): AsyncIterable<{ key: K, value: V }> {
    const reverse = options.reverse === true
    let from = options.start === undefined ? undefined : encodeKey(options.start)
    let inclusive = options.exclusiveStart !== true
    const until = options.end === undefined ? undefined : encodeKey(options.end)
    let left = options.limit ?? Infinity
    while (left > 0) {
      const params: unknown[] = [this.#name]
      const where = ['tbl = $1']
      if (from !== undefined) where.push(`key ${reverse ? '<' : '>'}${inclusive ? '=' : ''} $${params.push(from)}`)
      if (until !== undefined) where.push(`key ${reverse ? '>' : '<'} $${params.push(until)}`)
      const rows = await this.#rows<{ key: string, value: V }>(
        `select key, value from records where ${where.join(' and ')} order by key ${reverse ? 'desc' : 'asc'} limit ${Math.min(BATCH, left)}`, params)
      for (const row of rows) yield { key: decodeKey(row.key) as K, value: row.value }
      if (rows.length < Math.min(BATCH, left)) return
      left -= rows.length
      from = rows[rows.length - 1].key
      inclusive = false
    }
  }

  async list (options: RangeOptions = {}): Promise<Array<{ key: K, value: V }>> {
    return await arrayFrom(this.range(options))
  }

  async put (key: K, value: V): Promise<void> {
    if (this.#pending !== undefined) return this.#pending.write(this.#name, encodeKey(key), value)
    await this.#rows('insert into records (tbl, key, value) values ($1, $2, $3) on conflict (tbl, key) do update set value = excluded.value',
      [this.#name, encodeKey(key), JSON.stringify(value)])
  }

  async remove (key: K): Promise<void> {
    if (this.#pending !== undefined) return this.#pending.write(this.#name, encodeKey(key), undefined)
    await this.#rows('delete from records where tbl = $1 and key = $2', [this.#name, encodeKey(key)])
  }

  async #rows<R> (text: string, params: unknown[]): Promise<R[]> {
    return await guarded(async () => (await this.#db.query(text, params)).rows as R[])
  }
}

export class PostgresCampaignStore implements CampaignStore {
  readonly #pool: pg.Pool

  private constructor (pool: pg.Pool) {
    this.#pool = pool
  }

  /** A store on the database at `url`, its schema migrated; a StartupError naming the setting when it cannot be prepared. */
  static async open (url: string, setting: string): Promise<PostgresCampaignStore> {
    const pool = new pg.Pool({ connectionString: url, connectionTimeoutMillis: 5000, application_name: 'berth-campaign', options: `-c search_path=${SCHEMA}`, max: 10 })
    // An idle connection the server closed (a restart): the next query finds out, and answers 503.
    pool.on('error', () => {})
    try {
      await inTransaction(pool, async client => await migrateSchema(client, SCHEMA, [LOCK_SPACE, MIGRATION_LOCK], MIGRATIONS))
    } catch (err) {
      await pool.end()
      throw new StartupError(`${setting}: the PostgreSQL database at ${redactUrl(url)} could not be prepared: ${(err as Error).message}`)
    }
    return new PostgresCampaignStore(pool)
  }

  table<V, K extends TableKey = string> (name: string): Table<V, K> {
    return new PostgresTable<V, K>(this.#pool, name)
  }

  async transaction<T> (subject: Subjects, fn: (tx: Transaction) => Promise<T>): Promise<T> {
    return await guarded(async () => await inTransaction(this.#pool, async client => {
      // Several subjects are locked in one order, so two transactions sharing them cannot wait on each other.
      for (const name of subjectList(subject)) await client.query('select pg_advisory_xact_lock($1, hashtext($2))', [SUBJECT_LOCK_SPACE, name])
      const pending = new PendingWrites()
      const result = await fn({ table: <V, K extends TableKey = string>(name: string) => new PostgresTable<V, K>(client, name, pending) })
      await pending.flush(client)
      return result
    }))
  }

  async close (): Promise<void> {
    await this.#pool.end()
  }
}
