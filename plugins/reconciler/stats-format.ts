// A service's engine figures in words for `berth status --stats` and the terminal dashboard: the sums
// over its containers on the node asked (CPU percent of one core, memory used, bytes received / sent).
import type { ServiceStatus } from './status.js'

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB']

/** Bytes in powers of 1024, one decimal past KiB (`512 B`, `3.1 MiB`). */
export function bytes (n: number): string {
  let value = n
  let unit = 0
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024
    unit++
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${UNITS[unit]}`
}

/** CPU, memory and network of a service; '–' each when none of its containers was measured. */
export function serviceFigures (service: ServiceStatus): { cpu: string, memory: string, network: string } {
  const measured = service.containers.flatMap(c => c.stats === undefined ? [] : [c.stats])
  if (measured.length === 0) return { cpu: '–', memory: '–', network: '–' }
  const sum = (pick: (s: typeof measured[number]) => number): number => measured.reduce((total, s) => total + pick(s), 0)
  const sampled = measured.every(s => s.cpu_percent !== null)
  return {
    cpu: sampled ? `${sum(s => s.cpu_percent ?? 0).toFixed(1)}%` : `${sum(s => s.cpu_seconds).toFixed(1)} s`,
    memory: bytes(sum(s => s.memory_bytes)),
    network: `${bytes(sum(s => s.network_rx_bytes))} / ${bytes(sum(s => s.network_tx_bytes))}`
  }
}
