// Liveness probing: for every running container of a service with `[service.liveness]`, an HTTP probe
// of the primary port after `initial_delay_secs`, then every `interval_secs` with `timeout_secs`;
// `failure_threshold` consecutive failures restart the container, and the restart is counted. Through
// the traffic seam, as every other restart: the container is drained (out of rotation, its requests in
// flight finished) before it stops, and routed again once it serves.
import type { Logger } from 'pino'
import { probe } from './probe.js'
import type { ContainerState, ContainerEngine } from './container-engine.js'
import type { LivenessSpec, ServiceSpec } from './spec.js'
import type { TrafficHooks } from './traffic.js'

export interface LivenessDeps {
  runtime(name: string): ContainerEngine
  /** Every container of this server (one list call). */
  containers(): Promise<ContainerState[]>
  /** The desired spec a container runs: its service's, or the canary's for the canary container. */
  spec(container: ContainerState): ServiceSpec | undefined
  /** Count one restart of `service` (state and metrics). */
  restarted(service: string): Promise<void>
  log: Logger
}

interface Target {
  container: ContainerState
  liveness: LivenessSpec
  port: number
  address: { host: string, port: number }
  failures: number
  timer?: NodeJS.Timeout
}

export class Liveness {
  readonly #deps: LivenessDeps
  readonly #targets = new Map<string, Target>()
  #stopped = false
  /** The routers' seam (set by the proxy when it routes): without it a restart is not announced to anyone. */
  traffic: TrafficHooks | undefined

  constructor (deps: LivenessDeps) {
    this.#deps = deps
  }

  /** Probe exactly the running containers that have liveness settings now; keep probes that still apply. */
  async refresh (): Promise<void> {
    if (this.#stopped) return
    const wanted = new Map<string, Target>()
    for (const container of await this.#deps.containers()) {
      const spec = this.#deps.spec(container)
      if (!container.running || spec?.liveness === undefined || spec.port === undefined || container.address === undefined) continue
      wanted.set(container.id, { container, liveness: spec.liveness, port: spec.port, address: container.address, failures: 0 })
    }
    for (const [id, target] of this.#targets) {
      const next = wanted.get(id)
      if (next !== undefined && JSON.stringify(next.liveness) === JSON.stringify(target.liveness)) {
        wanted.delete(id)
        continue
      }
      clearTimeout(target.timer)
      this.#targets.delete(id)
    }
    for (const [id, target] of wanted) {
      this.#targets.set(id, target)
      this.#schedule(target, target.liveness.initial_delay_secs)
    }
  }

  stop (): void {
    this.#stopped = true
    for (const target of this.#targets.values()) clearTimeout(target.timer)
    this.#targets.clear()
  }

  #schedule (target: Target, seconds: number): void {
    if (this.#stopped) return
    target.timer = setTimeout(() => { void this.#probe(target) }, seconds * 1000)
  }

  async #probe (target: Target): Promise<void> {
    const { liveness, container } = target
    const ok = await probe(target.address, liveness.path, liveness.timeout_secs * 1000)
    if (this.#targets.get(container.id) !== target) return
    target.failures = ok ? 0 : target.failures + 1
    if (target.failures < liveness.failure_threshold) {
      this.#schedule(target, liveness.interval_secs)
      return
    }
    target.failures = 0
    const log = this.#deps.log.child({ service: container.service, container: container.name })
    try {
      const runtime = this.#deps.runtime(container.runtime)
      log.warn({ path: liveness.path, failures: liveness.failure_threshold }, 'liveness probe failed; restarting the container')
      await this.traffic?.drain(container)
      try {
        await runtime.restart(container.id)
        target.address = await runtime.address(container.id, target.port) ?? target.address
      } finally {
        // Drained, it stays out of rotation until it serves again (restarted or not).
        await this.#serving(container, log)
      }
      await this.#deps.restarted(container.service)
    } catch (err) {
      log.error({ err }, 'liveness restart failed')
    }
    if (this.#targets.get(container.id) === target) this.#schedule(target, liveness.initial_delay_secs)
  }

  /** Wait (as a rollout does) until the routers see the container serve; one that does not yet is routed when a health probe passes. */
  async #serving (container: ContainerState, log: Logger): Promise<void> {
    const spec = this.#deps.spec(container)
    if (spec === undefined || this.traffic === undefined) return
    try {
      await this.traffic.ready(spec, container.id)
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'the restarted container does not serve yet; it is routed once a health probe passes')
    }
  }
}
