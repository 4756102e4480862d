// The analysis modules built on the language engine, in navigation order: each contributes its server
// functions, given the shared kit.
import type { ServerFunction } from '../functions.js'
import type { ModuleKit } from './kit.js'
import { narrativeFunctions } from './narratives.js'
import { sentimentMonitorFunctions } from './sentiment-monitor.js'

const MODULES: ReadonlyArray<(kit: ModuleKit) => ServerFunction[]> = [
  sentimentMonitorFunctions,
  narrativeFunctions
]

export function analysisFunctions (kit: ModuleKit): ServerFunction[] {
  return MODULES.flatMap(functions => functions(kit))
}
