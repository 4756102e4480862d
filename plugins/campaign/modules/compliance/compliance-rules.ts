// The compliance rule set (data/compliance-rules.toml) and how a text is checked against it:
// disclaimers and required fields per channel, what a request for money must carry, prohibited
// phrases, and the contribution limit with the donor's gifts toward the election from the fundraising store.
import { Type, type Static } from '../../../../kernel/schema.js'
import { type LanguageEngine, loadDataFile, AMOUNT, matchesOf } from '../../module-kit.js'
import { electionName, dollars, donorId, netCents, type Fundraising } from '../fundraising/index.js'

import { CHANNELS, type Channel } from './channels.js'
export { CHANNELS, type Channel }

const Severity = Type.Union([Type.Literal('error'), Type.Literal('warning'), Type.Literal('info')])
export type Severity = Static<typeof Severity>

const RULE_KINDS = ['disclaimer', 'disclaimer-sponsor', 'required-field', 'solicitation-field', 'prohibited', 'ask-over-limit', 'contribution-limit'] as const

export const RulesFile = Type.Object({
  jurisdiction: Type.String(),
  solicitation: Type.String({ minLength: 1 }),
  near_limit_share: Type.Number({ exclusiveMinimum: 0, maximum: 1 }),
  itemization_threshold_cents: Type.Integer({ minimum: 0 }),
  rule: Type.Array(Type.Object({
    id: Type.String({ pattern: '^[A-Z][A-Z0-9-]*$' }),
    kind: Type.Union(RULE_KINDS.map(k => Type.Literal(k))),
    title: Type.String({ minLength: 1 }),
    reference: Type.String(),
    pattern: Type.Optional(Type.String({ minLength: 1 })),
    unless: Type.Optional(Type.String({ minLength: 1 })),
    severity: Type.Optional(Severity),
    channels: Type.Optional(Type.Object({ ad: Type.Optional(Severity), mailer: Type.Optional(Severity), email: Type.Optional(Severity), post: Type.Optional(Severity) }, { additionalProperties: false }))
  }, { additionalProperties: false }), { minItems: 1 })
}, { additionalProperties: false })
export type Rule = Static<typeof RulesFile>['rule'][number]

export interface RuleSet {
  jurisdiction: string
  solicitation: RegExp
  nearLimitShare: number
  itemizationThresholdCents: number
  rules: Array<Rule & { regex?: RegExp, unlessRegex?: RegExp }>
}

/** The rule set of `data/compliance-rules.toml` (or another file), its patterns compiled; a rule missing what its kind needs fails start-up. */
export function loadRules (file?: string): RuleSet {
  const data = loadDataFile('compliance-rules', RulesFile, file)
  const rules = data.rule.map(rule => {
    const needsPattern = ['disclaimer', 'required-field', 'solicitation-field', 'prohibited'].includes(rule.kind)
    if (needsPattern && rule.pattern === undefined) throw new Error(`compliance rule ${rule.id}: a ${rule.kind} rule needs a pattern`)
    if (['disclaimer', 'required-field'].includes(rule.kind) && rule.channels === undefined) throw new Error(`compliance rule ${rule.id}: a ${rule.kind} rule needs channels`)
    return {
      ...rule,
      ...(rule.pattern !== undefined ? { regex: new RegExp(rule.pattern, 'i') } : {}),
      ...(rule.unless !== undefined ? { unlessRegex: new RegExp(rule.unless, 'i') } : {})
    }
  })
  if (new Set(rules.map(r => r.id)).size !== rules.length) throw new Error('compliance rules: a rule id is used twice')
  return { jurisdiction: data.jurisdiction, solicitation: new RegExp(data.solicitation, 'i'), nearLimitShare: data.near_limit_share, itemizationThresholdCents: data.itemization_threshold_cents, rules }
}

export interface Finding {
  rule_id: string
  severity: Severity
  title: string
  /** What was found (or what is missing), quoted from the text or computed from the records. */
  evidence: string[]
  reference: string
}

export interface CheckInput {
  text: string
  channel: Channel
  sponsor?: string
  amount_cents?: number
  donor_email?: string
  /** The day of the check (YYYY-MM-DD): a gift received on it counts toward the next election. */
  day: string
}

export interface CheckOutcome {
  solicits: boolean
  findings: Finding[]
  applied: string[]
  not_applied: Array<{ rule_id: string, reason: string }>
  /** The fundraising records read: the donor and the gifts toward the election. */
  donor: { donor_id: string, election: string, donations: number, given_cents: number } | null
}

/** Amounts named in a text, in cents ("$5,000" → 500000; "$2 million" → 200000000). */
export function amountsInCents (text: string): Array<{ text: string, cents: number }> {
  return matchesOf(text, AMOUNT).map(raw => {
    const number = Number((/\d[\d,]*(?:\.\d+)?/.exec(raw) as RegExpExecArray)[0].replace(/,/g, ''))
    const scale = /million/i.test(raw) ? 1e6 : /billion/i.test(raw) ? 1e9 : /thousand/i.test(raw) ? 1e3 : 1
    return { text: raw.trim().replace(/,+$/, ''), cents: Math.round(number * scale * 100) }
  })
}

const collapse = (text: string): string => text.replace(/\s+/g, ' ').trim()

/** Apply every rule of `rules` to the input; `fundraising` gives the limit and the donor's gifts. */
export async function checkCompliance (engine: LanguageEngine, rules: RuleSet, fundraising: Fundraising, input: CheckInput): Promise<CheckOutcome> {
  const sentences = engine.segments(input.text).map(s => collapse(s.text)).filter(s => s !== '')
  const solicits = rules.solicitation.test(input.text)
  const findings: Finding[] = []
  const applied: string[] = []
  const notApplied: CheckOutcome['not_applied'] = []
  const limit = fundraising.limitCents
  let donor: CheckOutcome['donor'] = null
  const find = (rule: Rule, severity: Severity, evidence: string[]): void => { findings.push({ rule_id: rule.id, severity, title: rule.title, evidence, reference: rule.reference }) }
  const skip = (rule: Rule, reason: string): void => { notApplied.push({ rule_id: rule.id, reason }) }
  const disclaimerRule = rules.rules.find(r => r.kind === 'disclaimer')
  const disclaimer = disclaimerRule?.regex === undefined ? undefined : sentences.find(s => disclaimerRule.regex?.test(s))

  for (const rule of rules.rules) {
    switch (rule.kind) {
      case 'disclaimer':
      case 'required-field': {
        const severity = rule.channels?.[input.channel]
        if (severity === undefined) { skip(rule, `not required on the ${input.channel} channel`); break }
        applied.push(rule.id)
        if (!(rule.regex as RegExp).test(input.text)) find(rule, severity, [`not found in the ${input.channel}: ${rule.title}`])
        break
      }
      case 'disclaimer-sponsor': {
        if (input.sponsor === undefined) { skip(rule, 'no sponsor given'); break }
        if (disclaimer === undefined) { skip(rule, 'the text has no disclaimer'); break }
        applied.push(rule.id)
        if (!disclaimer.toLowerCase().includes(collapse(input.sponsor).toLowerCase())) find(rule, rule.severity ?? 'error', [`the disclaimer “${disclaimer}” does not name ${input.sponsor}`])
        break
      }
      case 'solicitation-field': {
        if (!solicits) { skip(rule, 'the text does not ask for money'); break }
        applied.push(rule.id)
        if (!(rule.regex as RegExp).test(input.text)) find(rule, rule.severity ?? 'warning', [`the text asks for money without: ${rule.title}`])
        break
      }
      case 'prohibited': {
        applied.push(rule.id)
        const hits = sentences.filter(s => (rule.regex as RegExp).test(s) && rule.unlessRegex?.test(s) !== true)
        if (hits.length > 0) find(rule, rule.severity ?? 'error', hits)
        break
      }
      case 'ask-over-limit': {
        if (!solicits) { skip(rule, 'the text does not ask for money'); break }
        applied.push(rule.id)
        const over = amountsInCents(input.text).filter(a => a.cents > limit)
        if (over.length > 0) find(rule, rule.severity ?? 'warning', over.map(a => `${a.text} is more than the per-donor limit of ${dollars(limit)} per election`))
        break
      }
      case 'contribution-limit': {
        if (input.amount_cents === undefined && input.donor_email === undefined) { skip(rule, 'no amount_cents or donor_email given'); break }
        const election = fundraising.elections.nextOn(input.day)
        if (election === undefined) { skip(rule, `no election cycle is configured on or after ${input.day}`); break }
        applied.push(rule.id)
        let given = 0
        if (input.donor_email !== undefined) {
          const id = donorId(input.donor_email)
          const gifts = (await fundraising.donations(id)).filter(d => d.election === election.id)
          given = gifts.reduce((sum, d) => sum + netCents(d), 0)
          donor = { donor_id: id, election: election.id, donations: gifts.length, given_cents: given }
        }
        const total = given + (input.amount_cents ?? 0)
        const what = `${input.donor_email !== undefined ? `${dollars(given)} given toward ${electionName(election.id)}` : 'earlier gifts not counted (no donor_email)'}${input.amount_cents !== undefined ? ` + ${dollars(input.amount_cents)}` : ''} = ${dollars(total)} of the ${dollars(limit)} limit`
        if (total > limit) find(rule, rule.severity ?? 'error', [`over the limit by ${dollars(total - limit)}: ${what}`])
        else if (total >= rules.nearLimitShare * limit) find(rule, 'warning', [`near the limit (${dollars(limit - total)} remaining): ${what}`])
        else if (input.donor_email === undefined) find(rule, 'info', [`within the limit on its own, but ${what}`])
        break
      }
    }
  }
  const order: Severity[] = ['error', 'warning', 'info']
  findings.sort((a, b) => order.indexOf(a.severity) - order.indexOf(b.severity))
  return { solicits, findings, applied, not_applied: notApplied, donor }
}
