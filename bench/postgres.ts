// The telemetry benchmarks' storage backends: which to measure (BENCH_INGEST_BACKEND, a comma-separated
// list of lmdb and postgres; lmdb alone by default), and for PostgreSQL a server of the benchmark's own,
// started as the tests start theirs (test/support/postgres.ts: Debian's postgresql-15, loopback only,
// run as the postgres user) but with fsync and full-page writes on, as shipped; synchronous_commit on.
// Each measurement takes a fresh database of it and drops it afterwards.
import pg from 'pg'
import { ownPostgres, type PostgresServer } from '../test/support/postgres.js'

export type Backend = 'lmdb' | 'postgres'
export const BACKEND_NAMES: Record<Backend, string> = { lmdb: 'LMDB', postgres: 'PostgreSQL' }

/** The backends BENCH_INGEST_BACKEND names, in its order (lmdb when unset). */
export function benchBackends (): Backend[] {
  const names = (process.env.BENCH_INGEST_BACKEND ?? 'lmdb').split(',').map(name => name.trim()).filter(name => name !== '')
  for (const name of names) if (name !== 'lmdb' && name !== 'postgres') throw new Error(`BENCH_INGEST_BACKEND: unknown backend ${name} (lmdb, postgres)`)
  return [...new Set(names as Backend[])]
}

export interface BenchPostgres {
  server: PostgresServer
  /** A fresh database's URL. */
  database(): Promise<string>
  /** Drop a database `database()` made. */
  drop(url: string): Promise<void>
  /** Stop the server and remove its directory. */
  close(): Promise<void>
}

/** Run one statement as the superuser on `url`. */
export async function superuserQuery (url: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: url })
  client.on('error', () => {})
  await client.connect()
  try {
    await client.query(text)
  } finally {
    await client.end().catch(() => {})
  }
}

export async function startBenchPostgres (): Promise<BenchPostgres> {
  const teardowns: Array<() => void | Promise<void>> = []
  const server = await ownPostgres({ teardown: fn => { teardowns.push(fn) } }, { durable: true })
  let made = 0
  return {
    server,
    database: async () => {
      const name = `berth_bench_${process.pid}_${made++}`
      await superuserQuery(server.url(), `create database ${name}`)
      return server.url(name)
    },
    drop: async url => {
      await superuserQuery(server.url(), `drop database if exists ${new URL(url).pathname.slice(1)} with (force)`)
    },
    close: async () => {
      for (const teardown of teardowns.reverse()) await teardown()
    }
  }
}
