// The runtime seam: what the reconciler needs from a container engine. The Docker engine is the one
// implementation (docker-engine.ts); another runtime implements this interface and is registered by name.
import type { ServiceSpec } from './spec.js'
import { BerthError, Unavailable } from '../../kernel/index.js'
import { RECONCILER_CODES } from './errors.js'

/** One container the runtime manages for this server, as one list call reports it. */
export interface ContainerState {
  /** Name of the runtime that runs it. */
  runtime: string
  id: string
  name: string
  service: string
  project: string
  replica: number
  /** The service's canary (one replica of another spec beside the numbered ones), not a numbered replica. */
  canary?: boolean
  /** The node that runs it, for a container of another node of a cluster; absent: this node. */
  node?: string
  /** The specHash label it was created with. */
  hash: string
  imageId: string
  running: boolean
  /** The engine's word for its state: running, exited, created, restarting, ... */
  state: string
  /** Where its primary port is published, when it has one and runs. */
  address?: { host: string, port: number }
  /** What the engine's health check says, for a service with a `healthcheck`. */
  health?: 'starting' | 'healthy' | 'unhealthy'
}

/** Everything needed to create one replica. */
export interface CreateRequest {
  spec: ServiceSpec
  replica: number
  hash: string
  /** Create the service's canary rather than the numbered `replica`. */
  canary?: boolean
  /** The environment with secrets resolved: it goes to the container and nowhere else. */
  env: Record<string, string>
}

/** Something the engine did to one of this server's containers. */
export interface ContainerEvent {
  /** The engine's word: start, die, destroy, stop, kill, ... */
  action: string
  service: string
  /** When, in seconds since the epoch. */
  time: number
}

/** A command running in a container for a caller: its input, its output, and its exit code once it ends. */
export interface ExecSession {
  input: NodeJS.WritableStream
  /** Its standard output; with a TTY, everything it writes. */
  output: NodeJS.ReadableStream
  /** Its standard error (nothing with a TTY). */
  errors: NodeJS.ReadableStream
  /** The TTY's size, in characters. */
  resize(columns: number, rows: number): Promise<void>
  /** Its exit code, once it has ended and its output with it. */
  exited: Promise<number>
  /** The caller went away: its input ends and the connection to the engine closes. */
  close(): void
}

/** What the engine measures of a running container. */
export interface ContainerStats {
  /** CPU time used since it started, in seconds. */
  cpu_seconds: number
  /** CPU use over the engine's last second, in percent of one CPU (200 is two busy cores); null unless sampled. */
  cpu_percent: number | null
  memory_bytes: number
  /** Its memory limit: the host's memory when it has none. */
  memory_limit_bytes: number
  network_rx_bytes: number
  network_tx_bytes: number
  /** Times the engine restarted it by its restart policy. */
  restarts: number
}

export interface EngineInfo {
  kind: string
  version: string
  containers_running: number
  cpus: number
  memory_bytes: number
}

export interface ContainerEngine {
  /** The `runtime` value of service specs this runtime serves. */
  readonly name: string
  /** Every container of this server, in one call. */
  list(): Promise<ContainerState[]>
  /** Local images: each reference (name:tag or name@digest) to its image id. */
  localImages(): Promise<Map<string, string>>
  pull(ref: string): Promise<void>
  /** Push a local image to the registry its reference names (with the login the credential file has for it). */
  push(ref: string): Promise<void>
  /** Build an image from a context directory's `files` (relative paths), tagged `tag`. */
  build(request: { context: string, files: readonly string[], dockerfile: string, args: Record<string, string>, tag: string }): Promise<void>
  /** Remove the images of `repository` but the `keep` newest (and those in use); how many went. */
  pruneBuilds(repository: string, keep: number): Promise<number>
  /** Create and start a container; a container that fails to start is removed again. */
  create(request: CreateRequest): Promise<string>
  start(id: string): Promise<void>
  stop(id: string): Promise<void>
  restart(id: string): Promise<void>
  /** Let a paused container run again. */
  unpause(id: string): Promise<void>
  remove(id: string): Promise<void>
  /** Where a container's primary port is published now (it may change when the container restarts). */
  address(id: string, port: number): Promise<{ host: string, port: number } | undefined>
  /** What the engine's health check of a container says now; undefined when it has none. */
  health(id: string): Promise<ContainerState['health']>
  /** Output of a container: the last `tail` lines, then new lines while `follow`; stdout and stderr merged. */
  logs(id: string, options: { tail: number, follow: boolean }): Promise<NodeJS.ReadableStream>
  info(): Promise<EngineInfo>
  /**
   * What the engine measures of a container now; undefined when it no longer runs. `sampled` waits for
   * the engine's second sample (about a second) to give the CPU percent too.
   */
  stats(id: string, options: { sampled: boolean }): Promise<ContainerStats | undefined>
  /** Run `/bin/sh -c <command>` in a running container; its exit code and output (stdout and stderr, the last 4 KiB). */
  exec(id: string, command: string): Promise<{ exitCode: number, output: string }>
  /**
   * Run a job: `command` as a one-off container of the service's image, environment, volumes, mounts,
   * limits and network (no published port, no network alias), removed once it ends. Its exit code and
   * the end of its output (stdout and stderr, the last 4 KiB).
   */
  runJob(request: { spec: ServiceSpec, job: string, command: string[], env: Record<string, string> }): Promise<{ exitCode: number, output: string }>
  /** Remove the job containers a server that stopped mid-run left (with `running`, also those this process runs now); how many. */
  removeJobLeftovers(options?: { running: boolean }): Promise<number>
  /** Start `command` (no shell) in a running container for a caller to talk to, with a TTY of that size or without one. */
  attach(id: string, options: { command: string[], tty: boolean, columns?: number, rows?: number }): Promise<ExecSession>
  /** Where a named volume's files are on this host, creating the volume (with this server's labels) if it does not exist. */
  volumeDir(name: string, project: string): Promise<string>
  /** Whether a named volume exists. */
  hasVolume(name: string): Promise<boolean>
  /**
   * The engine's events about this server's containers, from `since` (seconds since the epoch; none:
   * from now) until the engine goes away or `signal` aborts, when the iteration ends. Throws
   * EngineUnavailable when the engine cannot be reached.
   */
  events(options: { since?: number, signal: AbortSignal }): Promise<AsyncIterable<ContainerEvent>>
}

/** The engine cannot be reached: every service of a deploy fails with this, none crashes the server; a client gets 503. */
export class EngineUnavailable extends Unavailable {
  constructor (message: string) { super(message, { code: RECONCILER_CODES.ENGINE_UNAVAILABLE }) }
}

/** The engine answered a call with an error: a client gets 502 with what was asked and the engine's own words. */
export class EngineFailed extends BerthError {
  constructor (message: string, options?: ErrorOptions) { super(message, RECONCILER_CODES.ENGINE_FAILED.status, RECONCILER_CODES.ENGINE_FAILED.code, options) }
}
