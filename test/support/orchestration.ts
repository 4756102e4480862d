// Helpers for the orchestration plugins' tests: a kernel over a chosen state and working directory
// (so a test can restart it), control API calls with a bearer token, and tokens for each role.
import type { ChildProcess } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'
import { join } from 'node:path'
import pino, { type Logger } from 'pino'
import { createKernel, type AnyPlugin, type Kernel } from '../../kernel/index.js'
import { exited, spawnCli } from './cli.js'
import { loopbackListeners } from './kernel.js'
import { pollUntil } from './poll.js'
import { tempDir } from './tmp.js'

interface Teardown { teardown(fn: () => void | Promise<void>): void }

export interface OrchestrationKernelOptions {
  plugins: readonly AnyPlugin[]
  /** State directory; a fresh temporary one by default. Pass the same one again to restart. */
  stateDir?: string
  /** Working directory (services/ is discovered here); the state directory by default. */
  cwd?: string
  /** Sections besides [server]. */
  config?: Record<string, Record<string, unknown>>
  logger?: Logger
}

/** A started kernel on loopback with free ports, stopped at test end. */
export async function startKernel (t: Teardown, options: OrchestrationKernelOptions): Promise<Kernel> {
  const stateDir = options.stateDir ?? tempDir(t)
  const kernel = await createKernel({
    cwd: options.cwd ?? stateDir,
    config: { server: { state_dir: stateDir, listeners: loopbackListeners() }, ...options.config },
    env: {},
    plugins: options.plugins,
    logger: options.logger ?? pino({ level: 'silent' })
  })
  t.teardown(async () => { await kernel.stop() })
  await kernel.start()
  return kernel
}

/** The bootstrap admin token the kernel wrote to its state directory. */
export function adminToken (kernel: Kernel): string {
  return readFileSync(join(kernel.config.stateDir, 'admin.token'), 'utf8').trim()
}

export interface ApiAnswer<T = unknown> {
  status: number
  body: T
  text: string
}

/** Call the control API; the body is parsed when the answer is JSON. */
export async function api<T = unknown> (kernel: Kernel, method: string, path: string, options: { token?: string, body?: unknown } = {}): Promise<ApiAnswer<T>> {
  const headers: Record<string, string> = {}
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`
  if (options.body !== undefined) headers['content-type'] = 'application/json'
  const response = await fetch(new URL(path, kernel.url('control')), {
    method, headers, body: options.body === undefined ? undefined : JSON.stringify(options.body)
  })
  const text = await response.text()
  const json = (response.headers.get('content-type') ?? '').includes('application/json')
  return { status: response.status, body: (json ? JSON.parse(text) : text) as T, text }
}

/** A new token with `role`, created through the API with the admin token. */
export async function tokenFor (kernel: Kernel, role: 'viewer' | 'deployer' | 'admin'): Promise<string> {
  const answer = await api<{ token: string }>(kernel, 'POST', '/api/v1/tokens', { token: adminToken(kernel), body: { name: `test-${role}`, role } })
  if (answer.status !== 201) throw new Error(`creating a ${role} token: ${answer.status} ${answer.text}`)
  return answer.body.token
}

/** A TCP port free on 127.0.0.1 at the time of asking. */
export async function freePort (): Promise<number> {
  const server = createServer()
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise(resolve => server.close(resolve))
  return port
}

export interface ServerDir {
  /** The working directory: cluster.toml, services/, and the state directory .berth. */
  dir: string
  stateDir: string
  port: number
  url: string
}

/**
 * A working directory whose cluster.toml runs only `plugins` and binds the control listener to
 * 127.0.0.1 on a free port; `sections` is appended (other plugins' tables).
 */
export async function serverDir (t: Teardown, plugins: readonly string[], sections = ''): Promise<ServerDir> {
  const dir = tempDir(t)
  const port = await freePort()
  writeFileSync(join(dir, 'cluster.toml'), [
    '[server]', `plugins = ${JSON.stringify(plugins)}`, '',
    '[server.listeners.control]', 'host = "127.0.0.1"', `port = ${port}`, '', sections
  ].join('\n'))
  return { dir, stateDir: join(dir, '.berth'), port, url: `http://127.0.0.1:${port}` }
}

/** Run `berth server` in `dir` (a child process) until its health answers; SIGKILLed at test end. */
export async function startServer (t: Teardown, server: ServerDir): Promise<ChildProcess & { output: () => string }> {
  const child = spawnCli(['server'], { cwd: server.dir })
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL')
      await exited(child)
    }
  })
  await pollUntil(async () => {
    if (child.exitCode !== null) throw new Error(`server exited: ${child.output()}`)
    return (await fetch(`${server.url}/api/v1/health`)).status === 200
  }, { timeout: 20_000, what: `berth server in ${server.dir}` })
  return child
}
