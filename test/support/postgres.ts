// PostgreSQL 15 for tests: Debian's postgresql-15 (installed when missing), a server in a temporary
// directory on a loopback port, run as the postgres user (initdb and postgres refuse root). One server
// serves the whole test run (`runPostgres`, stopped by teardown.ts); each test file takes a fresh
// database of its own (`postgresDatabase(t)`, dropped at its end). A test that stops and starts the
// server takes one of its own (`ownPostgres(t)`); so does a benchmark, with fsync on (`durable`).
import { execFile } from 'node:child_process'
import { chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { ensureDebianPackages, requireComponent, type ComponentTest } from './component.js'
import { isRunning, sharedServer, startDaemon, RUN_DIR, type Daemon } from './daemon.js'
import { probablyFreePort } from './net.js'
import { pollUntil } from './poll.js'

const run = promisify(execFile)
const BIN = '/usr/lib/postgresql/15/bin'
/** The superuser initdb creates; test databases are owned by it (PG 15: only an owner may create in schema public). */
const SUPERUSER = 'postgres'

interface Teardown { teardown(fn: () => void | Promise<void>): void }

export interface PostgresServer {
  port: number
  password: string
  /** A URL for `database` as the superuser. */
  url(database?: string): string
  /** Fast shutdown (SIGINT): connections are cut, the server exits. */
  stop(): Promise<void>
  /** Start it again on the same port and data directory. */
  start(): Promise<void>
}

/** The postgres user's ids: initdb and postgres run as it. */
async function postgresIds (): Promise<{ uid: number, gid: number }> {
  const [uid, gid] = await Promise.all([run('id', ['-u', SUPERUSER]), run('id', ['-g', SUPERUSER])])
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) }
}

/** A fresh data directory in `dir` (owned by postgres) with `password` for the superuser. */
async function initCluster (dir: string, password: string): Promise<void> {
  const { uid, gid } = await postgresIds()
  chownSync(dir, uid, gid)
  const pwfile = join(dir, 'pwfile')
  writeFileSync(pwfile, password)
  chownSync(pwfile, uid, gid)
  await run('runuser', ['-u', SUPERUSER, '--', join(BIN, 'initdb'), '-D', join(dir, 'data'), '-U', SUPERUSER, '--auth=scram-sha-256',
    `--pwfile=${pwfile}`, '-E', 'UTF8', '--locale=C.UTF-8', '--no-sync'], { timeout: 120_000 })
  rmSync(pwfile)
}

/** Whether the server at `url` answers a query (early tries fail while it starts: 57P03). */
async function answers (url: string): Promise<boolean> {
  try {
    await superuser(url, async client => await client.query('select 1'))
    return true
  } catch {
    return false
  }
}

/** Run `work` on a connection of its own to `url`. */
async function superuser<T> (url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 })
  client.on('error', () => {})
  try {
    await client.connect()
    return await work(client)
  } finally {
    await client.end().catch(() => {})
  }
}

function serverOf (port: number, password: string): Pick<PostgresServer, 'port' | 'password' | 'url'> {
  return { port, password, url: (database = SUPERUSER) => `postgres://${SUPERUSER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}` }
}

/** Start postgres on `dir`'s data directory; `owner` stops it (a test, or the run). `durable`: fsync and full-page writes as shipped. */
async function startServer (owner: Teardown | 'run', name: string, dir: string, port: number, password: string, durable = false): Promise<Daemon> {
  const { uid, gid } = await postgresIds()
  const { url } = serverOf(port, password)
  return await startDaemon(owner, name, {
    command: join(BIN, 'postgres'),
    // Durability settings that only matter for a machine crash; synchronous_commit stays on, so a commit is a commit.
    args: ['-D', join(dir, 'data'), '-c', 'listen_addresses=127.0.0.1', '-p', String(port), '-k', dir, ...(durable ? [] : ['-c', 'fsync=off', '-c', 'full_page_writes=off'])],
    logFile: join(dir, 'postgres.log'),
    uid,
    gid,
    ready: async () => await answers(url()),
    timeout: 60_000
  })
}

/** Fast shutdown: SIGINT, then wait for the process to end. */
async function fastStop (pid: number): Promise<void> {
  try {
    process.kill(pid, 'SIGINT')
  } catch {
    return
  }
  await pollUntil(() => !isRunning(pid), { timeout: 30_000, what: `postgres ${pid} to stop` })
}

async function ensurePostgres (): Promise<void> {
  await ensureDebianPackages(['postgresql-15'])
}

const RUN_NAME = 'postgres'

/** The run's PostgreSQL server, started by the first test file that asks (stopped by teardown.ts). */
export async function runPostgres (): Promise<Pick<PostgresServer, 'port' | 'password' | 'url'>> {
  await ensurePostgres()
  const { port, password } = await sharedServer<{ pid: number, port: number, password: string, dir: string }>(RUN_NAME, {
    daemons: [RUN_NAME],
    serves: async known => isRunning(known.pid) && await answers(serverOf(known.port, known.password).url()),
    ended: known => !isRunning(known.pid),
    start: async () => {
      const dir = mkdtempSync(join(RUN_DIR, 'postgres-'))
      const password = randomBytes(12).toString('hex')
      await initCluster(dir, password)
      const port = await probablyFreePort()
      const daemon = await startServer('run', RUN_NAME, dir, port, password)
      return { pid: daemon.pid, port, password, dir }
    }
  })
  return serverOf(port, password)
}

/**
 * A server of the test's own (to stop and start), stopped and removed at its end. `durable` keeps
 * fsync and full-page writes on (PostgreSQL's defaults), for figures a benchmark records.
 */
export async function ownPostgres (t: Teardown, options: { durable?: boolean } = {}): Promise<PostgresServer> {
  await ensurePostgres()
  mkdirSync(RUN_DIR, { recursive: true })
  const dir = mkdtempSync(join(RUN_DIR, 'postgres-own-'))
  const password = randomBytes(12).toString('hex')
  await initCluster(dir, password)
  const port = await probablyFreePort()
  const durable = options.durable === true
  let daemon: Daemon | undefined = await startServer(t, `postgres on ${port}`, dir, port, password, durable)
  const server: PostgresServer = {
    ...serverOf(port, password),
    stop: async () => {
      if (daemon !== undefined) await fastStop(daemon.pid)
      daemon = undefined
    },
    start: async () => {
      daemon ??= await startServer(t, `postgres on ${port}`, dir, port, password, durable)
    }
  }
  t.teardown(async () => {
    await server.stop()
    rmSync(dir, { recursive: true, force: true })
  })
  return server
}

/** A fresh database on the run's server, dropped at the test's end; its URL. */
export async function postgresDatabase (t: Teardown): Promise<string> {
  const server = await runPostgres()
  const name = `berth_test_${process.pid}_${randomBytes(4).toString('hex')}`
  await superuser(server.url(), async client => await client.query(`CREATE DATABASE ${name}`))
  t.teardown(async () => { await superuser(server.url(), async client => await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)) })
  return server.url(name)
}

/** `postgresDatabase` under the CI rule: undefined (the test skipped, or failed under CI) when PostgreSQL cannot be had. */
export async function requirePostgres (t: ComponentTest & Teardown): Promise<string | undefined> {
  return await requireComponent(t, 'postgresql-15', async () => await postgresDatabase(t))
}
