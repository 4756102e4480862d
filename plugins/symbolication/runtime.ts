// The symbolication plugin at work: new faults are resolved as they are stored, the faults of a build
// when its ELF arrives, and at start the faults never tried. Imported by setup only.
import type { PluginContext } from '../../kernel/index.js'
import type { TelemetryEvent } from '../ingest/apply.js'
import { Addr2line } from './addr2line.js'
import type { SymbolicationConfig, SymbolicationService } from './index.js'
import { Symbolicator } from './symbolicator.js'

const UNSYMBOLICATED = 'unsymbolicated'

export function setupSymbolication (ctx: PluginContext<SymbolicationConfig>): SymbolicationService {
  const { config } = ctx
  const addr2line = new Addr2line({ tool: config.addr2line, timeoutMs: config.timeout_secs * 1000, concurrency: config.concurrency, cacheEntries: config.cache_entries })
  const outcomes = ctx.metrics.counter({ name: 'berth_symbolication_faults_total', help: 'Faults symbolicated, by outcome: resolved, or unresolved (the reason is stored with the fault).', labelNames: ['outcome'] })
  const symbolicator = new Symbolicator(ctx.use('ingest'), addr2line, ctx.log, outcomes)
  const background = (select: Parameters<Symbolicator['symbolicate']>[0]): void => {
    void ctx.track(symbolicator.symbolicate(select)).catch((err: unknown) => { ctx.log.error({ err }, 'symbolication failed') })
  }
  ctx.events.on('telemetry.event', (event: TelemetryEvent) => {
    if (event.kind === 'fault') background((fault, key) => key[0] === event.device && key[1] === event.at && key[2] === event.sequence)
    if (event.kind === 'elf') background(fault => fault.build_id === event.build_id && (fault.symbol === null || fault.symbol.startsWith(UNSYMBOLICATED)))
  })
  return {
    symbolicator,
    pending: () => { background(fault => fault.symbol === null) }
  }
}
