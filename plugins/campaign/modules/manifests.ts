// Every module's manifest in navigation order (group by group): the server registers their functions
// and page routes in this order, and the UI makes its routes, navigation and home page from it.
import type { ModuleManifest } from './manifest.js'
import { manifest as knowledgeBase } from './knowledge-base/manifest.js'
import { manifest as people } from './people/manifest.js'
import { manifest as volunteers } from './volunteers/manifest.js'
import { manifest as events } from './events/manifest.js'
import { manifest as canvassing } from './canvassing/manifest.js'
import { manifest as fundraising } from './fundraising/manifest.js'
import { manifest as meetings } from './meetings/manifest.js'
import { manifest as sentimentMonitor } from './sentiment-monitor/manifest.js'
import { manifest as narrativeContagion } from './narrative-contagion/manifest.js'
import { manifest as mediaMonitor } from './media-monitor/manifest.js'
import { manifest as localIssues } from './local-issues/manifest.js'
import { manifest as callIntelligence } from './call-intelligence/manifest.js'
import { manifest as disinfoWarning } from './disinfo-warning/manifest.js'
import { manifest as campaignCopy } from './campaign-copy/manifest.js'
import { manifest as sending } from './sending/manifest.js'
import { manifest as policyChatbot } from './policy-chatbot/manifest.js'
import { manifest as multilingual } from './multilingual/manifest.js'
import { manifest as empathySimulator } from './empathy-simulator/manifest.js'
import { manifest as questionAnticipation } from './question-anticipation/manifest.js'
import { manifest as candidateBriefings } from './candidate-briefings/manifest.js'
import { manifest as coachingDebate } from './coaching-debate/manifest.js'
import { manifest as oppositionResearch } from './opposition-research/manifest.js'
import { manifest as coalitionDetector } from './coalition-detector/manifest.js'
import { manifest as factionMapper } from './faction-mapper/manifest.js'
import { manifest as policyDiff } from './policy-diff/manifest.js'
import { manifest as regulatoryMonitor } from './regulatory-monitor/manifest.js'
import { manifest as compliance } from './compliance/manifest.js'
import { manifest as accountability } from './accountability/manifest.js'
import { manifest as admin } from './admin/manifest.js'

export const MANIFESTS: readonly ModuleManifest[] = [
  knowledgeBase, people, volunteers, events, canvassing, fundraising, meetings,
  sentimentMonitor, narrativeContagion, mediaMonitor, localIssues, callIntelligence, disinfoWarning,
  campaignCopy, sending, policyChatbot, multilingual, empathySimulator, questionAnticipation,
  candidateBriefings, coachingDebate, oppositionResearch,
  coalitionDetector, factionMapper,
  policyDiff, regulatoryMonitor, compliance, accountability,
  admin
]
