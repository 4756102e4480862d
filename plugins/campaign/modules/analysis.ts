// The analysis modules built on the language engine, in navigation order: each contributes its server
// functions, given the shared kit.
import type { ServerFunction } from '../functions.js'
import { accountabilityFunctions } from './accountability.js'
import { callIntelligenceFunctions } from './call-intelligence.js'
import { coalitionFunctions } from './coalition-detector.js'
import { disinfoWarningFunctions } from './disinfo-warning.js'
import { factionFunctions } from './faction-mapper.js'
import type { ModuleKit } from './kit.js'
import { localIssueFunctions } from './local-issues.js'
import { mediaMonitorFunctions } from './media-monitor.js'
import { meetingFunctions } from './meetings.js'
import { narrativeFunctions } from './narratives.js'
import { regulatoryMonitorFunctions } from './regulatory-monitor.js'
import { sentimentMonitorFunctions } from './sentiment-monitor.js'

/** Listening (posts, narratives, media, disinformation), the field (calls, local issues), the coalition, and governance. */
const MODULES: ReadonlyArray<(kit: ModuleKit) => ServerFunction[]> = [
  sentimentMonitorFunctions,
  narrativeFunctions,
  mediaMonitorFunctions,
  disinfoWarningFunctions,
  callIntelligenceFunctions,
  localIssueFunctions,
  coalitionFunctions,
  factionFunctions,
  regulatoryMonitorFunctions,
  accountabilityFunctions,
  meetingFunctions
]

export function analysisFunctions (kit: ModuleKit): ServerFunction[] {
  return MODULES.flatMap(functions => functions(kit))
}
