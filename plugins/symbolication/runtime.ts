// The symbolication plugin at work: new faults are resolved as they are stored, the pending faults of a
// build when its ELF arrives or its retry is due, and at start every build's pending faults. Imported
// by setup only.
import type { PluginContext } from '../../kernel/index.js'
import type { TelemetryEvent } from '../ingest/api.js'
import { Addr2line } from './addr2line.js'
import type { SymbolicationConfig, SymbolicationService } from './index.js'
import { Symbolicator } from './symbolicator.js'

export function setupSymbolication (ctx: PluginContext<SymbolicationConfig>): SymbolicationService {
  const { config } = ctx
  const symbolicator = new Symbolicator({
    ingest: ctx.use('ingest'),
    addr2line: new Addr2line({ tool: config.addr2line, timeoutMs: config.timeout_secs * 1000, concurrency: config.concurrency, cacheEntries: config.cache_entries }),
    log: ctx.log,
    outcomes: ctx.metrics.counter({ name: 'berth_symbolication_faults_total', help: 'Faults symbolicated, by outcome: resolved, or unresolved (the reason is stored with the fault).', labelNames: ['outcome'] }),
    retryMs: config.retry_secs * 1000,
    background: work => { void ctx.track(work).catch((err: unknown) => { ctx.log.error({ err }, 'symbolication failed') }) }
  })
  ctx.events.on('telemetry.event', (event: TelemetryEvent) => {
    if (event.kind === 'fault') symbolicator.fault([event.device, event.at, event.sequence])
    if (event.kind === 'elf') symbolicator.elf(event.build_id)
  })
  ctx.stopping.addEventListener('abort', () => { symbolicator.stop() }, { once: true })
  return { symbolicator }
}
