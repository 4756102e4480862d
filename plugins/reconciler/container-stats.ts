// Per-container figures from the engine (CPU, memory, network, restarts) of this node's running
// containers: `berth status --stats` and the terminal dashboard ask for them sampled (the CPU percent
// over the engine's last second), /metrics unsampled (the CPU seconds used so far), one read shared by
// the gauges of a scrape.
import type { PluginMetrics } from '../../kernel/index.js'
import { EngineUnavailable, type ContainerEngine, type ContainerState, type ContainerStats } from './container-engine.js'

/** Containers asked at once. */
const CONCURRENCY = 8
/** How long one read serves the gauges of a scrape. */
const SCRAPE_READ_MS = 1000

export interface MeasuredContainer {
  container: ContainerState
  stats: ContainerStats
}

/** The figures of the running ones of `containers` (those gone meanwhile left out). */
export async function measureContainers (runtimes: ReadonlyMap<string, ContainerEngine>, containers: readonly ContainerState[], sampled: boolean): Promise<MeasuredContainer[]> {
  const running = containers.filter(c => c.running && runtimes.has(c.runtime))
  const measured: MeasuredContainer[] = []
  for (let i = 0; i < running.length; i += CONCURRENCY) {
    const batch = running.slice(i, i + CONCURRENCY)
    const figures = await Promise.all(batch.map(async c => await (runtimes.get(c.runtime) as ContainerEngine).stats(c.id, { sampled })))
    batch.forEach((container, n) => { const stats = figures[n]; if (stats !== undefined) measured.push({ container, stats }) })
  }
  return measured
}

/** The gauges of /metrics, by service, replica (`canary` for the canary) and container; nothing when the engine is away. */
export function registerContainerMetrics (metrics: PluginMetrics, read: () => Promise<MeasuredContainer[]>): void {
  let last: { at: number, reading: Promise<MeasuredContainer[]> } | undefined
  const current = async (): Promise<MeasuredContainer[]> => {
    if (last === undefined || Date.now() - last.at > SCRAPE_READ_MS) {
      last = { at: Date.now(), reading: read().catch((err: unknown) => { if (err instanceof EngineUnavailable) return []; throw err }) }
    }
    return await last.reading
  }
  const figures: Array<[string, string, (s: ContainerStats) => number]> = [
    ['berth_container_cpu_seconds', 'CPU time a container has used since it started, in seconds.', s => s.cpu_seconds],
    ['berth_container_memory_bytes', 'Memory a container uses (less the inactive page cache).', s => s.memory_bytes],
    ['berth_container_memory_limit_bytes', 'A container\'s memory limit (the host\'s memory when it has none).', s => s.memory_limit_bytes],
    ['berth_container_network_receive_bytes', 'Bytes a container has received over its networks.', s => s.network_rx_bytes],
    ['berth_container_network_transmit_bytes', 'Bytes a container has sent over its networks.', s => s.network_tx_bytes],
    ['berth_container_restarts', 'Times the engine restarted a container by its restart policy.', s => s.restarts]
  ]
  for (const [name, help, value] of figures) {
    metrics.gauge({
      name,
      help,
      labelNames: ['service', 'replica', 'container'],
      async collect () {
        this.reset()
        for (const { container, stats } of await current()) {
          this.labels(container.service, container.canary === true ? 'canary' : String(container.replica), container.name).set(value(stats))
        }
      }
    })
  }
}
