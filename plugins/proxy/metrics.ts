// Metrics per route: answers by status class and upstream latency. A request only adds to plain
// numbers of its route; they are folded into the prom-client metrics when those are collected (a
// scrape), or once a route has gathered FOLD_AT latencies, so the request path never touches them.
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

export class RouteMetrics {
  readonly #requests: Counter<'route' | 'class'>
  readonly #latency: Histogram<'route'>
  readonly #tallies = new Map<string, RouteTally>()
  readonly #unrouted: { inc: () => void }

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
    let tally = this.#tallies.get(route.domain)
    if (tally === undefined) {
      tally = { classes: [0, 0, 0, 0, 0], latencies: [], counters: CLASSES.map(c => this.#requests.labels(route.domain, c)), histogram: this.#latency.labels(route.domain) }
      this.#tallies.set(route.domain, tally)
    }
    tally.classes[Math.min(Math.max(Math.floor(status / 100), 1), 5) - 1]++
    if (seconds === undefined) return
    tally.latencies.push(seconds)
    if (tally.latencies.length >= FOLD_AT) foldTally(tally)
  }
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
