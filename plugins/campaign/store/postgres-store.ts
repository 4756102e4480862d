// The campaign store on PostgreSQL (`[campaign].database_url`), shared by every instance of the app:
// one table `campaign.records (tbl, key, value jsonb)` ordered by key in byte order (collation "C"),
// migrated at start under an advisory lock. A transaction runs on one connection and first takes a
// transaction-scoped advisory lock on its subject, so two instances writing for the same donor (or
// document) take turns and each reads what the other committed. A database that cannot be reached
// is answered 503 (BERTH_DATABASE_UNAVAILABLE); the pool connects again on the next request.
import pg from 'pg'
import { inTransaction, migrateSchema, redactUrl, StartupError, Unavailable, unreachable, type Migration } from '../../../kernel/index.js'
import { arrayFrom, type CampaignStore, type RangeOptions, type Table, type TableKey, type Transaction } from './contract.js'

export const SCHEMA = 'campaign'
/** First key of the store's advisory locks (two-key form): migrations, then subjects (hashed). */
const LOCK_SPACE = 0x43616d70
const MIGRATION_LOCK = 1
const SUBJECT_LOCK_SPACE = LOCK_SPACE + 1
/** Rows read per round trip of a range. */
const BATCH = 500

export const DATABASE_UNAVAILABLE = 'BERTH_DATABASE_UNAVAILABLE'

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
  return new Unavailable(`the campaign database cannot be reached (${cause}): ${(err as Error).message}`, { code: DATABASE_UNAVAILABLE, cause: err })
}

async function guarded<T> (work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (err) {
    throw classified(err)
  }
}

type Queryable = Pick<pg.ClientBase, 'query'>

class PostgresTable<V, K extends TableKey> implements Table<V, K> {
  readonly #db: Queryable
  readonly #name: string

  constructor (db: Queryable, name: string) {
    this.#db = db
    this.#name = name
  }

  async get (key: K): Promise<V | undefined> {
    const rows = await this.#rows<{ value: V }>('select value from records where tbl = $1 and key = $2', [this.#name, encodeKey(key)])
    return rows[0]?.value
  }

  async has (key: K): Promise<boolean> {
    return (await this.#rows('select 1 from records where tbl = $1 and key = $2', [this.#name, encodeKey(key)])).length > 0
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
    await this.#rows('insert into records (tbl, key, value) values ($1, $2, $3) on conflict (tbl, key) do update set value = excluded.value',
      [this.#name, encodeKey(key), JSON.stringify(value)])
  }

  async remove (key: K): Promise<void> {
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

  async transaction<T> (subject: string, fn: (tx: Transaction) => Promise<T>): Promise<T> {
    return await guarded(async () => await inTransaction(this.#pool, async client => {
      await client.query('select pg_advisory_xact_lock($1, hashtext($2))', [SUBJECT_LOCK_SPACE, subject])
      return await fn({ table: <V, K extends TableKey = string>(name: string) => new PostgresTable<V, K>(client, name) })
    }))
  }

  async close (): Promise<void> {
    await this.#pool.end()
  }
}
