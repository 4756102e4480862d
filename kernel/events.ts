// The in-process event bus: typed by declaration merging of BerthEvents. It feeds server-sent event
// streams, alerts and dashboards. A failing handler is logged and never reaches the emitter.
import type { Logger } from 'pino'
import type { PluginState } from './plugin.js'

/**
 * Event names and their payloads. Plugins add theirs by declaration merging:
 *   declare module '../../kernel/index.js' { interface BerthEvents { 'hello.greeted': { name: string } } }
 */
export interface BerthEvents {
  'kernel.started': { listeners: Record<string, string> }
  'kernel.stopping': Record<string, never>
  'plugin.state': { plugin: string, state: PluginState }
  /** Something an operator should hear about (a failed deploy, a rollback, a failed backup…), for notifiers. */
  'operator.alert': OperatorAlert
}

/** An alert for operators: what happened, to what, in one line, and when. */
export interface OperatorAlert {
  /** What happened, dotted: `deploy.failed`, `deploy.rolled-back`, `backup.failed`, `certificate.failed`, `node.offline`, `job.failed`. */
  kind: string
  /** What it happened to: a service, a backup target, a domain, a node. */
  subject: string
  /** One line a person can act on. */
  message: string
  /** ms since the epoch. */
  at: number
  /** Facts for machines (the deploy id, the error, …). */
  details?: Record<string, string | number | boolean>
}

export type EventName = keyof BerthEvents
export type EventHandler<K extends EventName> = (payload: BerthEvents[K]) => void | Promise<void>
type AnyHandler = (payload: unknown) => void | Promise<void>

export class EventBus {
  readonly #handlers = new Map<string, Set<AnyHandler>>()
  readonly #log: Logger

  constructor (log: Logger) {
    this.#log = log
  }

  /** Subscribe; returns the function that unsubscribes. */
  on<K extends EventName> (name: K, handler: EventHandler<K>): () => void {
    let set = this.#handlers.get(name)
    if (set === undefined) {
      set = new Set()
      this.#handlers.set(name, set)
    }
    const h = handler as AnyHandler
    set.add(h)
    return () => { set.delete(h) }
  }

  /** Deliver synchronously to every subscriber, in subscription order. */
  emit<K extends EventName> (name: K, payload: BerthEvents[K]): void {
    const set = this.#handlers.get(name)
    if (set === undefined) return
    for (const handler of [...set]) {
      try {
        const result = handler(payload)
        if (result instanceof Promise) result.catch((err: unknown) => { this.#report(name, err) })
      } catch (err) {
        this.#report(name, err)
      }
    }
  }

  listenerCount (name: EventName): number {
    return this.#handlers.get(name)?.size ?? 0
  }

  #report (name: string, err: unknown): void {
    this.#log.error({ err, event: name }, 'event handler failed')
  }
}

/** The bus as one plugin sees it: everything it subscribed is unsubscribed when it stops. */
export class ScopedEvents {
  readonly #bus: EventBus
  readonly #unsubscribers: Array<() => void> = []

  constructor (bus: EventBus) {
    this.#bus = bus
  }

  on<K extends EventName> (name: K, handler: EventHandler<K>): () => void {
    const off = this.#bus.on(name, handler)
    this.#unsubscribers.push(off)
    return off
  }

  emit<K extends EventName> (name: K, payload: BerthEvents[K]): void {
    this.#bus.emit(name, payload)
  }

  /** Remove every subscription made through this scope. */
  close (): void {
    for (const off of this.#unsubscribers.splice(0)) off()
  }
}
