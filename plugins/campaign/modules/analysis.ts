// The analysis modules built on the language engine, in navigation order: each contributes its server
// functions, given the shared kit.
import type { ServerFunction } from '../functions.js'
import { accountabilityFunctions } from './accountability.js'
import { callIntelligenceFunctions } from './call-intelligence.js'
import { campaignCopyFunctions } from './campaign-copy.js'
import { candidateBriefingFunctions } from './candidate-briefings.js'
import { canvassingFunctions } from './canvassing.js'
import { coalitionFunctions } from './coalition-detector.js'
import { coachingDebateFunctions } from './coaching-debate.js'
import { complianceFunctions } from './compliance.js'
import { disinfoWarningFunctions } from './disinfo-warning.js'
import { empathySimulatorFunctions } from './empathy-simulator.js'
import { factionFunctions } from './faction-mapper.js'
import type { ModuleKit } from './kit.js'
import { localIssueFunctions } from './local-issues.js'
import { mediaMonitorFunctions } from './media-monitor.js'
import { meetingFunctions } from './meetings.js'
import { multilingualFunctions } from './multilingual.js'
import { narrativeFunctions } from './narratives.js'
import { oppositionFunctions } from './opposition-research.js'
import { policyChatbotFunctions } from './policy-chatbot.js'
import { policyDiffFunctions } from './policy-diff.js'
import { questionAnticipationFunctions } from './question-anticipation.js'
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
  meetingFunctions,
  policyChatbotFunctions,
  coachingDebateFunctions,
  empathySimulatorFunctions,
  campaignCopyFunctions,
  canvassingFunctions,
  candidateBriefingFunctions,
  oppositionFunctions,
  multilingualFunctions,
  questionAnticipationFunctions,
  policyDiffFunctions,
  complianceFunctions
]

export function analysisFunctions (kit: ModuleKit): ServerFunction[] {
  return MODULES.flatMap(functions => functions(kit))
}
