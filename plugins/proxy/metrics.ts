// Metrics per route: answers by status class and upstream latency. A request only adds to plain
// numbers of its route; they are folded into the prom-client metrics when those are collected (a
// scrape), or once a route has gathered FOLD_AT latencies, so the request path never touches them.
// A worker thread counts the same way into plain numbers (WorkerCounts), which it sends to the main
// thread, whose RouteMetrics adds them.
import type { Counter, Histogram } from 'prom-client'
import type { PluginMetrics } from '../../kernel/index.js'
import type { Route } from './route-table.js'

const CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'] as const
/** Latencies a route keeps before they are folded in without waiting for a scrape. */
const FOLD_AT = 256

interface RouteTally {
  /** Answers by status class since the last fold. */
  classes: number[]
  latencies: number[]
  counters: Array<{ inc: (by: number) => void }>
  histogram: { observe: (seconds: number) => void }
}

/** What the request path counts: answers by route and status class, with the upstream's latency. */
export interface RouteCounts {
  answered(route: Route, status: number, seconds?: number): void
  unrouted(): void
}

/** A worker thread's counts since its last report: by domain, answers by class and latencies. */
export interface CountsReport {
  unrouted: number
  routes: Array<{ domain: string, classes: number[], latencies: number[] }>
}

export class RouteMetrics implements RouteCounts {
  readonly #requests: Counter<'route' | 'class'>
  readonly #latency: Histogram<'route'>
  readonly #tallies = new Map<string, RouteTally>()
  readonly #unrouted: { inc: (by?: number) => void }

  constructor (metrics: PluginMetrics) {
    const fold = (): void => { for (const tally of this.#tallies.values()) foldTally(tally) }
    this.#requests = metrics.counter({ name: 'berth_proxy_requests_total', help: 'Answers of the proxy by route (domain) and status class; route "-" is an unknown host.', labelNames: ['route', 'class'], collect: fold })
    this.#latency = metrics.histogram({ name: 'berth_proxy_upstream_seconds', help: 'Time until an upstream\'s response headers, by route.', labelNames: ['route'], buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10], collect: fold })
    this.#unrouted = this.#requests.labels('-', '4xx')
  }

  unrouted (): void {
    this.#unrouted.inc()
  }

  /** Count an answer of `route`; `seconds` is the upstream's latency when it answered. */
  answered (route: Route, status: number, seconds?: number): void {
    const tally = this.#tally(route.domain)
    tally.classes[classOf(status)]++
    if (seconds === undefined) return
    tally.latencies.push(seconds)
    if (tally.latencies.length >= FOLD_AT) foldTally(tally)
  }

  /** Add what a worker thread counted. */
  add (report: CountsReport): void {
    if (report.unrouted > 0) this.#unrouted.inc(report.unrouted)
    for (const { domain, classes, latencies } of report.routes) {
      const tally = this.#tally(domain)
      for (let i = 0; i < CLASSES.length; i++) tally.classes[i] += classes[i]
      for (const seconds of latencies) tally.histogram.observe(seconds)
    }
  }

  #tally (domain: string): RouteTally {
    let tally = this.#tallies.get(domain)
    if (tally === undefined) {
      tally = { classes: [0, 0, 0, 0, 0], latencies: [], counters: CLASSES.map(c => this.#requests.labels(domain, c)), histogram: this.#latency.labels(domain) }
      this.#tallies.set(domain, tally)
    }
    return tally
  }
}

/** A worker thread's counts, taken (and reset) for each report to the main thread. */
export class WorkerCounts implements RouteCounts {
  #unrouted = 0
  #routes = new Map<string, { domain: string, classes: number[], latencies: number[] }>()

  unrouted (): void {
    this.#unrouted++
  }

  answered (route: Route, status: number, seconds?: number): void {
    let counts = this.#routes.get(route.domain)
    if (counts === undefined) {
      counts = { domain: route.domain, classes: [0, 0, 0, 0, 0], latencies: [] }
      this.#routes.set(route.domain, counts)
    }
    counts.classes[classOf(status)]++
    if (seconds !== undefined) counts.latencies.push(seconds)
  }

  /** What was counted since the last call, if anything. */
  take (): CountsReport | undefined {
    if (this.#unrouted === 0 && this.#routes.size === 0) return undefined
    const report = { unrouted: this.#unrouted, routes: [...this.#routes.values()] }
    this.#unrouted = 0
    this.#routes = new Map()
    return report
  }
}

/** The index of a status's class among CLASSES. */
function classOf (status: number): number {
  return Math.min(Math.max(Math.floor(status / 100), 1), 5) - 1
}

function foldTally (tally: RouteTally): void {
  for (let i = 0; i < CLASSES.length; i++) {
    if (tally.classes[i] === 0) continue
    tally.counters[i].inc(tally.classes[i])
    tally.classes[i] = 0
  }
  for (const seconds of tally.latencies) tally.histogram.observe(seconds)
  tally.latencies.length = 0
}
