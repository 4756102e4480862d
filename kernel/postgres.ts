// What plugins that keep their data in PostgreSQL share (node-postgres): telling "the database cannot
// be reached" from a refused query, a URL without its password for messages, one transaction on one
// connection, and versioned migrations applied once under an advisory lock.
import type pg from 'pg'

/** SQLSTATE classes and client codes that mean the database cannot be reached now (not that the request is wrong). */
const UNAVAILABLE_STATES = /^(08|53|57P)/
const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EPIPE'])
/** What node-postgres says when a connection ends under a query or cannot be made in time. */
const UNAVAILABLE_MESSAGES = /Connection terminated|connection timeout|Client has encountered a connection error|Connection ended/i

/** When `err` says the database cannot be reached: its code (or "connection lost"); else undefined. */
export function unreachable (err: unknown): string | undefined {
  const code = (err as { code?: unknown }).code
  const message = err instanceof Error ? err.message : ''
  if (typeof code === 'string' && (UNAVAILABLE_CODES.has(code) || UNAVAILABLE_STATES.test(code))) return code
  return UNAVAILABLE_MESSAGES.test(message) ? 'connection lost' : undefined
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

/** Run `work` in one transaction on one connection of `pool`; a connection that failed is not reused. */
export async function inTransaction<T> (pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect()
  const ignore = (): void => {}
  client.on('error', ignore)
  let failed: unknown
  try {
    await client.query('begin')
    const result = await work(client)
    await client.query('commit')
    return result
  } catch (err) {
    failed = err
    await client.query('rollback').catch(() => {})
    throw err
  } finally {
    // A failed connection is closed by the pool, not taken back: it keeps the no-op listener, since the
    // server may still end it with an error (a database being stopped) while it closes.
    if (!(failed instanceof Error)) client.off('error', ignore)
    client.release(failed instanceof Error ? failed : undefined)
  }
}

export interface Migration {
  version: number
  name: string
  sql: string
}

/**
 * Apply the migrations of `schema` not applied yet, in `client`'s transaction, under the advisory lock
 * `lock` (two processes starting at once apply each migration once). The versions applied now.
 */
export async function migrateSchema (client: pg.ClientBase, schema: string, lock: readonly [number, number], migrations: readonly Migration[]): Promise<number[]> {
  await client.query('select pg_advisory_xact_lock($1, $2)', [...lock])
  await client.query(`create schema if not exists ${schema}`)
  await client.query(`create table if not exists ${schema}.schema_migrations (version integer primary key, name text not null, applied_at timestamptz not null default now())`)
  const done = new Set((await client.query<{ version: number }>(`select version from ${schema}.schema_migrations`)).rows.map(row => row.version))
  const applied: number[] = []
  for (const migration of migrations) {
    if (done.has(migration.version)) continue
    await client.query(migration.sql)
    await client.query(`insert into ${schema}.schema_migrations (version, name) values ($1, $2)`, [migration.version, migration.name])
    applied.push(migration.version)
  }
  return applied
}
