// The Docker engine as a runtime (dockerode over the engine's socket): one list call filtered by this
// server's instance label, creation with ports on the publish address, volumes, mounts, limits and a
// network alias per service, and every engine failure as a clear message.
import type Docker from 'dockerode'
import type { ContainerCreateOptions, MountSettings } from 'dockerode'
import { once } from 'node:events'
import { type Duplex, PassThrough, Readable, Writable } from 'node:stream'
import type { ContainerEvent, ContainerState, CreateRequest, ContainerEngine, ContainerStats, EngineInfo, ExecSession } from './container-engine.js'
import { EngineFailed, EngineUnavailable } from './container-engine.js'
import { credentialsFor, readDockerConfig } from './registry-auth.js'
import type { ServiceSpec } from './spec.js'
import { parseMemory } from './units.js'

export interface DockerSettings {
  socket: string
  /** Written in the berth.instance label: this server manages only containers carrying it. */
  instance: string
  publish_address: string
  network: string
  stop_timeout_secs: number
  /** The engine's credential file (config.json with `auths`) used for pulls from private registries. */
  credentials_file: string
}

const LABEL = {
  instance: 'berth.instance',
  project: 'berth.project',
  service: 'berth.service',
  replica: 'berth.replica',
  hash: 'berth.hash',
  port: 'berth.port',
  canary: 'berth.canary',
  /** On job containers instead of `instance` (which would make them replicas): the server's instance. */
  jobInstance: 'berth.job-instance',
  job: 'berth.job'
} as const

/** Networks the engine always has: used as network modes, never created, no aliases. */
const BUILTIN_NETWORKS = new Set(['bridge', 'host', 'none'])
const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOENT', 'EACCES', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT'])

/** The engine's own message when it gave one ("No such image: x:1"), else the error's. */
function engineMessage (err: unknown): string {
  const json = (err as { json?: { message?: unknown } }).json
  if (typeof json?.message === 'string') return json.message.trim()
  return err instanceof Error ? err.message : String(err)
}

/** Output kept of a command run in a container (the end of it). */
const EXEC_OUTPUT_BYTES = 4096

function statusOf (err: unknown): number | undefined {
  return (err as { statusCode?: number }).statusCode
}

/** The container events of the engine's event stream (one JSON object a line), until it ends or breaks. */
async function * containerEvents (stream: NodeJS.ReadableStream): AsyncIterable<ContainerEvent> {
  let pending = ''
  try {
    for await (const chunk of stream) {
      const lines = (pending + (chunk as Buffer | string).toString()).split('\n')
      pending = lines.pop() ?? ''
      for (const line of lines) {
        if (line.trim() === '') continue
        const event = JSON.parse(line) as { Type?: string, Action?: string, time?: number, Actor?: { Attributes?: Record<string, string> } }
        const service = event.Actor?.Attributes?.[LABEL.service]
        if (event.Type === 'container' && event.Action !== undefined && service !== undefined) yield { action: event.Action, service, time: event.time ?? 0 }
      }
    }
  } catch {
    // The engine went away or the watch was stopped: the iteration ends.
  }
}

/** Where a published port is reached from this host (a wildcard address means loopback). */
function reachable (ip: string, port: number): { host: string, port: number } {
  return { host: ip === '' || ip === '0.0.0.0' || ip === '::' ? '127.0.0.1' : ip, port }
}

export class DockerEngine implements ContainerEngine {
  readonly name = 'docker'
  #docker: Promise<Docker> | undefined
  readonly #settings: DockerSettings
  #network: Promise<void> | undefined
  /** Job containers this process runs now: not leftovers. */
  readonly #jobsRunning = new Set<string>()

  constructor (settings: DockerSettings) {
    this.#settings = settings
  }

  /** The engine client; dockerode is loaded with the first engine call, not when the server starts. */
  async #engine (): Promise<Docker> {
    this.#docker ??= import('dockerode').then(({ default: Dockerode }) => new Dockerode({ socketPath: this.#settings.socket }))
    return await this.#docker
  }

  /** Run an engine call; an unreachable engine becomes EngineUnavailable, anything else EngineFailed with the engine's message. */
  async #call<T> (what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn()
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code
      if (code !== undefined && UNREACHABLE.has(code)) {
        throw new EngineUnavailable(`container engine unavailable at ${this.#settings.socket}: ${code}`)
      }
      throw new EngineFailed(`${what}: ${engineMessage(err)}`, { cause: err })
    }
  }

  async list (): Promise<ContainerState[]> {
    const found = await this.#call('listing containers', async () => await (await this.#engine()).listContainers({
      all: true, filters: { label: [`${LABEL.instance}=${this.#settings.instance}`] }
    }))
    return found.map(info => {
      const labels = info.Labels
      const port = Number(labels[LABEL.port])
      const published = info.Ports.find(p => p.PrivatePort === port && p.Type === 'tcp' && p.PublicPort !== undefined)
      const state: ContainerState = {
        runtime: this.name,
        id: info.Id,
        name: (info.Names[0] ?? info.Id).replace(/^\//, ''),
        service: labels[LABEL.service] ?? '',
        project: labels[LABEL.project] ?? '',
        replica: Number(labels[LABEL.replica]),
        ...(labels[LABEL.canary] === 'true' && { canary: true }),
        hash: labels[LABEL.hash] ?? '',
        imageId: info.ImageID,
        running: info.State === 'running',
        state: info.State
      }
      if (published !== undefined && state.running) state.address = reachable(published.IP, published.PublicPort)
      const health = /\((healthy|unhealthy|health: starting)\)/.exec(info.Status)?.[1]
      if (health !== undefined) state.health = health === 'health: starting' ? 'starting' : health as 'healthy' | 'unhealthy'
      return state
    })
  }

  async localImages (): Promise<Map<string, string>> {
    const images = await this.#call('listing images', async () => await (await this.#engine()).listImages())
    const byName = new Map<string, string>()
    for (const image of images) {
      for (const name of [...(image.RepoTags ?? []), ...(image.RepoDigests ?? [])]) byName.set(name, image.Id)
    }
    return byName
  }

  async pull (ref: string): Promise<void> {
    await this.#call(`pulling ${ref}`, async () => {
      const authconfig = credentialsFor(ref, readDockerConfig(this.#settings.credentials_file))
      const docker = await this.#engine()
      await this.#progress(await docker.pull(ref, authconfig === undefined ? {} : { authconfig }))
    })
  }

  async push (ref: string): Promise<void> {
    await this.#call(`pushing ${ref}`, async () => {
      const authconfig = credentialsFor(ref, readDockerConfig(this.#settings.credentials_file))
      const docker = await this.#engine()
      // The engine wants a login header on a push even when there is no login: an empty one then.
      await this.#progress(await docker.getImage(ref).push({ authconfig: authconfig ?? {} }) as NodeJS.ReadableStream)
    })
  }

  /** Follow an engine's progress stream to its end; an entry with an error fails it. */
  async #progress (stream: NodeJS.ReadableStream): Promise<void> {
    const docker = await this.#engine()
    const entries = await new Promise<unknown[]>((resolve, reject) => {
      docker.modem.followProgress(stream, (err: Error | null, output: unknown[]) => { if (err === null) resolve(output); else reject(err) })
    })
    const failed = entries.find((e): e is { error: unknown } => typeof e === 'object' && e !== null && 'error' in e)
    if (failed !== undefined) throw new Error(String(failed.error).trim())
  }

  async build ({ context, files, dockerfile, args, tag }: { context: string, files: readonly string[], dockerfile: string, args: Record<string, string>, tag: string }): Promise<void> {
    await this.#call(`building ${tag}`, async () => {
      const docker = await this.#engine()
      await this.#progress(await docker.buildImage({ context, src: [...files] }, { t: tag, dockerfile, buildargs: args, labels: { [LABEL.instance]: this.#settings.instance }, rm: true, forcerm: true }))
    })
  }

  async pruneBuilds (repository: string, keep: number): Promise<number> {
    const docker = await this.#engine()
    const images = await this.#call('listing built images', async () => await docker.listImages({ filters: { reference: [repository] } }))
    const old = images.sort((a, b) => b.Created - a.Created).slice(keep)
    let removed = 0
    for (const image of old) {
      // One in use (a container of a rollback target, say) is kept: the engine refuses, and that is right.
      await docker.getImage(image.Id).remove().then(() => { removed++ }, () => undefined)
    }
    return removed
  }

  async #ensureNetwork (): Promise<void> {
    const name = this.#settings.network
    if (BUILTIN_NETWORKS.has(name)) return
    this.#network ??= this.#call(`creating network ${name}`, async () => {
      try {
        await (await this.#engine()).getNetwork(name).inspect()
      } catch (err) {
        if (statusOf(err) !== 404) throw err
        await (await this.#engine()).createNetwork({ Name: name, Driver: 'bridge', CheckDuplicate: true, Labels: { [LABEL.instance]: this.#settings.instance } })
          .catch((e: unknown) => { if (statusOf(e) !== 409) throw e })
      }
    })
    try {
      await this.#network
    } catch (err) {
      this.#network = undefined
      throw err
    }
  }

  #createOptions ({ spec, replica, hash, env, canary = false }: CreateRequest): ContainerCreateOptions {
    const { publish_address: address, network, instance } = this.#settings
    const exposed: Record<string, object> = {}
    const bindings: Record<string, Array<{ HostIp: string, HostPort: string }>> = {}
    const publish = (container: number, host: string): void => {
      const key = `${container}/tcp`
      exposed[key] = {}
      bindings[key] = [...(bindings[key] ?? []), { HostIp: address, HostPort: host }]
    }
    if (spec.port !== undefined) publish(spec.port, '')
    for (const { host, container } of spec.extra_ports) publish(container, String(host))
    const mounts: MountSettings[] = [
      ...spec.volumes.map(v => ({
        Type: 'volume' as const, Source: `${spec.project}_${v.source}`, Target: v.target,
        VolumeOptions: { NoCopy: false, Labels: { [LABEL.instance]: instance, [LABEL.project]: spec.project }, DriverConfig: { Name: 'local', Options: {} } }
      })),
      ...spec.mounts.map(m => ({ Type: 'bind' as const, Source: m.source, Target: m.target, ReadOnly: m.read_only }))
    ]
    const memory = spec.resources?.memory === undefined ? undefined : parseMemory(spec.resources.memory)
    const labels: Record<string, string> = {
      [LABEL.instance]: instance, [LABEL.project]: spec.project, [LABEL.service]: spec.name, [LABEL.replica]: canary ? '0' : String(replica), [LABEL.hash]: hash
    }
    if (spec.port !== undefined) labels[LABEL.port] = String(spec.port)
    if (canary) labels[LABEL.canary] = 'true'
    const builtin = BUILTIN_NETWORKS.has(network)
    return {
      name: `${spec.project}-${spec.name}-${canary ? 'canary' : replica}`,
      Image: spec.image,
      Cmd: spec.command,
      Env: Object.entries(env).map(([k, v]) => `${k}=${v}`),
      Labels: labels,
      ExposedPorts: exposed,
      ...(spec.healthcheck !== undefined && {
        Healthcheck: {
          Test: ['CMD-SHELL', spec.healthcheck.command],
          Interval: spec.healthcheck.interval_secs * 1e9,
          Timeout: spec.healthcheck.timeout_secs * 1e9,
          Retries: spec.healthcheck.retries,
          StartPeriod: spec.healthcheck.start_period_secs * 1e9
        }
      }),
      HostConfig: {
        NetworkMode: network,
        PortBindings: network === 'host' ? {} : bindings,
        Mounts: mounts,
        Memory: memory,

        NanoCpus: spec.resources?.cpu === undefined ? undefined : Math.round(spec.resources.cpu * 1e9),
        // The engine restarts a container by itself, unless it depends on others: after the engine
        // restarts, the repair starts those once what they depend on is ready (the engine knows no order).
        RestartPolicy: { Name: spec.depends_on.length === 0 ? 'unless-stopped' : 'no' }
      },
      NetworkingConfig: builtin ? undefined : { EndpointsConfig: { [network]: { Aliases: [spec.name] } } }
    }
  }

  async create (request: CreateRequest): Promise<string> {
    await this.#ensureNetwork()
    const options = this.#createOptions(request)
    const container = await this.#call(`creating ${options.name}`, async () => await (await this.#engine()).createContainer(options))
    try {
      await this.#call(`starting ${options.name}`, async () => { await container.start() })
    } catch (err) {
      await container.remove({ force: true }).catch(() => undefined)
      throw err
    }
    return container.id
  }

  async runJob ({ spec, job, command, env }: { spec: ServiceSpec, job: string, command: string[], env: Record<string, string> }): Promise<{ exitCode: number, output: string }> {
    await this.#ensureNetwork()
    const { network, instance } = this.#settings
    const base = this.#createOptions({ spec, replica: 0, hash: '', env })
    const options: ContainerCreateOptions = {
      ...base,
      name: `${spec.project}-${spec.name}-job-${job}-${Date.now().toString(36)}`,
      Cmd: command,
      Labels: { [LABEL.jobInstance]: instance, [LABEL.project]: spec.project, [LABEL.job]: `${spec.name}/${job}` },
      ExposedPorts: {},
      Healthcheck: undefined,
      HostConfig: { ...base.HostConfig, PortBindings: {}, RestartPolicy: { Name: 'no' } },
      NetworkingConfig: BUILTIN_NETWORKS.has(network) ? undefined : { EndpointsConfig: { [network]: {} } }
    }
    const docker = await this.#engine()
    const container = await this.#call(`creating ${options.name ?? job}`, async () => await docker.createContainer(options))
    this.#jobsRunning.add(container.id)
    try {
      return await this.#call(`running job ${job} of ${spec.name}`, async () => {
        await container.start()
        const { StatusCode: exitCode } = await container.wait() as { StatusCode: number }
        const raw = await container.logs({ stdout: true, stderr: true, tail: 200, follow: false }) as unknown as Buffer
        const out = new PassThrough()
        let output = ''
        out.on('data', (chunk: Buffer) => { output = (output + chunk.toString()).slice(-EXEC_OUTPUT_BYTES) })
        const source = Readable.from([raw])
        docker.modem.demuxStream(source, out, out)
        await once(source, 'end')
        return { exitCode, output }
      })
    } finally {
      this.#jobsRunning.delete(container.id)
      await container.remove({ force: true }).catch(() => undefined)
    }
  }

  async removeJobLeftovers (options: { running: boolean } = { running: false }): Promise<number> {
    const docker = await this.#engine()
    const listed = await this.#call('listing job containers', async () => await docker.listContainers({ all: true, filters: { label: [`${LABEL.jobInstance}=${this.#settings.instance}`] } }))
    const left = options.running ? listed : listed.filter(info => !this.#jobsRunning.has(info.Id))
    await Promise.all(left.map(async info => { await docker.getContainer(info.Id).remove({ force: true }).catch(() => undefined) }))
    return left.length
  }

  async start (id: string): Promise<void> {
    await this.#call('starting a container', async () => {
      await (await this.#engine()).getContainer(id).start().catch((err: unknown) => { if (statusOf(err) !== 304) throw err })
    })
  }

  async stop (id: string): Promise<void> {
    await this.#call('stopping a container', async () => {
      await (await this.#engine()).getContainer(id).stop({ t: this.#settings.stop_timeout_secs }).catch((err: unknown) => { if (statusOf(err) !== 304) throw err })
    })
  }

  async restart (id: string): Promise<void> {
    await this.#call('restarting a container', async () => { await (await this.#engine()).getContainer(id).restart({ t: this.#settings.stop_timeout_secs }) })
  }

  async unpause (id: string): Promise<void> {
    await this.#call('unpausing a container', async () => { await (await this.#engine()).getContainer(id).unpause() })
  }

  /** Stop (within the stop timeout) and remove; a container already gone counts as removed. */
  async remove (id: string): Promise<void> {
    await this.stop(id).catch(() => undefined)
    await this.#call('removing a container', async () => {
      await (await this.#engine()).getContainer(id).remove({ force: true }).catch((err: unknown) => { if (statusOf(err) !== 404) throw err })
    })
  }

  async address (id: string, port: number): Promise<{ host: string, port: number } | undefined> {
    const info = await this.#call('inspecting a container', async () => await (await this.#engine()).getContainer(id).inspect())
    const binding = (info.NetworkSettings.Ports[`${port}/tcp`] ?? [])[0]
    return binding === undefined ? undefined : reachable(binding.HostIp, Number(binding.HostPort))
  }

  async health (id: string): Promise<ContainerState['health']> {
    const info = await this.#call('inspecting a container', async () => await (await this.#engine()).getContainer(id).inspect())
    const status = info.State.Health?.Status
    return status === 'starting' || status === 'healthy' || status === 'unhealthy' ? status : undefined
  }

  async logs (id: string, options: { tail: number, follow: boolean }): Promise<NodeJS.ReadableStream> {
    const docker = await this.#engine()
    const container = docker.getContainer(id)
    const raw: unknown = await this.#call('reading logs', async () => options.follow
      ? await container.logs({ stdout: true, stderr: true, tail: options.tail, follow: true })
      : await container.logs({ stdout: true, stderr: true, tail: options.tail, follow: false }))
    const source = Buffer.isBuffer(raw) ? Readable.from([raw]) : raw as Readable
    const out = new PassThrough()
    docker.modem.demuxStream(source, out, out)
    source.on('end', () => out.end())
    source.on('error', err => out.destroy(err))
    out.on('close', () => { source.destroy() })
    return out
  }

  async exec (id: string, command: string): Promise<{ exitCode: number, output: string }> {
    const docker = await this.#engine()
    return await this.#call('running a command in a container', async () => {
      const exec = await docker.getContainer(id).exec({ Cmd: ['/bin/sh', '-c', command], AttachStdout: true, AttachStderr: true })
      const stream = await exec.start({ hijack: true, stdin: false })
      const out = new PassThrough()
      let output = ''
      out.on('data', (chunk: Buffer) => { output = (output + chunk.toString()).slice(-EXEC_OUTPUT_BYTES) })
      docker.modem.demuxStream(stream, out, out)
      await new Promise<void>((resolve, reject) => { stream.on('end', resolve); stream.on('close', resolve); stream.on('error', reject) })
      const { ExitCode: exitCode } = await exec.inspect()
      return { exitCode: exitCode ?? -1, output }
    })
  }

  async attach (id: string, { command, tty, columns, rows }: { command: string[], tty: boolean, columns?: number, rows?: number }): Promise<ExecSession> {
    const docker = await this.#engine()
    return await this.#call('running a command in a container', async () => {
      const exec = await docker.getContainer(id).exec({ Cmd: command, AttachStdin: true, AttachStdout: true, AttachStderr: true, Tty: tty })
      const stream = await exec.start({ hijack: true, stdin: true, Tty: tty }) as Duplex
      const output = new PassThrough()
      const errors = new PassThrough()
      if (tty) stream.pipe(output)
      else {
        docker.modem.demuxStream(stream, output, errors)
        stream.on('end', () => { output.end(); errors.end() })
      }
      const resize = async (w: number, h: number): Promise<void> => { if (tty) await exec.resize({ w, h }) }
      if (columns !== undefined && rows !== undefined) await resize(columns, rows).catch(() => undefined)
      const ended = new Promise<void>(resolve => { stream.once('end', resolve); stream.once('close', resolve) })
      const exited = ended.then(async () => await exitCodeOf(exec))
      // The input's end closes the connection's writing half: the command reads end of file.
      const input = new Writable({
        write: (chunk: Buffer, _encoding, done) => { stream.write(chunk, done) },
        final: done => { stream.end(); done() }
      })
      return { input, output, errors, resize, exited, close: () => { stream.destroy() } }
    })
  }

  async hasVolume (name: string): Promise<boolean> {
    const docker = await this.#engine()
    return await this.#call('inspecting a volume', async () => await docker.getVolume(name).inspect().then(() => true, (err: unknown) => {
      if (statusOf(err) === 404) return false
      throw err
    }))
  }

  async volumeDir (name: string, project: string): Promise<string> {
    const docker = await this.#engine()
    return await this.#call(`preparing volume ${name}`, async () => {
      if (!await this.hasVolume(name)) {
        await docker.createVolume({ Name: name, Driver: 'local', Labels: { [LABEL.instance]: this.#settings.instance, [LABEL.project]: project } })
      }
      const info = await docker.getVolume(name).inspect() as { Mountpoint: string }
      return info.Mountpoint
    })
  }

  async events ({ since, signal }: { since?: number, signal: AbortSignal }): Promise<AsyncIterable<ContainerEvent>> {
    const stream = await this.#call('watching engine events', async () => await (await this.#engine()).getEvents({
      ...(since !== undefined && { since }), filters: { type: ['container'], label: [`${LABEL.instance}=${this.#settings.instance}`] }
    }))
    const end = (): void => { (stream as Readable).destroy() }
    if (signal.aborted) end()
    else signal.addEventListener('abort', end, { once: true })
    stream.once('close', () => { signal.removeEventListener('abort', end) })
    return containerEvents(stream)
  }

  async stats (id: string, { sampled }: { sampled: boolean }): Promise<ContainerStats | undefined> {
    const container = (await this.#engine()).getContainer(id)
    const gone = (err: unknown): undefined => {
      if (statusOf(err) === 404) return undefined
      throw err
    }
    return await this.#call('reading container stats', async () => {
      const [raw, info] = await Promise.all([
        container.stats({ stream: false, ...(!sampled && { 'one-shot': true }) }).catch(gone) as Promise<DockerStats | undefined>,
        container.inspect().catch(gone)
      ])
      if (raw === undefined || info === undefined || info.State.Running !== true) return undefined
      return statsOf(raw, sampled, info.RestartCount ?? 0)
    })
  }

  async info (): Promise<EngineInfo> {
    const info = await this.#call('reading engine info', async () => await (await this.#engine()).info() as {
      ServerVersion?: string, ContainersRunning?: number, NCPU?: number, MemTotal?: number
    })
    return {
      kind: 'docker',
      version: info.ServerVersion ?? 'unknown',
      containers_running: info.ContainersRunning ?? 0,
      cpus: info.NCPU ?? 0,
      memory_bytes: info.MemTotal ?? 0
    }
  }
}

/** The fields of Docker's container stats this server reads (cgroup v1 and v2 alike). */
interface DockerStats {
  cpu_stats?: { cpu_usage?: { total_usage?: number }, system_cpu_usage?: number, online_cpus?: number }
  precpu_stats?: { cpu_usage?: { total_usage?: number }, system_cpu_usage?: number }
  memory_stats?: { usage?: number, limit?: number, stats?: { inactive_file?: number, total_inactive_file?: number } }
  networks?: Record<string, { rx_bytes?: number, tx_bytes?: number }>
}

/**
 * Docker's stats as ContainerStats: memory less the inactive page cache (as `docker stats` shows it),
 * the CPU percent from the engine's two samples (the container's CPU time over the host's, times its CPUs).
 */
function statsOf (raw: DockerStats, sampled: boolean, restarts: number): ContainerStats {
  const cpu = raw.cpu_stats ?? {}
  const used = cpu.cpu_usage?.total_usage ?? 0
  const cpuDelta = used - (raw.precpu_stats?.cpu_usage?.total_usage ?? 0)
  const systemDelta = (cpu.system_cpu_usage ?? 0) - (raw.precpu_stats?.system_cpu_usage ?? 0)
  const memory = raw.memory_stats ?? {}
  const cache = memory.stats?.inactive_file ?? memory.stats?.total_inactive_file ?? 0
  const networks = Object.values(raw.networks ?? {})
  return {
    cpu_seconds: used / 1e9,
    cpu_percent: sampled && systemDelta > 0 ? Math.round((cpuDelta / systemDelta) * (cpu.online_cpus ?? 1) * 1000) / 10 : null,
    memory_bytes: Math.max(0, (memory.usage ?? 0) - cache),
    memory_limit_bytes: memory.limit ?? 0,
    network_rx_bytes: networks.reduce((sum, n) => sum + (n.rx_bytes ?? 0), 0),
    network_tx_bytes: networks.reduce((sum, n) => sum + (n.tx_bytes ?? 0), 0),
    restarts
  }
}

/** An exec's exit code once the engine says it has stopped (its output can end a moment before); -1 when it cannot tell. */
async function exitCodeOf (exec: Docker.Exec): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const info = await exec.inspect().catch(() => undefined)
    if (info === undefined) return -1
    if (info.Running !== true) return info.ExitCode ?? -1
    await new Promise(resolve => setTimeout(resolve, 20))
  }
  return -1
}
