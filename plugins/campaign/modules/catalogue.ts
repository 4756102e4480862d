// The server's registry of the campaign's modules, one of the two files of the core that import module
// folders (the UI's is ui/src/pages.ts, listing the same modules in the same order with their pages): it
// starts the services modules provide to each other (the knowledge base, people, sending, events,
// fundraising), their routes and schedules, and registers their server functions module by module in
// navigation order (group by group): each module's factory makes its functions from the kit, and its
// manifest gives them their module id and roles. A function its manifest does not list, or one listed
// that the module does not make, stops the start.
import type { FastifyPluginAsync } from 'fastify'
import { messageOf, type PluginContext } from '../../../kernel/index.js'
import type { ApiTokens } from '../api-tokens.js'
import type { AuditLog, AuditedStore } from '../audit.js'
import type { FunctionRegistry, ModuleFunction, ServerFunction } from '../functions.js'
import type { Generator } from '../language/generator.js'
import type { SecretResolver } from '../language/generator-settings.js'
import { localEngine } from '../language/local-engine.js'
import type { PostStore } from '../records/posts.js'
import type { SessionAuth } from '../session-auth.js'
import type { SessionRecord } from '../sessions.js'
import type { CampaignConfig } from '../settings.js'
import type { ModuleKit } from './kit.js'
import type { ModuleManifest } from './manifest.js'
import { recordLogin, type UserRecord } from './admin/admin.js'
import { loadRules } from './compliance/compliance-rules.js'
import { EventBook } from './events/event-book.js'
import { formFunctions } from './events/form-functions.js'
import { formRoutes } from './events/form-routes.js'
import { flushViewsOnClose, type PageStats, pageStats, PageViews } from './events/page-views.js'
import { PublicForms } from './events/public-forms.js'
import { publicRoutes } from './events/public-routes.js'
import { PublicRsvps } from './events/public-rsvp.js'
import { PublicTokens } from './events/public-tokens.js'
import { RateLimit } from './events/rate-limit.js'
import { Elections } from './fundraising/elections.js'
import { Fundraising } from './fundraising/fundraising.js'
import { KnowledgeBase } from './knowledge-base/knowledge-base.js'
import { PEOPLE, PeopleDirectory, type Person } from './people/directory.js'
import { campaignSecret, Messenger, messengerSettings } from './sending/messenger.js'
import { SMS_REPLY_PATH, SmsReplies } from './sending/sms-replies.js'
import { smsReplyRoutes } from './sending/sms-reply-routes.js'
import { unsubscribeRoutes } from './sending/unsubscribe-routes.js'
import { authInfoFunctions } from './shared/auth-info.js'
import { exportRoutes } from './shared/export-routes.js'
import { feedbackByModule, feedbackFunctions, type FeedbackRecord } from './shared/feedback.js'
import type { Volunteer } from './volunteers/volunteers.js'
import { manifest as accountability } from './accountability/manifest.js'
import { accountabilityFunctions } from './accountability/accountability.js'
import { manifest as admin } from './admin/manifest.js'
import { adminFunctions } from './admin/admin.js'
import { manifest as callIntelligence } from './call-intelligence/manifest.js'
import { callIntelligenceFunctions } from './call-intelligence/call-intelligence.js'
import { manifest as campaignCopy } from './campaign-copy/manifest.js'
import { campaignCopyFunctions } from './campaign-copy/campaign-copy.js'
import { manifest as candidateBriefings } from './candidate-briefings/manifest.js'
import { candidateBriefingFunctions } from './candidate-briefings/candidate-briefings.js'
import { manifest as canvassing } from './canvassing/manifest.js'
import { canvassingFunctions } from './canvassing/canvassing.js'
import { manifest as coachingDebate } from './coaching-debate/manifest.js'
import { coachingDebateFunctions } from './coaching-debate/coaching-debate.js'
import { manifest as coalitionDetector } from './coalition-detector/manifest.js'
import { coalitionFunctions } from './coalition-detector/coalition-detector.js'
import { manifest as compliance } from './compliance/manifest.js'
import { complianceFunctions } from './compliance/compliance.js'
import { manifest as disinfoWarning } from './disinfo-warning/manifest.js'
import { disinfoWarningFunctions } from './disinfo-warning/disinfo-warning.js'
import { manifest as events } from './events/manifest.js'
import { eventFunctions } from './events/events.js'
import { manifest as empathySimulator } from './empathy-simulator/manifest.js'
import { empathySimulatorFunctions } from './empathy-simulator/empathy-simulator.js'
import { manifest as factionMapper } from './faction-mapper/manifest.js'
import { factionFunctions } from './faction-mapper/faction-mapper.js'
import { manifest as fundraising } from './fundraising/manifest.js'
import { fundraisingFunctions } from './fundraising/fundraising.js'
import { manifest as knowledgeBase } from './knowledge-base/manifest.js'
import { knowledgeBaseFunctions } from './knowledge-base/knowledge-base.js'
import { manifest as localIssues } from './local-issues/manifest.js'
import { localIssueFunctions } from './local-issues/local-issues.js'
import { manifest as mediaMonitor } from './media-monitor/manifest.js'
import { mediaMonitorFunctions } from './media-monitor/media-monitor.js'
import { manifest as meetings } from './meetings/manifest.js'
import { meetingFunctions } from './meetings/meetings.js'
import { manifest as multilingual } from './multilingual/manifest.js'
import { multilingualFunctions } from './multilingual/multilingual.js'
import { manifest as narrativeContagion } from './narrative-contagion/manifest.js'
import { narrativeFunctions } from './narrative-contagion/narrative-contagion.js'
import { manifest as oppositionResearch } from './opposition-research/manifest.js'
import { oppositionFunctions } from './opposition-research/opposition-research.js'
import { manifest as people } from './people/manifest.js'
import { peopleFunctions } from './people/people.js'
import { manifest as policyChatbot } from './policy-chatbot/manifest.js'
import { policyChatbotFunctions } from './policy-chatbot/policy-chatbot.js'
import { manifest as policyDiff } from './policy-diff/manifest.js'
import { policyDiffFunctions } from './policy-diff/policy-diff.js'
import { manifest as questionAnticipation } from './question-anticipation/manifest.js'
import { questionAnticipationFunctions } from './question-anticipation/question-anticipation.js'
import { manifest as regulatoryMonitor } from './regulatory-monitor/manifest.js'
import { regulatoryMonitorFunctions } from './regulatory-monitor/regulatory-monitor.js'
import { manifest as sending } from './sending/manifest.js'
import { sendingFunctions } from './sending/sending.js'
import { manifest as sentimentMonitor } from './sentiment-monitor/manifest.js'
import { sentimentMonitorFunctions } from './sentiment-monitor/sentiment-monitor.js'
import { manifest as volunteers } from './volunteers/manifest.js'
import { volunteerFunctions } from './volunteers/volunteers.js'

/** How often reminders due before shifts are looked for. */
const REMINDER_CHECK_MS = 5 * 60_000
/** How often the uses of expired public-form tokens are forgotten. */
const TOKEN_SWEEP_MS = 15 * 60_000
/** How often the public pages' views counted in memory are added to the store. */
const VIEWS_FLUSH_MS = 60_000

type Factory = (kit: ModuleKit) => ModuleFunction[]

/** Each module's manifest with the factory of its functions, in navigation order. */
const FACTORIES: ReadonlyArray<readonly [ModuleManifest, Factory]> = [
  [knowledgeBase, kit => knowledgeBaseFunctions(kit.kb)],
  [people, kit => peopleFunctions(kit)],
  [volunteers, kit => volunteerFunctions(kit.store, kit.events, kit.people)],
  [events, kit => [...eventFunctions(kit.events), ...formFunctions(kit.forms, kit.pageStats)]],
  [canvassing, canvassingFunctions],
  [fundraising, kit => fundraisingFunctions(kit.fundraising, kit.people)],
  [meetings, meetingFunctions],
  [sentimentMonitor, sentimentMonitorFunctions],
  [narrativeContagion, narrativeFunctions],
  [mediaMonitor, mediaMonitorFunctions],
  [localIssues, localIssueFunctions],
  [callIntelligence, callIntelligenceFunctions],
  [disinfoWarning, disinfoWarningFunctions],
  [campaignCopy, campaignCopyFunctions],
  [sending, kit => sendingFunctions(kit)],
  [policyChatbot, policyChatbotFunctions],
  [multilingual, multilingualFunctions],
  [empathySimulator, empathySimulatorFunctions],
  [questionAnticipation, questionAnticipationFunctions],
  [candidateBriefings, candidateBriefingFunctions],
  [coachingDebate, coachingDebateFunctions],
  [oppositionResearch, oppositionFunctions],
  [coalitionDetector, coalitionFunctions],
  [factionMapper, factionFunctions],
  [policyDiff, policyDiffFunctions],
  [regulatoryMonitor, regulatoryMonitorFunctions],
  [compliance, complianceFunctions],
  [accountability, accountabilityFunctions],
  [admin, kit => adminFunctions(kit.admin)]
]

/** A module's functions with its manifest's id and roles; throws when they and the manifest differ. */
export function withManifest (manifest: ModuleManifest, functions: readonly ModuleFunction[]): ServerFunction[] {
  const made = new Set(functions.map(fn => fn.name))
  const unmade = Object.keys(manifest.functions).filter(name => !made.has(name))
  if (unmade.length > 0) throw new Error(`module "${manifest.id}" lists functions it does not make: ${unmade.join(', ')}`)
  return functions.map(fn => {
    if (!Object.hasOwn(manifest.functions, fn.name)) throw new Error(`module "${manifest.id}" makes "${fn.name}", which its manifest does not list`)
    return { ...fn, module: manifest.id, access: manifest.functions[fn.name] }
  })
}

/** Every module's manifest, in navigation order. */
export const MANIFESTS: readonly ModuleManifest[] = FACTORIES.map(([manifest]) => manifest)

/** Every module's server functions, module by module in navigation order. */
function moduleFunctions (kit: ModuleKit): ServerFunction[] {
  return FACTORIES.flatMap(([manifest, make]) => withManifest(manifest, make(kit)))
}

/** What the core hands the modules at start. */
export interface ModuleCore {
  ctx: PluginContext<CampaignConfig>
  /** The campaign store, every write audited. */
  store: AuditedStore
  audit: AuditLog
  posts: PostStore
  registry: FunctionRegistry
  /** A request's session. */
  auth: SessionAuth
  generator: Generator | undefined
  secrets: SecretResolver | undefined
  tokens: ApiTokens
  /** The public base URL, as the login callback names it. */
  appUrl: () => string
  /** The identity provider's issuer, once started. */
  issuer: () => string
  startedAt: number
  /** Live sessions and logins waiting for the identity provider. */
  sessionCounts: () => Promise<{ sessions: number, pending_logins: number }>
}

/** What the modules add to the app: routes on the app listener and under /export, and what a login records. */
export interface StartedModules {
  routes: FastifyPluginAsync[]
  exports: FastifyPluginAsync
  onLogin: (record: SessionRecord) => Promise<void>
}

/** Every module's service, function, route and schedule; the functions are registered in `core.registry`. */
export async function startModules (core: ModuleCore): Promise<StartedModules> {
  const { ctx, store, audit, posts, registry, secrets, appUrl } = core
  const config = ctx.config
  const users = store.table<UserRecord>('users')
  const feedback = store.table<FeedbackRecord, string[]>('feedback')
  const volunteers = store.table<Volunteer>('volunteers')
  const kb = await KnowledgeBase.open(store)
  const fundraising = new Fundraising(store, { limitCents: config.contribution_limit_cents, itemizeAboveCents: loadRules().itemizationThresholdCents, elections: new Elections(config.election_cycles) })
  const people = new PeopleDirectory(store)
  const messenger = new Messenger(store, people, messengerSettings(config, secrets, appUrl), ctx.outbound)
  ctx.onClose(() => { messenger.close() })
  const replies = new SmsReplies(store, people, messenger, {
    authToken: campaignSecret(config, 'sms_inbound_auth_token', secrets),
    url: () => config.sms_inbound_url !== '' ? config.sms_inbound_url : new URL(SMS_REPLY_PATH, appUrl()).href,
    helpText: config.sms_help_text
  })
  const events = new EventBook(store, { people, reminderHours: config.shift_reminder_hours, messenger: () => messenger })
  const formTokens = new PublicTokens(store, { minMs: config.public_form_min_seconds * 1000, maxMs: config.public_form_max_minutes * 60_000 })
  const forms = new PublicForms(store, formTokens, {
    people,
    messenger: () => messenger,
    appUrl,
    failed: err => { ctx.log.error({ err: messageOf(err) }, 'a consent confirmation e-mail could not be sent') },
    track: sending => { void ctx.track(sending) }
  })
  const rsvps = new PublicRsvps(events, store, formTokens, {
    messenger: () => messenger,
    appUrl,
    failed: err => { ctx.log.error({ err: messageOf(err) }, 'an RSVP confirmation could not be sent') },
    track: sending => { void ctx.track(sending) }
  })
  const views = new PageViews(store)
  const stats = async (): Promise<PageStats[]> => await pageStats(events, forms, rsvps, views)
  registry.beforeEachCall(async () => { await kb.refresh() })
  registry.register([
    ...authInfoFunctions({ devFallback: config.dev_fallback, registry }),
    ...feedbackFunctions(feedback),
    ...moduleFunctions({
      language: localEngine,
      generator: core.generator,
      kb,
      posts,
      fundraising,
      people,
      messenger,
      replies,
      events,
      forms,
      pageStats: stats,
      audit,
      store,
      maxRecords: config.max_records,
      admin: {
        users,
        tokens: core.tokens,
        audit,
        startedAt: core.startedAt,
        issuer: core.issuer,
        feedback: async () => await feedbackByModule(feedback),
        counts: async () => ({
          ...await core.sessionCounts(),
          users: await users.count(),
          documents: kb.documentCount,
          volunteers: await volunteers.count(),
          donors: await fundraising.donorCount()
        })
      }
    })
  ])
  ctx.schedule.every('shift-reminders', REMINDER_CHECK_MS, async () => { await events.sendDueReminders() })
  /** One budget of posts per client address across every public page. */
  const limit = new RateLimit(config.public_rsvp_per_minute)
  ctx.schedule.every('public-form-tokens', TOKEN_SWEEP_MS, async () => { await formTokens.sweep() })
  ctx.schedule.every('public-page-views', VIEWS_FLUSH_MS, async () => { await views.flush() })
  return {
    routes: [unsubscribeRoutes(messenger, ctx.log), smsReplyRoutes(replies, ctx.log), publicRoutes({ rsvps, tokens: formTokens, limit, views, log: ctx.log }), formRoutes({ forms, tokens: formTokens, limit, embedHosts: config.public_embed_hosts, views, log: ctx.log }),
      flushViewsOnClose(views, err => { ctx.log.error({ err: messageOf(err) }, 'the public pages\' last views could not be written') })],
    exports: exportRoutes({ auth: core.auth, people, peopleTable: store.table<Person>(PEOPLE), volunteers, fundraising, events, pageStats: stats, messenger, audit }),
    onLogin: async record => { await recordLogin(users, record) }
  }
}
