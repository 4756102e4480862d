// Metrics (prom-client), kept apart by product: process metrics in one registry, each plugin's metrics
// in a registry of its own, and each listener's kernel metrics in another. A listener's exposition is
// the process metrics, its own kernel metrics and the metrics of the plugins it serves: never another
// product's.
import client, { type Counter, type CounterConfiguration, type Gauge, type GaugeConfiguration, type Histogram, type HistogramConfiguration, type Registry } from 'prom-client'

/** What a plugin sees: metric constructors bound to its own registry, and the exposition of its listener. */
export interface PluginMetrics {
  counter<L extends string>(config: CounterConfiguration<L>): Counter<L>
  gauge<L extends string>(config: GaugeConfiguration<L>): Gauge<L>
  histogram<L extends string>(config: HistogramConfiguration<L>): Histogram<L>
  /** The exposition text (and its content type) of the listener this plugin serves, as its own scrape route shows it. */
  expose(): Promise<Exposition>
}

export interface Exposition {
  contentType: string
  body: string
}

/** A registry with the given metric constructors bound to it. */
export class MetricSet {
  readonly registry: Registry = new client.Registry()

  counter<L extends string> (config: CounterConfiguration<L>): Counter<L> {
    return new client.Counter({ ...config, registers: [this.registry] })
  }

  gauge<L extends string> (config: GaugeConfiguration<L>): Gauge<L> {
    return new client.Gauge({ ...config, registers: [this.registry] })
  }

  histogram<L extends string> (config: HistogramConfiguration<L>): Histogram<L> {
    return new client.Histogram({ ...config, registers: [this.registry] })
  }
}

/** Process and Node.js metrics, shared by every listener's exposition. */
export function processMetrics (): MetricSet {
  const set = new MetricSet()
  client.collectDefaultMetrics({ register: set.registry })
  // Gauges named like counters break Prometheus' naming rules (promtool check metrics); the same
  // numbers stay available, by type, as nodejs_active_handles / _requests / _resources.
  for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) {
    set.registry.removeSingleMetric(name)
  }
  return set
}

/** The text of several registries as one exposition (their metric names never overlap). */
export async function exposeAll (registries: readonly Registry[]): Promise<Exposition> {
  const parts = await Promise.all(registries.map(async registry => await registry.metrics()))
  return { contentType: client.register.contentType, body: parts.filter(part => part !== '').join('\n') }
}
