// Compliance: compliance-check applies the rule set (compliance-rules.ts, data/compliance-rules.toml) to
// an ad, mailer, e-mail or post and stores the check; generate-report reports a period's donations,
// checks and regulatory deadlines with their sources, summarised by rule or by the generative provider.
import { BadRequest } from '../../../../kernel/index.js'
import { Type } from '../../../../kernel/schema.js'
import { moduleFunction, type ModuleFunction, generated, loadPrompt, promptMessages, calendarDay, checkText, DayArg, RecordStore, TextArg, timeKey, type ModuleKit, SourceList, plural } from '../../module-kit.js'
import { electionName, dollars } from '../fundraising/index.js'
import type { StoredRegulation } from '../regulatory-monitor/index.js'
import { checkSection, deadlineSection, donationSection, reportSummary, type CheckSection, type DeadlineSection, type DonationSection, type StoredCheck } from './compliance-report.js'
import { CHANNELS, checkCompliance, loadRules, type Severity } from './compliance-rules.js'


const CheckArgs = Type.Object({
  text: TextArg('the ad, mailer, e-mail or post'),
  channel: Type.Union(CHANNELS.map(c => Type.Literal(c))),
  sponsor: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'who paid for it, as the disclaimer must name it' })),
  amount_cents: Type.Optional(Type.Integer({ minimum: 1, description: 'a contribution to check against the limit' })),
  donor_email: Type.Optional(Type.String({ pattern: '^[^@\\s]+@[^@\\s]+$', maxLength: 254 }))
}, { additionalProperties: false })

const ReportArgs = Type.Object({
  period_from: DayArg('first day of the period (YYYY-MM-DD)'),
  period_to: DayArg('last day of the period (YYYY-MM-DD)')
}, { additionalProperties: false })

export interface StoredReport {
  report_id: string
  period_from: string
  period_to: string
  limit_cents: number
  donations: DonationSection
  checks: CheckSection
  deadlines: DeadlineSection
  summary: string
  summary_method: 'rules' | 'generative'
  sources: string[]
  engine: string
  created_by: string
  created_at: string
}

const DAY_END_MS = 86_399_999

export function complianceFunctions (kit: ModuleKit): ModuleFunction[] {
  const rules = loadRules()
  const template = loadPrompt(import.meta.url, 'generate-report')
  const checks = new RecordStore<StoredCheck>(kit.store, 'compliance-checks', kit.maxRecords)
  const reports = new RecordStore<StoredReport>(kit.store, 'compliance-reports', kit.maxRecords)
  const regulations = new RecordStore<StoredRegulation>(kit.store, 'regulatory-analyses', kit.maxRecords)
  return [
    moduleFunction({
      name: 'compliance-check',
      args: CheckArgs,
      handler: async (args, { session }) => {
        checkText('text', args.text)
        const engine = await kit.language()
        const now = new Date()
        const outcome = await checkCompliance(engine, rules, kit.fundraising, { ...args, day: now.toISOString().slice(0, 10) })
        const counts: Record<Severity, number> = { error: 0, warning: 0, info: 0 }
        for (const f of outcome.findings) counts[f.severity]++
        const check: StoredCheck = {
          check_id: timeKey(now),
          channel: args.channel,
          sponsor: args.sponsor ?? '',
          excerpt: args.text.slice(0, 500),
          passed: counts.error === 0,
          counts,
          findings: outcome.findings,
          checked_by: session?.email ?? '',
          checked_at: now.toISOString()
        }
        await checks.put(check.check_id, check)
        const sources = new SourceList()
        sources.add('template', 'compliance-rules', `compliance rules (plugins/campaign/data/compliance-rules.toml): ${rules.jurisdiction}`)
        if (outcome.donor !== null) {
          sources.add('donations', `${outcome.donor.donor_id}:${outcome.donor.election}`,
            `fundraising: donor ${outcome.donor.donor_id}, ${plural(outcome.donor.donations, 'gift')} toward ${electionName(outcome.donor.election)}, ${dollars(outcome.donor.given_cents)}; limit ${dollars(kit.fundraising.limitCents)}`)
        }
        return {
          ...check,
          solicits: outcome.solicits,
          rules_applied: outcome.applied,
          rules_not_applied: outcome.not_applied,
          jurisdiction: rules.jurisdiction,
          limit_cents: kit.fundraising.limitCents,
          sources: sources.lines,
          resource_id: check.check_id,
          engine: engine.name
        }
      }
    }),
    moduleFunction({
      name: 'generate-report',
      args: ReportArgs,
      handler: async (args, { session }) => {
        const from = new Date(calendarDay('period_from', args.period_from))
        const to = new Date(calendarDay('period_to', args.period_to))
        if (to < from) throw new BadRequest('invalid arguments: /period_to: comes before period_from')
        const engine = await kit.language()
        const sources = new SourceList()
        const donations = await donationSection(kit.fundraising, args.period_from, args.period_to, rules.nearLimitShare, sources)
        const checked = checkSection(await checks.list(from, new Date(to.getTime() + DAY_END_MS)), args.period_from, args.period_to, sources)
        const deadlines = deadlineSection(await regulations.list(), args.period_from, args.period_to, sources)
        let summary = reportSummary(args.period_from, args.period_to, kit.fundraising.limitCents, donations, checked, deadlines)
        let producedBy = engine.name
        const lines = (items: string[]): string => items.length === 0 ? 'none' : items.map(i => `- ${i}`).join('\n')
        const answer = await generated(kit.generator, () => promptMessages(template, {
          period: `${args.period_from} to ${args.period_to}`,
          donations: lines([
            `${donations.donations} donations, ${dollars(donations.total_cents)} from ${donations.donors} donors (largest ${dollars(donations.largest_cents)}); limit ${dollars(kit.fundraising.limitCents)} per donor per election`,
            ...donations.near_or_over_limit.map(d => `${d.name}: ${dollars(d.total_cents)} toward ${electionName(d.election)} (${d.standing} the limit)`),
            `${donations.itemized_donors.length} donors to itemise`
          ]),
          checks: lines([
            `${checked.checks} checks: ${checked.passed} passed, ${checked.failed} failed`,
            ...checked.by_rule.map(r => `${r.rule_id} (${r.severity}): ${r.findings} findings — ${r.title}`)
          ]),
          deadlines: lines(deadlines.deadlines.map(d => `${d.date} (${d.when}): ${d.clause} — ${d.regulation}, ${d.section}`)),
          sources: sources.lines.join('\n')
        }), 400)
        if (answer !== undefined) {
          summary = answer.text
          producedBy = answer.engine
        }
        const now = new Date()
        const report: StoredReport = {
          report_id: timeKey(now),
          period_from: args.period_from,
          period_to: args.period_to,
          limit_cents: kit.fundraising.limitCents,
          donations,
          checks: checked,
          deadlines,
          summary,
          summary_method: answer !== undefined ? 'generative' : 'rules',
          sources: sources.lines,
          engine: producedBy,
          created_by: session?.email ?? '',
          created_at: now.toISOString()
        }
        await reports.put(report.report_id, report)
        return { ...report, resource_id: report.report_id }
      }
    })
  ]
}
