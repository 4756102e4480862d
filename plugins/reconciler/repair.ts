// Continuous reconcile: a repair pass (the reconciler's `repair`, serialised with deploys) every
// `repair_interval_secs`, soon after the engine reports one of this server's containers died or was
// removed, and as soon as the engine answers again after it was gone (its event stream is watched and
// reconnected). A service whose repair fails waits longer and longer before the next attempt; a new
// deploy of it forgives the failures.
import { setTimeout as sleep } from 'node:timers/promises'
import type { Logger } from 'pino'
import type { Counter } from 'prom-client'
import type { OperatorAlert } from '../../kernel/index.js'
import { coalesced } from '../../kernel/runtime-api.js'
import type { RepairOutcome } from './reconciler.js'
import { EngineUnavailable, type ContainerEvent } from './container-engine.js'

/** Events after which a pass runs: a container ended (died, was killed or stopped) or was removed. */
const LOSSES = new Set(['die', 'destroy'])
/** Events that move a container to another published port: the routers are told. */
const STARTS = new Set(['start', 'restart'])
/** Events arriving together are answered by one pass this long after the first. */
const SETTLE_MS = 250
/** Between attempts to reach an engine that went away. */
const RECONNECT_MS = 1000
/** The longest a failing service waits between repairs. */
const MAX_BACKOFF_MS = 300_000

/** How long a service waits before its next repair after `failures` failed ones in a row: the interval, doubled each time, at most five minutes. */
export function repairBackoffMs (failures: number, intervalMs: number): number {
  return Math.min(intervalMs * 2 ** Math.max(0, failures - 1), MAX_BACKOFF_MS)
}

export interface RepairLoopDeps {
  /** One repair pass, leaving the services of `skip` alone. */
  repair(skip: ReadonlySet<string>): Promise<RepairOutcome>
  /** The engine's events about this server's containers (see ContainerEngine.events). */
  events(options: { since?: number, signal: AbortSignal }): Promise<AsyncIterable<ContainerEvent>>
  /** When a service was last deployed: failed repairs of an earlier deploy are forgiven. */
  deployedAt(service: string): string | undefined
  /** The engine started containers of these services itself (restart policy): they may be published on other ports. */
  started(services: string[]): void
  alert(alert: OperatorAlert): void
  /** Work in flight the server waits for when it stops (a pass an event asked for). */
  track(work: Promise<void>): Promise<void>
  intervalMs: number
  log: Logger
  metrics: { passes: Counter, repairs: Counter<'service'>, failures: Counter<'service'> }
}

interface Backoff {
  failures: number
  error: string
  next: number
  /** The deploy these failures belong to. */
  deployedAt: string | undefined
}

export class RepairLoop {
  readonly #deps: RepairLoopDeps
  readonly #backoff = new Map<string, Backoff>()
  readonly #stopping = new AbortController()
  #settle: NodeJS.Timeout | undefined
  /** Whether the settling events ask for a pass (a container was lost), not only for the routers to be told. */
  #lost = false
  readonly #started = new Set<string>()
  #engineAway = false

  constructor (deps: RepairLoopDeps) {
    this.#deps = deps
  }

  /** Watch the engine's events (a pass runs as soon as it answers); `stop` ends it. */
  start (): Promise<void> {
    return this.#watch()
  }

  stop (): void {
    this.#stopping.abort()
    clearTimeout(this.#settle)
  }

  /** Why repairing a service keeps failing, for the status; undefined when it does not. */
  failure (service: string): string | undefined {
    const backoff = this.#current(service)
    if (backoff === undefined) return undefined
    return `repair failed ${backoff.failures} time${backoff.failures === 1 ? '' : 's'} in a row: ${backoff.error}; next attempt at ${new Date(backoff.next).toISOString()}`
  }

  /** A repair pass now; one asked for while another runs follows it. */
  readonly pass = coalesced(async () => { await this.#once() }, () => !this.#stopping.signal.aborted)

  /** The failures of a service that still count: those of its current deploy. */
  #current (service: string): Backoff | undefined {
    const backoff = this.#backoff.get(service)
    if (backoff === undefined || backoff.deployedAt === this.#deps.deployedAt(service)) return backoff
    this.#backoff.delete(service)
    return undefined
  }

  async #once (): Promise<void> {
    if (this.#stopping.signal.aborted) return
    const now = Date.now()
    const skip = new Set([...this.#backoff.keys()].filter(service => (this.#current(service)?.next ?? 0) > now))
    let outcome: RepairOutcome
    try {
      outcome = await this.#deps.repair(skip)
    } catch (err) {
      if (!(err instanceof EngineUnavailable)) throw err
      if (!this.#engineAway) this.#deps.log.info({ err: err.message }, 'the container engine does not answer: repairs resume when it does')
      this.#engineAway = true
      return
    }
    this.#engineAway = false
    const { log, metrics } = this.#deps
    metrics.passes.inc()
    for (const service of outcome.repaired) {
      metrics.repairs.labels(service).inc()
      this.#backoff.delete(service)
    }
    if (outcome.repaired.length > 0) log.info({ services: outcome.repaired }, 'repaired: containers created, started or removed to match the deployed services')
    for (const [service, error] of outcome.failures) this.#failed(service, error, now)
    // A service that was tried and needed nothing (it came back by itself) has no failures any more.
    for (const service of this.#backoff.keys()) if (!skip.has(service) && !outcome.failures.has(service)) this.#backoff.delete(service)
  }

  #failed (service: string, error: string, now: number): void {
    const failures = (this.#current(service)?.failures ?? 0) + 1
    const next = now + repairBackoffMs(failures, this.#deps.intervalMs)
    this.#backoff.set(service, { failures, error, next, deployedAt: this.#deps.deployedAt(service) })
    this.#deps.metrics.failures.labels(service).inc()
    this.#deps.log.warn({ service, error, failures, next_attempt_at: new Date(next).toISOString() }, 'repair failed')
    if (failures === 1) {
      this.#deps.alert({ kind: 'repair.failed', subject: service, at: now, message: `${service} cannot be repaired: ${error}; retried with backoff`, details: { error } })
    }
  }

  /** Answer the events of the engine's stream, reconnecting whenever it ends, until stopped. */
  async #watch (): Promise<void> {
    const signal = this.#stopping.signal
    let since: number | undefined
    while (!signal.aborted) {
      try {
        const events = await this.#deps.events({ ...(since !== undefined && { since }), signal })
        since ??= Math.floor(Date.now() / 1000)
        // Connected: the engine answers (again); what it lost meanwhile is repaired now.
        this.#lost = true
        this.#soon(0)
        for await (const event of events) {
          since = event.time
          if (STARTS.has(event.action)) this.#started.add(event.service)
          if (LOSSES.has(event.action)) this.#lost = true
          if (LOSSES.has(event.action) || STARTS.has(event.action)) this.#soon(SETTLE_MS)
        }
      } catch (err) {
        if (!(err instanceof EngineUnavailable)) this.#deps.log.warn({ err }, 'watching the engine\'s events failed')
      }
      await sleep(RECONNECT_MS, undefined, { signal }).catch(() => undefined)
    }
  }

  /** In `ms`: the routers told of containers the engine started, and a pass when one was lost; events meanwhile join them. */
  #soon (ms: number): void {
    if (this.#settle !== undefined || this.#stopping.signal.aborted) return
    this.#settle = setTimeout(() => {
      this.#settle = undefined
      const started = [...this.#started]
      this.#started.clear()
      if (started.length > 0) this.#deps.started(started)
      if (!this.#lost) return
      this.#lost = false
      this.#deps.track(this.pass()).catch((err: unknown) => { this.#deps.log.error({ err }, 'repair pass failed') })
    }, ms)
  }
}
