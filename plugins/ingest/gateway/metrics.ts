// The gateway's Prometheus endpoint (`berth gateway --metrics HOST:PORT`, GET /metrics): what it has
// forwarded, held, dropped and sent again, and what waits in its spools, read when scraped.
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import client from 'prom-client'
import { KERNEL_CODES } from '../../../kernel/index.js'
import type { Forwarder } from './forwarder.js'
import type { Spool } from './spool.js'

export interface GatewayStats {
  spool: Spool
  held: Spool
  /** Bytes of the serial and BLE streams that were not frames (noise, frames with a bad CRC). */
  skippedBytes: number
  forwarder: Forwarder | undefined
}

export interface MetricsEndpoint {
  /** host:port it listens on. */
  address: string
  close(): Promise<void>
}

/** A counter whose value is read from the gateway's state when scraped. */
function readCounter (registry: client.Registry, name: string, help: string, labelNames: string[], read: () => Array<[Record<string, string>, number]>): void {
  new client.Counter({
    name, help, labelNames, registers: [registry],
    collect () {
      this.reset()
      for (const [labels, value] of read()) if (value > 0) this.inc(labels, value)
    }
  })
}

export function gatewayRegistry (stats: GatewayStats): client.Registry {
  const registry = new client.Registry()
  const counts = (): NonNullable<GatewayStats['forwarder']>['counts'] | undefined => stats.forwarder?.counts
  readCounter(registry, 'berth_gateway_forwarded_frames_total', 'Frames the server answered, by status (accepted, duplicate, partial).', ['status'],
    () => Object.entries(counts()?.forwarded ?? {}).map(([status, n]) => [{ status }, n]))
  readCounter(registry, 'berth_gateway_held_frames_total', 'Frames the server refused for a reason that can change, kept to be offered again.', [],
    () => [[{}, counts()?.held ?? 0]])
  readCounter(registry, 'berth_gateway_dropped_frames_total', 'Frames dropped: rejected (the server can never accept them) or spool_full (the oldest, past the spool\'s cap).', ['reason'],
    () => [[{ reason: 'rejected' }, counts()?.rejected ?? 0], [{ reason: 'spool_full' }, stats.spool.overflowed + stats.held.overflowed]])
  readCounter(registry, 'berth_gateway_retransmitted_frames_total', 'Frames sent again with the retransmission bit (an earlier request may have carried them).', [],
    () => [[{}, counts()?.retransmitted ?? 0]])
  readCounter(registry, 'berth_gateway_skipped_bytes_total', 'Bytes of the device streams that were not frames.', [],
    () => [[{}, stats.skippedBytes]])
  new client.Gauge({
    name: 'berth_gateway_spool_bytes', help: 'Bytes of frames waiting: in the spool (not yet answered) and held (refused for now).', labelNames: ['spool'], registers: [registry],
    collect () {
      this.set({ spool: 'pending' }, stats.spool.pending)
      this.set({ spool: 'held' }, stats.held.pending)
    }
  })
  return registry
}

export async function serveGatewayMetrics (at: { host: string, port: number }, stats: GatewayStats): Promise<MetricsEndpoint> {
  const registry = gatewayRegistry(stats)
  const server = createServer((request, response) => {
    if (request.method !== 'GET' || request.url !== '/metrics') {
      response.writeHead(KERNEL_CODES.NOT_FOUND.status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'not found: the gateway serves GET /metrics', code: KERNEL_CODES.NOT_FOUND.code }))
      return
    }
    registry.metrics().then(text => { response.writeHead(200, { 'content-type': registry.contentType }).end(text) }, (err: unknown) => {
      response.writeHead(KERNEL_CODES.INTERNAL.status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: (err as Error).message, code: KERNEL_CODES.INTERNAL.code }))
    })
  })
  await new Promise<void>((resolve, reject) => { server.once('error', reject); server.listen(at.port, at.host, resolve) })
  const { address, port } = server.address() as AddressInfo
  return {
    address: `${address.includes(':') ? `[${address}]` : address}:${port}`,
    close: async () => { await new Promise<void>(resolve => { server.close(() => { resolve() }); server.closeAllConnections() }) }
  }
}
