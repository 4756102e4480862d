// Helpers for the orchestration plugins' tests: a kernel over a chosen state and working directory
// (so a test can restart it), control API calls with a bearer token, and tokens for each role.
import type Docker from 'dockerode'
import type { ContainerInfo } from 'dockerode'
import { randomBytes } from 'node:crypto'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import pino, { type Logger } from 'pino'
import { createKernel, type AnyPlugin, type Kernel } from '../../kernel/index.js'
import { boundUrls, spawnCliForTest, untilAnswers, type RunningCli } from './cli.js'
import { busyboxImage, pushImage, startRegistry } from './docker.js'
import { FakeEngine, reconcilerOn } from './fake-engine.js'
import { loopbackListeners, TEST_IDLE_GRACE_MS, withProxyWorkers } from './kernel.js'
import { tempDir } from './tmp.js'
import reconciler from '../../plugins/reconciler/index.js'
import secrets from '../../plugins/secrets/index.js'
import tokens from '../../plugins/tokens/index.js'

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
    config: { server: { state_dir: stateDir, listeners: loopbackListeners(options.plugins), stop_idle_grace_ms: TEST_IDLE_GRACE_MS }, ...withProxyWorkers(options.plugins, options.config ?? {}) },
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
export async function tokenFor (kernel: Kernel, role: 'viewer' | 'deployer' | 'admin' | 'agent'): Promise<string> {
  const answer = await api<{ token: string }>(kernel, 'POST', '/api/v1/tokens', { token: adminToken(kernel), body: { name: `test-${role}`, role } })
  if (answer.status !== 201) throw new Error(`creating a ${role} token: ${answer.status} ${answer.text}`)
  return answer.body.token
}

export interface ServerDir {
  /** The working directory: cluster.toml, services/, and the state directory .berth. */
  dir: string
  stateDir: string
  /** The control listener's port: 0 until the first `startServer` reads back the port it was bound to. */
  port: number
  url: string
}

/**
 * A working directory whose cluster.toml runs only `plugins` and binds the control listener to
 * 127.0.0.1 on port 0; `sections` is appended (other plugins' tables).
 */
export async function serverDir (t: Teardown, plugins: readonly string[], sections = ''): Promise<ServerDir> {
  const dir = tempDir(t)
  writeFileSync(join(dir, 'cluster.toml'), [
    '[server]', `plugins = ${JSON.stringify(plugins)}`, '',
    '[server.listeners.control]', 'host = "127.0.0.1"', 'port = 0', '', sections
  ].join('\n'))
  return { dir, stateDir: join(dir, '.berth'), port: 0, url: '' }
}

/**
 * Run `berth server` in `dir` (a child process, with `env` added) until its health answers; SIGKILLed
 * at test end. The first start reads back the control port the server bound and writes it into
 * cluster.toml, so that a restart comes back on the address agents and clients already hold.
 */
export async function startServer (t: Teardown, server: ServerDir, env: NodeJS.ProcessEnv = {}): Promise<RunningCli> {
  const child = spawnCliForTest(t, ['server'], { cwd: server.dir, env })
  const what = `berth server in ${server.dir}`
  const control = (await boundUrls(child, what, 20_000)).control
  if (server.port === 0) {
    server.port = Number(control.port)
    server.url = control.origin
    const config = readFileSync(join(server.dir, 'cluster.toml'), 'utf8')
    writeFileSync(join(server.dir, 'cluster.toml'), config.replace(/^port = 0$/m, `port = ${server.port}`))
  }
  await untilAnswers(child, `${server.url}/api/v1/health`, what, 20_000)
  return child
}

/** Write `services/<folder>/service.toml` files under `cwd` (replacing any already there). */
export function writeServices (cwd: string, files: Record<string, string>): void {
  for (const [folder, text] of Object.entries(files)) {
    mkdirSync(join(cwd, 'services', folder), { recursive: true })
    writeFileSync(join(cwd, 'services', folder, 'service.toml'), text)
  }
}

/** A fresh value for `[reconciler].instance`: every container a test deploys carries it as a label. */
export function testInstance (): string {
  return `test-${randomBytes(5).toString('hex')}`
}

/**
 * The `[reconciler]` section tests use: their own instance label, a shared test network, no stop
 * grace, and continuous repair off (tests that stop or remove containers behind the reconciler's back
 * expect them to stay so); a test of repairs turns it on with `repair_interval_secs` in `extra`.
 */
export function reconcilerSection (instance: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { instance, network: 'berth-test', stop_timeout_secs: 0, health_timeout_secs: 20, repair_interval_secs: 0, ...extra }
}

/**
 * Remove every container and volume labelled with `instance` when the test ends; nothing when the
 * engine no longer answers (an engine of the test's own that it stopped, which its own teardown
 * wipes: a teardown that threw would keep that one from running).
 */
export function removeInstanceAtEnd (t: Teardown, docker: Docker, instance: string): void {
  t.teardown(async () => {
    const filters = { label: [`berth.instance=${instance}`] }
    let containers: ContainerInfo[]
    try {
      containers = await docker.listContainers({ all: true, filters })
    } catch (err) {
      if (['ECONNREFUSED', 'ENOENT'].includes((err as NodeJS.ErrnoException).code ?? '')) return
      throw err
    }
    for (const c of containers) await docker.getContainer(c.Id).remove({ force: true, v: true }).catch(() => undefined)
    const { Volumes: volumes } = await docker.listVolumes({ filters })
    for (const v of volumes ?? []) await docker.getVolume(v.Name).remove().catch(() => undefined)
  })
}

export interface ReconcilerInstance {
  kernel: Kernel
  /** Working directory: write services/ here. */
  cwd: string
  /** The `[reconciler].instance` label of every container this kernel creates. */
  instance: string
  /** A project name unique to this instance. */
  project: string
  /** The admin token. */
  token: string
}

/**
 * A kernel running tokens, secrets and the reconciler on its own instance label and working directory;
 * its containers and volumes are removed and the kernel stopped when the test ends. On a stand-in
 * engine (`FakeEngine`) the instance label is the engine's, and the engine is closed at the end.
 */
export async function reconcilerKernel (t: Teardown, engine: Docker | FakeEngine, options: {
  stateDir?: string
  logger?: Logger
  extra?: Record<string, unknown>
  /** Plugins besides tokens, secrets and the reconciler (the proxy), and their sections. */
  plugins?: readonly AnyPlugin[]
  sections?: Record<string, Record<string, unknown>>
  /** A restart: the working directory, instance label and state directory of this earlier (stopped) kernel. */
  restartOf?: ReconcilerInstance
} = {}): Promise<ReconcilerInstance> {
  const earlier = options.restartOf
  const cwd = earlier?.cwd ?? tempDir(t)
  const fake = engine instanceof FakeEngine
  const instance = earlier?.instance ?? (fake ? engine.instance : testInstance())
  if (earlier === undefined && !fake) removeInstanceAtEnd(t, engine, instance)
  const kernel = await startKernel(t, {
    plugins: [tokens, secrets, fake ? reconcilerOn(engine) : reconciler, ...(options.plugins ?? [])], cwd, stateDir: earlier?.kernel.config.stateDir ?? options.stateDir, logger: options.logger,
    config: { reconciler: reconcilerSection(instance, options.extra), ...options.sections }
  })
  if (earlier === undefined && fake) t.teardown(async () => { await engine.close() })
  return { kernel, cwd, instance, project: `p${instance.slice(-6)}`, token: adminToken(kernel) }
}

/** The containers labelled with `instance`, by name. */
export async function instanceContainers (docker: Docker, instance: string): Promise<Map<string, ContainerInfo>> {
  const list = await docker.listContainers({ all: true, filters: { label: [`berth.instance=${instance}`] } })
  return new Map(list.map(c => [c.Names[0].replace(/^\//, ''), c]))
}

/** Remove every local tag and digest reference of `repo` (a registry repository) when the test ends. */
export function removeRepositoryAtEnd (t: Teardown, docker: Docker, repo: string): void {
  t.teardown(async () => {
    for (const image of await docker.listImages()) {
      for (const ref of [...(image.RepoTags ?? []), ...(image.RepoDigests ?? [])]) {
        if (ref.startsWith(`${repo}:`) || ref.startsWith(`${repo}@`)) await docker.getImage(ref).remove().catch(() => undefined)
      }
    }
  })
}

/** A local test image (`berth-test/<name>:<tag>`) pushed to a fresh local registry as `<registry>/berth-test/<name>:1`, so a deploy can force-pull it; that reference. */
export async function inRegistry (t: Teardown, docker: Docker, image: string): Promise<string> {
  const registry = await startRegistry(t)
  const repo = `${registry.host}/${image.slice(0, image.lastIndexOf(':'))}`
  await docker.getImage(image).tag({ repo, tag: '1' })
  removeRepositoryAtEnd(t, docker, repo)
  await pushImage(docker, `${repo}:1`)
  return `${repo}:1`
}

/** The busybox test image pushed to a fresh local registry (so a deploy can force-pull it); its reference. */
export async function busyboxInRegistry (t: Teardown, docker: Docker): Promise<string> {
  return await inRegistry(t, docker, await busyboxImage(docker))
}
