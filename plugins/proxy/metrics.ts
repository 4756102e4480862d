// Metrics per route: answers by status class and upstream latency. The labelled children of each
// route are made once, so a request costs two increments, not a label lookup.
import type { Counter, Histogram } from 'prom-client'
import type { PluginMetrics } from '../../kernel/index.js'
import type { Route } from './route-table.js'

const CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'] as const

interface RouteChildren {
  classes: Array<{ inc: () => void }>
  latency: { observe: (seconds: number) => void }
}

export class RouteMetrics {
  readonly #requests: Counter<'route' | 'class'>
  readonly #latency: Histogram<'route'>
  readonly #children = new Map<string, RouteChildren>()
  readonly #unrouted: { inc: () => void }

  constructor (metrics: PluginMetrics) {
    this.#requests = metrics.counter({ name: 'berth_proxy_requests_total', help: 'Answers of the proxy by route (domain) and status class; route "-" is an unknown host.', labelNames: ['route', 'class'] })
    this.#latency = metrics.histogram({ name: 'berth_proxy_upstream_seconds', help: 'Time until an upstream\'s response headers, by route.', labelNames: ['route'], buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] })
    this.#unrouted = this.#requests.labels('-', '4xx')
  }

  unrouted (): void {
    this.#unrouted.inc()
  }

  /** Count an answer of `route`; `seconds` is the upstream's latency when it answered. */
  answered (route: Route, status: number, seconds?: number): void {
    let children = this.#children.get(route.domain)
    if (children === undefined) {
      children = { classes: CLASSES.map(c => this.#requests.labels(route.domain, c)), latency: this.#latency.labels(route.domain) }
      this.#children.set(route.domain, children)
    }
    children.classes[Math.min(Math.max(Math.floor(status / 100), 1), 5) - 1].inc()
    if (seconds !== undefined) children.latency.observe(seconds)
  }
}
