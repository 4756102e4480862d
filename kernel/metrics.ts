// One metrics registry per kernel (prom-client), exposed in the text exposition format. Plugins
// create their metrics through the helpers so they land in this registry and nowhere else.
import client, { type Counter, type CounterConfiguration, type Gauge, type GaugeConfiguration, type Histogram, type HistogramConfiguration } from 'prom-client'

export class KernelMetrics {
  readonly registry = new client.Registry()

  constructor () {
    client.collectDefaultMetrics({ register: this.registry })
    // Gauges named like counters break Prometheus' naming rules (promtool check metrics); the same
    // numbers stay available, by type, as nodejs_active_handles / _requests / _resources.
    for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) {
      this.registry.removeSingleMetric(name)
    }
  }

  counter<L extends string> (config: CounterConfiguration<L>): Counter<L> {
    return new client.Counter({ ...config, registers: [this.registry] })
  }

  gauge<L extends string> (config: GaugeConfiguration<L>): Gauge<L> {
    return new client.Gauge({ ...config, registers: [this.registry] })
  }

  histogram<L extends string> (config: HistogramConfiguration<L>): Histogram<L> {
    return new client.Histogram({ ...config, registers: [this.registry] })
  }

  /** The exposition text and its content type. */
  async expose (): Promise<{ contentType: string, body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() }
  }
}

/** What a plugin sees: metric constructors bound to the kernel's registry, and its exposition. */
export type PluginMetrics = Pick<KernelMetrics, 'counter' | 'gauge' | 'histogram' | 'expose'>
