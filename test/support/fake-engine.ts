// A stand-in container engine in memory, for tests of what drives an engine (the reconciler, the
// proxy's routes, nodes) without Docker: containers with labels and states, local images and a registry
// the test fills, events, stats, and faults the test injects (the engine away, a start that fails, a
// container that crashes, a health check's verdict). A running container of a service with a `port`
// is a real HTTP server on 127.0.0.1, answering as its image says. Checked against Docker by
// test/plugins/reconciler/engine-conformance.test.ts.
import { randomBytes } from 'node:crypto'
import { EventEmitter, once } from 'node:events'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { definePlugin, type AnyPlugin } from '../../kernel/index.js'
import reconciler from '../../plugins/reconciler/index.js'
import {
  EngineFailed, EngineUnavailable,
  type ContainerEngine, type ContainerEvent, type ContainerState, type ContainerStats, type CreateRequest, type EngineInfo, type ExecSession
} from '../../plugins/reconciler/container-engine.js'
import type { ServiceSpec } from '../../plugins/reconciler/spec.js'
import { BUSYBOX_IMAGE, HTTPD_INDEX } from './docker.js'

/** What a container of an image does. */
export interface FakeImage {
  /** Answers requests on the primary port while a container runs; none: nothing listens there (connections are closed at once). */
  serve?: (request: IncomingMessage, response: ServerResponse, container: FakeContainer) => void
  /** The engine health check's verdict when a container starts, for a spec with a `healthcheck`; `healthy` by default. */
  health?: 'starting' | 'healthy' | 'unhealthy'
  /** What a command run in a container of it (exec, attach, a job) answers; exit code 0 and no output by default. */
  run?: (command: string[], container: FakeContainer | undefined) => { exitCode: number, output: string }
}

/** busybox httpd as the test image berth-test/httpd:1 runs it: the index at `/`, its own 404 page elsewhere. */
export const FAKE_HTTPD: FakeImage = {
  serve: (request, response) => {
    if (request.url === '/' || request.url === '/index.html') response.end(HTTPD_INDEX)
    else response.writeHead(404, { 'content-type': 'text/html' }).end('<HTML><HEAD><TITLE>404 Not Found</TITLE></HEAD>\n<BODY><H1>404 Not Found</H1>\nThe requested URL was not found\n</BODY></HTML>\n')
  }
}

/** An image whose containers listen on nothing, get healthy and answer every command with exit code 0 and no output, as busybox running `sleep` does: what an image does unless told otherwise. */
export const FAKE_IDLE: FakeImage = {}

/** One container the stand-in engine holds. */
export interface FakeContainer {
  id: string
  name: string
  image: string
  imageId: string
  labels: Record<string, string>
  env: Record<string, string>
  spec: ServiceSpec
  state: 'created' | 'running' | 'paused' | 'exited'
  exitCode: number
  /** Restarts by the restart policy. */
  restarts: number
  /** `unless-stopped` for a service that depends on nothing, as Docker's runtime sets it; `no` otherwise. */
  restartPolicy: 'unless-stopped' | 'no'
  health?: 'starting' | 'healthy' | 'unhealthy'
  /** When it last started, in milliseconds since the epoch. */
  startedAt: number
  /** The primary port's host address while it runs. */
  address?: { host: string, port: number }
  logs: string[]
  server?: Server
  behaviour: FakeImage
}

interface Image { id: string, created: number, behaviour: FakeImage }

/** What every view of one stand-in engine shares: one engine may serve several instance labels, as Docker does. */
class World {
  readonly containers = new Map<string, FakeContainer>()
  readonly local = new Map<string, Image>()
  readonly registry = new Map<string, Image>()
  readonly events: Array<ContainerEvent & { labels: Record<string, string> }> = []
  readonly bus = new EventEmitter()
  readonly volumes = new Map<string, string>()
  readonly failingStarts = new Map<string, string>()
  readonly publishAddress: string
  unavailable = false
  #volumeRoot: string | undefined

  constructor (publishAddress: string) {
    this.publishAddress = publishAddress
    this.bus.setMaxListeners(0)
  }

  volumeRoot (): string {
    this.#volumeRoot ??= mkdtempSync(join(tmpdir(), 'berth-fake-engine-'))
    return this.#volumeRoot
  }

  emit (container: FakeContainer, action: string): void {
    const event = { action, service: container.labels['berth.service'] ?? '', time: Math.floor(Date.now() / 1000), labels: container.labels }
    this.events.push(event)
    this.bus.emit('event', event)
  }

  async close (): Promise<void> {
    await Promise.all([...this.containers.values()].map(async c => { await closeServer(c) }))
    this.containers.clear()
    this.bus.emit('down')
    if (this.#volumeRoot !== undefined) rmSync(this.#volumeRoot, { recursive: true, force: true })
  }
}

const GIB = 1024 ** 3

/** A reference as the engine stores it: a name without tag or digest means `:latest`. */
function normalized (ref: string): string {
  const name = ref.slice(ref.lastIndexOf('/') + 1)
  return name.includes(':') || name.includes('@') ? ref : `${ref}:latest`
}

function newImage (behaviour: FakeImage): Image {
  return { id: `sha256:${randomBytes(32).toString('hex')}`, created: Date.now(), behaviour }
}

async function closeServer (container: FakeContainer): Promise<void> {
  const server = container.server
  container.server = undefined
  container.address = undefined
  if (server === undefined) return
  server.closeAllConnections()
  await new Promise<void>(resolve => { server.close(() => { resolve() }) })
}

export interface FakeEngineOptions {
  /** The `berth.instance` label this view lists and watches; `berth` by default. */
  instance?: string
  publishAddress?: string
  /** The engine another view serves: the same containers, images and events under another instance label. */
  of?: FakeEngine
  /** Images present locally from the start, by reference, each with what its containers do (as `addImage`). */
  images?: Readonly<Record<string, FakeImage>>
}

/** The stand-in engine: the ContainerEngine interface over memory, plus the test's controls. */
export class FakeEngine implements ContainerEngine {
  readonly name = 'docker'
  readonly instance: string
  readonly #world: World

  constructor (options: FakeEngineOptions = {}) {
    this.instance = options.instance ?? 'berth'
    this.#world = options.of === undefined ? new World(options.publishAddress ?? '127.0.0.1') : options.of.#world
    for (const [ref, behaviour] of Object.entries(options.images ?? {})) this.addImage(ref, behaviour)
  }

  // ---- the test's controls ----

  /** An image present locally (a new image id each time). */
  addImage (ref: string, behaviour: FakeImage = FAKE_IDLE): void {
    this.#world.local.set(normalized(ref), newImage(behaviour))
  }

  /** An image in the registry, for pulls (a new image id each time: a pull then changes the local one). */
  publish (ref: string, behaviour: FakeImage = FAKE_IDLE): void {
    this.#world.registry.set(normalized(ref), newImage(behaviour))
  }

  /** Remove a local image, as `docker rmi` does: a container of it is then created only after a pull. */
  removeImage (ref: string): void {
    this.#world.local.delete(normalized(ref))
  }

  /** The engine stops answering; with `containersExit`, as a crash of the engine, its containers exit too (no events: nobody watches). */
  goAway (options: { containersExit?: boolean } = {}): void {
    this.#world.unavailable = true
    this.#world.bus.emit('down')
    if (options.containersExit !== true) return
    for (const c of this.#world.containers.values()) {
      if (c.state === 'running' || c.state === 'paused') {
        c.state = 'exited'
        c.exitCode = 255
        void closeServer(c)
      }
    }
  }

  /** The engine answers again; containers of the restart policy `unless-stopped` that a crash stopped start by themselves. */
  async comeBack (): Promise<void> {
    this.#world.unavailable = false
    for (const c of this.#world.containers.values()) {
      if (c.state === 'exited' && c.exitCode === 255 && c.restartPolicy === 'unless-stopped') await this.#run(c)
    }
  }

  /** Starts of containers of `image` fail (creation removes them again), with the engine's `message`, until `undefined` is given. */
  failStarts (image: string, message: string | undefined = 'OCI runtime create failed: exec: no such file or directory'): void {
    if (message === undefined) this.#world.failingStarts.delete(normalized(image))
    else this.#world.failingStarts.set(normalized(image), message)
  }

  /** The container exits with `exitCode` (a die event); with the restart policy `unless-stopped` the engine starts it again (a restart counted). */
  async crash (idOrName: string, exitCode = 137): Promise<void> {
    const c = this.#find(idOrName)
    if (c === undefined) throw new Error(`no container ${idOrName}`)
    await closeServer(c)
    c.state = 'exited'
    c.exitCode = exitCode
    this.#world.emit(c, 'die')
    if (c.restartPolicy === 'unless-stopped') {
      c.restarts++
      await this.#run(c)
    }
  }

  /** Pause the container, as `docker pause` does. */
  pause (idOrName: string): void {
    const c = this.#find(idOrName)
    if (c === undefined) throw new Error(`no container ${idOrName}`)
    c.state = 'paused'
    this.#world.emit(c, 'pause')
  }

  /** The engine health check's verdict on the container from now on. */
  setHealth (idOrName: string, health: 'starting' | 'healthy' | 'unhealthy'): void {
    const c = this.#find(idOrName)
    if (c === undefined) throw new Error(`no container ${idOrName}`)
    c.health = health
    this.#world.emit(c, `health_status: ${health}`)
  }

  /** Remove a container behind the server's back, as `docker rm -f` does. */
  async removeByHand (idOrName: string): Promise<void> {
    const c = this.#find(idOrName)
    if (c !== undefined) await this.#destroy(c)
  }

  /** Every container of this view's instance, by name. */
  containers (): Map<string, FakeContainer> {
    return new Map([...this.#world.containers.values()].filter(c => c.labels['berth.instance'] === this.instance).map(c => [c.name, c]))
  }

  /** Stop every container's server and remove the volumes' folders. */
  async close (): Promise<void> { await this.#world.close() }

  // ---- the engine ----

  #check (): void {
    if (this.#world.unavailable) throw new EngineUnavailable('container engine unavailable: the stand-in engine was taken away')
  }

  #find (idOrName: string): FakeContainer | undefined {
    return this.#world.containers.get(idOrName) ?? [...this.#world.containers.values()].find(c => c.name === idOrName || c.id.startsWith(idOrName))
  }

  #existing (idOrName: string, what: string): FakeContainer {
    this.#check()
    const c = this.#find(idOrName)
    if (c === undefined) throw new EngineFailed(`${what}: No such container: ${idOrName}`)
    return c
  }

  /** Start its process: its server on the publish address when it has a port, its health, a start event. */
  async #run (c: FakeContainer): Promise<void> {
    const behaviour = c.behaviour
    if (c.spec.port !== undefined) {
      const server = createServer((request, response) => {
        if (behaviour.serve !== undefined) behaviour.serve(request, response, c)
        else request.socket.destroy()
      })
      server.on('connection', (socket: Socket) => { if (behaviour.serve === undefined) socket.destroy() })
      server.listen(0, this.#world.publishAddress)
      await once(server, 'listening')
      c.server = server
      c.address = { host: this.#world.publishAddress, port: (server.address() as AddressInfo).port }
    }
    c.state = 'running'
    c.startedAt = Date.now()
    if (c.spec.healthcheck !== undefined) c.health = behaviour.health ?? 'healthy'
    this.#world.emit(c, 'start')
  }

  async #destroy (c: FakeContainer): Promise<void> {
    if (c.state === 'running' || c.state === 'paused') await this.#halt(c)
    this.#world.containers.delete(c.id)
    this.#world.emit(c, 'destroy')
  }

  /** Stop it as Docker does within a stop timeout of 0: killed (kill, die, stop). */
  async #halt (c: FakeContainer): Promise<void> {
    await closeServer(c)
    c.state = 'exited'
    c.exitCode = 137
    for (const action of ['kill', 'die', 'stop']) this.#world.emit(c, action)
  }

  async list (): Promise<ContainerState[]> {
    this.#check()
    return [...this.containers().values()].map(c => ({
      runtime: this.name,
      id: c.id,
      name: c.name,
      service: c.labels['berth.service'] ?? '',
      project: c.labels['berth.project'] ?? '',
      replica: Number(c.labels['berth.replica']),
      ...(c.labels['berth.canary'] === 'true' && { canary: true }),
      hash: c.labels['berth.hash'] ?? '',
      imageId: c.imageId,
      running: c.state === 'running',
      state: c.state,
      ...(c.state === 'running' && c.address !== undefined && { address: { ...c.address } }),
      ...(c.state === 'running' && c.health !== undefined && { health: c.health })
    }))
  }

  async localImages (): Promise<Map<string, string>> {
    this.#check()
    return new Map([...this.#world.local].map(([ref, image]) => [ref, image.id]))
  }

  async pull (ref: string): Promise<void> {
    this.#check()
    const image = this.#world.registry.get(normalized(ref))
    if (image === undefined) throw new EngineFailed(`pulling ${ref}: manifest for ${ref} not found: manifest unknown`)
    this.#world.local.set(normalized(ref), image)
  }

  async push (ref: string): Promise<void> {
    this.#check()
    const image = this.#world.local.get(normalized(ref))
    if (image === undefined) throw new EngineFailed(`pushing ${ref}: An image does not exist locally with the tag: ${ref}`)
    this.#world.registry.set(normalized(ref), image)
  }

  async build (request: { tag: string }): Promise<void> {
    this.#check()
    this.#world.local.set(normalized(request.tag), newImage(FAKE_IDLE))
  }

  async pruneBuilds (repository: string, keep: number): Promise<number> {
    this.#check()
    const inUse = new Set([...this.#world.containers.values()].map(c => c.imageId))
    const old = [...this.#world.local].filter(([ref]) => ref.startsWith(`${repository}:`)).sort(([, a], [, b]) => b.created - a.created).slice(keep)
    const removed = old.filter(([, image]) => !inUse.has(image.id))
    for (const [ref] of removed) this.#world.local.delete(ref)
    return removed.length
  }

  async create ({ spec, replica, hash, env, canary = false }: CreateRequest): Promise<string> {
    this.#check()
    const name = `${spec.project}-${spec.name}-${canary ? 'canary' : replica}`
    const image = this.#world.local.get(normalized(spec.image))
    if (image === undefined) throw new EngineFailed(`creating ${name}: No such image: ${normalized(spec.image)}`)
    if (this.#find(name) !== undefined) throw new EngineFailed(`creating ${name}: Conflict. The container name "/${name}" is already in use`)
    const labels: Record<string, string> = {
      'berth.instance': this.instance, 'berth.project': spec.project, 'berth.service': spec.name, 'berth.replica': canary ? '0' : String(replica), 'berth.hash': hash
    }
    if (spec.port !== undefined) labels['berth.port'] = String(spec.port)
    if (canary) labels['berth.canary'] = 'true'
    const c: FakeContainer = {
      id: randomBytes(32).toString('hex'), name, image: spec.image, imageId: image.id, labels, env: { ...env }, spec,
      state: 'created', exitCode: 0, restarts: 0, startedAt: 0, restartPolicy: spec.depends_on.length === 0 ? 'unless-stopped' : 'no', logs: [], behaviour: image.behaviour
    }
    this.#world.containers.set(c.id, c)
    // Its named volumes, `<project>_<source>`, exist from its creation on and outlive it, as Docker's do.
    for (const v of spec.volumes) await this.volumeDir(`${spec.project}_${v.source}`)
    this.#world.emit(c, 'create')
    const failure = this.#world.failingStarts.get(normalized(spec.image))
    if (failure !== undefined) {
      await this.#destroy(c)
      throw new EngineFailed(`starting ${name}: ${failure}`)
    }
    await this.#run(c)
    return c.id
  }

  async start (id: string): Promise<void> {
    const c = this.#existing(id, 'starting a container')
    if (c.state === 'running') return
    const failure = this.#world.failingStarts.get(normalized(c.image))
    if (failure !== undefined) throw new EngineFailed(`starting a container: ${failure}`)
    await this.#run(c)
  }

  async stop (id: string): Promise<void> {
    const c = this.#existing(id, 'stopping a container')
    if (c.state === 'running' || c.state === 'paused') await this.#halt(c)
  }

  async restart (id: string): Promise<void> {
    const c = this.#existing(id, 'restarting a container')
    if (c.state === 'running' || c.state === 'paused') await this.#halt(c)
    await this.#run(c)
    this.#world.emit(c, 'restart')
  }

  async unpause (id: string): Promise<void> {
    const c = this.#existing(id, 'unpausing a container')
    if (c.state !== 'paused') throw new EngineFailed(`unpausing a container: Container ${id} is not paused`)
    c.state = 'running'
    this.#world.emit(c, 'unpause')
  }

  async remove (id: string): Promise<void> {
    this.#check()
    const c = this.#find(id)
    if (c !== undefined) await this.#destroy(c)
  }

  async address (id: string, port: number): Promise<{ host: string, port: number } | undefined> {
    const c = this.#existing(id, 'inspecting a container')
    return c.spec.port === port && c.address !== undefined ? { ...c.address } : undefined
  }

  async health (id: string): Promise<ContainerState['health']> {
    return this.#existing(id, 'inspecting a container').health
  }

  async logs (id: string, options: { tail: number, follow: boolean }): Promise<NodeJS.ReadableStream> {
    const c = this.#existing(id, 'reading logs')
    const out = new PassThrough()
    for (const line of options.tail === 0 ? [] : c.logs.slice(-options.tail)) out.write(`${line}\n`)
    if (!options.follow) out.end()
    return out
  }

  async info (): Promise<EngineInfo> {
    this.#check()
    const running = [...this.#world.containers.values()].filter(c => c.state === 'running').length
    return { kind: 'stand-in', version: '0', containers_running: running, cpus: 2, memory_bytes: 8 * GIB }
  }

  async stats (id: string, { sampled }: { sampled: boolean }): Promise<ContainerStats | undefined> {
    this.#check()
    const c = this.#find(id)
    if (c === undefined || c.state !== 'running') return undefined
    return { cpu_seconds: 0, cpu_percent: sampled ? 0 : null, memory_bytes: 0, memory_limit_bytes: 8 * GIB, network_rx_bytes: 0, network_tx_bytes: 0, restarts: c.restarts }
  }

  #runIn (c: FakeContainer, command: string[]): { exitCode: number, output: string } {
    return c.behaviour.run?.(command, c) ?? { exitCode: 0, output: '' }
  }

  async exec (id: string, command: string): Promise<{ exitCode: number, output: string }> {
    const c = this.#existing(id, 'running a command in a container')
    if (c.state !== 'running') throw new EngineFailed(`running a command in a container: container ${id} is not running`)
    return this.#runIn(c, ['/bin/sh', '-c', command])
  }

  async runJob ({ spec, command }: { spec: ServiceSpec, command: string[] }): Promise<{ exitCode: number, output: string }> {
    this.#check()
    const image = this.#world.local.get(normalized(spec.image))
    if (image === undefined) throw new EngineFailed(`creating a job of ${spec.name}: No such image: ${normalized(spec.image)}`)
    return image.behaviour.run?.(command, undefined) ?? { exitCode: 0, output: '' }
  }

  async removeJobLeftovers (): Promise<number> {
    this.#check()
    return 0
  }

  async attach (id: string, { command }: { command: string[] }): Promise<ExecSession> {
    const c = this.#existing(id, 'running a command in a container')
    const { exitCode, output: text } = this.#runIn(c, command)
    const output = new PassThrough()
    const errors = new PassThrough()
    output.end(text)
    errors.end()
    return { input: new PassThrough(), output, errors, resize: async () => {}, exited: Promise.resolve(exitCode), close: () => {} }
  }

  async volumeDir (name: string): Promise<string> {
    this.#check()
    let dir = this.#world.volumes.get(name)
    if (dir === undefined) {
      dir = join(this.#world.volumeRoot(), name)
      mkdirSync(dir, { recursive: true })
      this.#world.volumes.set(name, dir)
    }
    return dir
  }

  async hasVolume (name: string): Promise<boolean> {
    this.#check()
    return this.#world.volumes.has(name)
  }

  async events ({ since, signal }: { since?: number, signal: AbortSignal }): Promise<AsyncIterable<ContainerEvent>> {
    this.#check()
    const mine = (e: { labels: Record<string, string> }): boolean => e.labels['berth.instance'] === this.instance
    const queue: ContainerEvent[] = since === undefined ? [] : this.#world.events.filter(e => e.time >= since && mine(e)).map(({ action, service, time }) => ({ action, service, time }))
    let ended = false
    let wake: (() => void) | undefined
    const bus = this.#world.bus
    const onEvent = (e: ContainerEvent & { labels: Record<string, string> }): void => {
      if (!mine(e)) return
      queue.push({ action: e.action, service: e.service, time: e.time })
      wake?.()
    }
    const end = (): void => {
      ended = true
      bus.off('event', onEvent)
      bus.off('down', end)
      signal.removeEventListener('abort', end)
      wake?.()
    }
    bus.on('event', onEvent)
    bus.on('down', end)
    if (signal.aborted) end()
    else signal.addEventListener('abort', end, { once: true })
    return (async function * () {
      for (;;) {
        const next = queue.shift()
        if (next !== undefined) yield next
        else if (ended) return
        else await new Promise<void>(resolve => { wake = resolve })
      }
    })()
  }
}

/** A stand-in engine with the busybox image, idle as its containers running `sleep` are. */
export function busyboxEngine (): FakeEngine {
  return new FakeEngine({ images: { [BUSYBOX_IMAGE]: FAKE_IDLE } })
}

/** The reconciler plugin running on `engine` in place of Docker. */
export function reconcilerOn (engine: ContainerEngine): AnyPlugin {
  return definePlugin({
    ...reconciler,
    async setup (ctx) {
      const { setupReconciler } = await import('../../plugins/reconciler/setup.js')
      return setupReconciler(ctx, engine)
    }
  })
}
