// Redis 7 for tests: Debian's redis-server (installed when missing), one server per test file on a
// loopback port with a password, its data in a temporary directory. It starts in tens of
// milliseconds, so a test that stops, kills or restarts it needs nothing shared. `durable` turns the
// append-only file on (every write fsynced), as the operations guide recommends for sessions.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { createConnection } from 'node:net'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { ensureDebianPackages, requireComponent, type ComponentTest } from './component.js'
import { isRunning, startDaemon, RUN_DIR, type Daemon } from './daemon.js'
import { probablyFreePort } from './net.js'
import { pollUntil } from './poll.js'

interface Teardown { teardown(fn: () => void | Promise<void>): void }

export interface RedisServer {
  /** redis://:PASSWORD@127.0.0.1:PORT */
  url: string
  /** SIGTERM (Redis writes its append-only file and exits). */
  stop(): Promise<void>
  /** SIGKILL. */
  kill(): Promise<void>
  /** Start it again on the same port and directory. */
  start(): Promise<void>
}

/** Whether the server answers PING with the password (a raw RESP exchange: no client library needed). */
async function answers (port: number, password: string): Promise<boolean> {
  return await new Promise(resolve => {
    const socket = createConnection({ host: '127.0.0.1', port })
    let reply = ''
    const done = (ok: boolean): void => { socket.destroy(); resolve(ok) }
    socket.setTimeout(1000, () => { done(false) })
    socket.on('error', () => { done(false) })
    socket.on('data', data => {
      reply += data.toString()
      if (reply.includes('+PONG')) done(true)
      else if (reply.includes('-')) done(false)
    })
    socket.on('connect', () => { socket.write(`AUTH ${password}\r\nPING\r\n`) })
  })
}

/** A Redis of the test's own, stopped and removed at its end. */
export async function ownRedis (t: Teardown, options: { durable?: boolean } = {}): Promise<RedisServer> {
  await ensureDebianPackages(['redis-server'])
  mkdirSync(RUN_DIR, { recursive: true })
  const dir = mkdtempSync(join(RUN_DIR, 'redis-'))
  const port = await probablyFreePort()
  const password = randomBytes(12).toString('hex')
  const persistence = options.durable === true ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no']
  const start = async (): Promise<Daemon> => await startDaemon(t, `redis on ${port}`, {
    command: 'redis-server',
    args: ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', ...persistence,
      '--requirepass', password, '--daemonize', 'no', '--logfile', ''],
    logFile: join(dir, 'redis.log'),
    ready: async () => await answers(port, password),
    timeout: 20_000
  })
  let daemon: Daemon | undefined = await start()
  const ended = async (signal: NodeJS.Signals): Promise<void> => {
    const pid = daemon?.pid
    daemon = undefined
    if (pid === undefined || !isRunning(pid)) return
    process.kill(pid, signal)
    await pollUntil(() => !isRunning(pid), { timeout: 10_000, what: `redis ${pid} to end` })
  }
  t.teardown(async () => {
    await ended('SIGTERM')
    rmSync(dir, { recursive: true, force: true })
  })
  return {
    url: `redis://:${password}@127.0.0.1:${port}`,
    stop: async () => { await ended('SIGTERM') },
    kill: async () => { await ended('SIGKILL') },
    start: async () => { daemon ??= await start() }
  }
}

/** `ownRedis` under the CI rule: undefined (the test skipped, or failed under CI) when Redis cannot be had. */
export async function requireRedis (t: ComponentTest & Teardown, options: { durable?: boolean } = {}): Promise<RedisServer | undefined> {
  return await requireComponent(t, 'redis-server', async () => await ownRedis(t, options))
}
