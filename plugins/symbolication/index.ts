// symbolication: resolves the PC (else the LR's call site) of each device fault to
// `<function> at <file>:<line>` in the ELF uploaded for the device's build, with
// arm-none-eabi-addr2line, and stores it with the fault; earlier faults are resolved when their ELF
// arrives, and those whose resolver failed later. A fault that cannot be resolved keeps "unsymbolicated: <reason>".
import type { Static } from '@sinclair/typebox'
import { definePlugin, type SectionSchema } from '../../kernel/index.js'
import type { Symbolicator } from './symbolicator.js'

export interface SymbolicationService {
  readonly symbolicator: Symbolicator
}

declare module '../../kernel/index.js' {
  interface Services { symbolication: SymbolicationService }
}

const symbolicationSection = ((Type) => Type.Object({
  addr2line: Type.String({ default: 'arm-none-eabi-addr2line', description: 'The address-to-line resolver of the ARM embedded toolchain.' }),
  timeout_secs: Type.Integer({ minimum: 1, default: 10, description: 'Longest run of the resolver; past it the fault stays unsymbolicated.' }),
  concurrency: Type.Integer({ minimum: 1, maximum: 16, default: 2, description: 'Resolver processes at once.' }),
  cache_entries: Type.Integer({ minimum: 1, default: 10000, description: 'Resolved addresses kept (by build and address).' }),
  retry_secs: Type.Integer({ minimum: 1, default: 30, description: 'Wait before the faults of a build whose resolver failed or timed out are tried again; it doubles after each failure in a row, up to an hour.' })
}, { additionalProperties: false })) satisfies SectionSchema

export type SymbolicationConfig = Static<ReturnType<typeof symbolicationSection>>

export default definePlugin({
  name: 'symbolication',
  version: '0.1.0',
  product: 'telemetry',
  description: 'Resolves device fault addresses to function, file and line from uploaded ELF files.',
  dependsOn: ['ingest'],
  config: symbolicationSection,

  async setup (ctx) {
    const { setupSymbolication } = await import('./runtime.js')
    return setupSymbolication(ctx)
  },

  start (_ctx, service) {
    service.symbolicator.all()
  }
})
