// The UI's registry of the campaign's modules, the one file of the UI that imports module folders:
// each module's manifest with its page, in navigation order. main.tsx shows a page at its module's
// path; the routes, navigation and home page are made from the manifests (modules.ts).
import type { AuthInfo } from './api.js'
import type { ModuleManifest } from '../../modules/manifest.js'
import { manifest as accountability } from '../../modules/accountability/manifest.js'
import { AccountabilityPage } from '../../modules/accountability/page.js'
import { manifest as admin } from '../../modules/admin/manifest.js'
import { AdminPage } from '../../modules/admin/page.js'
import { manifest as callIntelligence } from '../../modules/call-intelligence/manifest.js'
import { CallIntelligencePage } from '../../modules/call-intelligence/page.js'
import { manifest as campaignCopy } from '../../modules/campaign-copy/manifest.js'
import { CampaignCopyPage } from '../../modules/campaign-copy/page.js'
import { manifest as candidateBriefings } from '../../modules/candidate-briefings/manifest.js'
import { CandidateBriefingsPage } from '../../modules/candidate-briefings/page.js'
import { manifest as canvassing } from '../../modules/canvassing/manifest.js'
import { CanvassingPage } from '../../modules/canvassing/page.js'
import { manifest as coachingDebate } from '../../modules/coaching-debate/manifest.js'
import { CoachingDebatePage } from '../../modules/coaching-debate/page.js'
import { manifest as coalitionDetector } from '../../modules/coalition-detector/manifest.js'
import { CoalitionDetectorPage } from '../../modules/coalition-detector/page.js'
import { manifest as compliance } from '../../modules/compliance/manifest.js'
import { CompliancePage } from '../../modules/compliance/page.js'
import { manifest as disinfoWarning } from '../../modules/disinfo-warning/manifest.js'
import { DisinfoWarningPage } from '../../modules/disinfo-warning/page.js'
import { manifest as empathySimulator } from '../../modules/empathy-simulator/manifest.js'
import { EmpathySimulatorPage } from '../../modules/empathy-simulator/page.js'
import { manifest as events } from '../../modules/events/manifest.js'
import { EventsPage } from '../../modules/events/page.js'
import { manifest as factionMapper } from '../../modules/faction-mapper/manifest.js'
import { FactionMapperPage } from '../../modules/faction-mapper/page.js'
import { manifest as fundraising } from '../../modules/fundraising/manifest.js'
import { FundraisingPage } from '../../modules/fundraising/page.js'
import { manifest as knowledgeBase } from '../../modules/knowledge-base/manifest.js'
import { KnowledgeBasePage } from '../../modules/knowledge-base/page.js'
import { manifest as localIssues } from '../../modules/local-issues/manifest.js'
import { LocalIssuesPage } from '../../modules/local-issues/page.js'
import { manifest as mediaMonitor } from '../../modules/media-monitor/manifest.js'
import { MediaMonitorPage } from '../../modules/media-monitor/page.js'
import { manifest as meetings } from '../../modules/meetings/manifest.js'
import { MeetingsPage } from '../../modules/meetings/page.js'
import { manifest as multilingual } from '../../modules/multilingual/manifest.js'
import { MultilingualPage } from '../../modules/multilingual/page.js'
import { manifest as narrativeContagion } from '../../modules/narrative-contagion/manifest.js'
import { NarrativeContagionPage } from '../../modules/narrative-contagion/page.js'
import { manifest as oppositionResearch } from '../../modules/opposition-research/manifest.js'
import { OppositionResearchPage } from '../../modules/opposition-research/page.js'
import { manifest as people } from '../../modules/people/manifest.js'
import { PeoplePage } from '../../modules/people/page.js'
import { manifest as policyChatbot } from '../../modules/policy-chatbot/manifest.js'
import { PolicyChatbotPage } from '../../modules/policy-chatbot/page.js'
import { manifest as policyDiff } from '../../modules/policy-diff/manifest.js'
import { PolicyDiffPage } from '../../modules/policy-diff/page.js'
import { manifest as questionAnticipation } from '../../modules/question-anticipation/manifest.js'
import { QuestionAnticipationPage } from '../../modules/question-anticipation/page.js'
import { manifest as regulatoryMonitor } from '../../modules/regulatory-monitor/manifest.js'
import { RegulatoryMonitorPage } from '../../modules/regulatory-monitor/page.js'
import { manifest as sending } from '../../modules/sending/manifest.js'
import { SendingPage } from '../../modules/sending/page.js'
import { manifest as sentimentMonitor } from '../../modules/sentiment-monitor/manifest.js'
import { SentimentMonitorPage } from '../../modules/sentiment-monitor/page.js'
import { manifest as volunteers } from '../../modules/volunteers/manifest.js'
import { VolunteersPage } from '../../modules/volunteers/page.js'

/** A module's page: it is given the session's auth and every module page's id and title (the admin panel names the modules). */
export type ModulePageComponent = (props: { auth: AuthInfo, modules: ReadonlyArray<{ id: string, title: string }> }) => preact.JSX.Element

/** Each module's manifest with its page, in navigation order (group by group), as the server lists them (modules/catalogue.ts). */
const BY_MANIFEST: ReadonlyArray<readonly [ModuleManifest, ModulePageComponent]> = [
  [knowledgeBase, KnowledgeBasePage],
  [people, PeoplePage],
  [volunteers, VolunteersPage],
  [events, EventsPage],
  [canvassing, CanvassingPage],
  [fundraising, FundraisingPage],
  [meetings, MeetingsPage],
  [sentimentMonitor, SentimentMonitorPage],
  [narrativeContagion, NarrativeContagionPage],
  [mediaMonitor, MediaMonitorPage],
  [localIssues, LocalIssuesPage],
  [callIntelligence, CallIntelligencePage],
  [disinfoWarning, DisinfoWarningPage],
  [campaignCopy, CampaignCopyPage],
  [sending, SendingPage],
  [policyChatbot, PolicyChatbotPage],
  [multilingual, MultilingualPage],
  [empathySimulator, EmpathySimulatorPage],
  [questionAnticipation, QuestionAnticipationPage],
  [candidateBriefings, CandidateBriefingsPage],
  [coachingDebate, CoachingDebatePage],
  [oppositionResearch, OppositionResearchPage],
  [coalitionDetector, CoalitionDetectorPage],
  [factionMapper, FactionMapperPage],
  [policyDiff, PolicyDiffPage],
  [regulatoryMonitor, RegulatoryMonitorPage],
  [compliance, CompliancePage],
  [accountability, AccountabilityPage],
  [admin, AdminPage]
]

/** Every module's manifest, in navigation order. */
export const MANIFESTS: readonly ModuleManifest[] = BY_MANIFEST.map(([manifest]) => manifest)

export const PAGES: ReadonlyMap<string, ModulePageComponent> = new Map(BY_MANIFEST.map(([manifest, page]) => [manifest.id, page]))
