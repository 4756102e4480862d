// The compliance report of a period: the donations received in it (totals, donors near or over the
// limit of an election, donors to itemise in a cycle), the compliance checks run in it (failures by rule), and the regulatory
// deadlines in it or just after; each section cites the records it was computed from.
import { shiftDay, type SourceList, plural } from '../../module-kit.js'
import { cycleOfElection, electionName, dollars, netCents, type Donation, type Fundraising } from '../fundraising/index.js'
import type { StoredRegulation } from '../regulatory-monitor/index.js'
import type { Severity } from './compliance-rules.js'

/** Deadlines this many days after the period are listed as upcoming. */
export const UPCOMING_DAYS = 30
/** Most failing checks and most donors listed per section (all are counted). */
export const MAX_LISTED = 50

export interface StoredCheck {
  check_id: string
  channel: string
  sponsor: string
  excerpt: string
  passed: boolean
  counts: Record<Severity, number>
  findings: Array<{ rule_id: string, severity: Severity, title: string, evidence: string[], reference: string }>
  checked_by: string
  checked_at: string
}

export interface DonorStanding { donor_id: string, name: string, election: string, total_cents: number, remaining_cents: number, standing: 'over' | 'at' | 'near' }

export interface DonationSection {
  donations: number
  total_cents: number
  donors: number
  largest_cents: number
  near_or_over_limit: DonorStanding[]
  itemized_donors: Array<{ donor_id: string, name: string, cycle: string, total_cents: number }>
  sources: string[]
}

export interface CheckSection {
  checks: number
  passed: number
  failed: number
  by_rule: Array<{ rule_id: string, severity: Severity, title: string, findings: number }>
  failing: Array<{ check_id: string, channel: string, checked_at: string, excerpt: string, errors: string[] }>
  sources: string[]
}

export interface DeadlineSection {
  deadlines: Array<{ date: string, when: 'in period' | 'upcoming', text: string, clause: string, regulation: string, section: string }>
  sources: string[]
}

const cited = (sources: SourceList, cites: Iterable<number>): string[] => [...new Set(cites)].sort((a, b) => a - b).map(cite => `[${cite}] ${sources.items[cite - 1].line}`)
const net = (gifts: readonly Donation[]): number => gifts.reduce((sum, g) => sum + netCents(g), 0)

/**
 * Donations with `received_on` in [from, to] (amounts net of refunds); for each election the period's
 * gifts count toward, the donors whose total toward it reaches `nearShare` of the limit (near), the
 * limit (at) or more (over); for each cycle, those whose gifts in it pass the itemisation threshold.
 */
export async function donationSection (fundraising: Fundraising, from: string, to: string, nearShare: number, sources: SourceList): Promise<DonationSection> {
  const limit = fundraising.limitCents
  let donations = 0
  let total = 0
  let largest = 0
  const cites: number[] = []
  const standings: DonorStanding[] = []
  const itemized: DonationSection['itemized_donors'] = []
  const givers = new Set<string>()
  for (const donor of await fundraising.summaries(undefined)) {
    const gifts = await fundraising.donations(donor.donor_id)
    const inPeriod = gifts.filter(g => g.received_on >= from && g.received_on <= to)
    if (inPeriod.length === 0) continue
    givers.add(donor.donor_id)
    donations += inPeriod.length
    total += net(inPeriod)
    largest = Math.max(largest, ...inPeriod.map(netCents))
    const line = (key: string, what: string, counted: readonly Donation[]): number =>
      sources.add('donations', `${donor.donor_id}:${key}`, `fundraising: ${donor.name} (donor ${donor.donor_id}), ${plural(counted.length, 'gift')} ${what}, ${dollars(net(counted))}`)
    for (const election of new Set(inPeriod.map(g => g.election))) {
      const toward = gifts.filter(g => g.election === election)
      const given = net(toward)
      if (given < nearShare * limit) continue
      cites.push(line(election, `toward ${electionName(election)}`, toward))
      standings.push({ donor_id: donor.donor_id, name: donor.name, election, total_cents: given, remaining_cents: Math.max(0, limit - given), standing: given > limit ? 'over' : given === limit ? 'at' : 'near' })
    }
    for (const cycle of new Set(inPeriod.map(g => cycleOfElection(g.election)))) {
      const inCycle = gifts.filter(g => cycleOfElection(g.election) === cycle)
      const given = net(inCycle)
      if (given <= fundraising.itemizeAboveCents) continue
      cites.push(line(`cycle:${cycle}`, `in the ${cycle} cycle`, inCycle))
      itemized.push({ donor_id: donor.donor_id, name: donor.name, cycle, total_cents: given })
    }
  }
  const all = sources.add('donations', `period:${from}:${to}`, `fundraising store: ${donations} donations received ${from} to ${to} from ${givers.size} donors`)
  const rank = <T extends { total_cents: number, name: string }>(items: T[]): T[] => items.sort((a, b) => b.total_cents - a.total_cents || a.name.localeCompare(b.name)).slice(0, MAX_LISTED)
  return {
    donations,
    total_cents: total,
    donors: givers.size,
    largest_cents: largest,
    near_or_over_limit: rank(standings),
    itemized_donors: rank(itemized),
    sources: cited(sources, [all, ...cites])
  }
}

/** The compliance checks run in the period: passed and failed, findings per rule, the failing checks (newest first). */
export function checkSection (checks: Iterable<StoredCheck>, from: string, to: string, sources: SourceList): CheckSection {
  const all = [...checks]
  const byRule = new Map<string, CheckSection['by_rule'][number]>()
  for (const check of all) {
    for (const f of check.findings) {
      const entry = byRule.get(f.rule_id) ?? { rule_id: f.rule_id, severity: f.severity, title: f.title, findings: 0 }
      entry.findings++
      if (f.severity === 'error') entry.severity = 'error'
      byRule.set(f.rule_id, entry)
    }
  }
  const failing = all.filter(c => !c.passed).reverse().slice(0, MAX_LISTED)
  const period = sources.add('compliance-check', `period:${from}:${to}`, `compliance checks: ${all.length} run ${from} to ${to}`)
  const cites = failing.map(c => sources.add('compliance-check', c.check_id, `compliance check ${c.check_id} (${c.channel}, ${c.checked_at.slice(0, 10)}, by ${c.checked_by}): “${c.excerpt.slice(0, 80)}”`))
  return {
    checks: all.length,
    passed: all.filter(c => c.passed).length,
    failed: all.filter(c => !c.passed).length,
    by_rule: [...byRule.values()].sort((a, b) => b.findings - a.findings || a.rule_id.localeCompare(b.rule_id)),
    failing: failing.map(c => ({ check_id: c.check_id, channel: c.channel, checked_at: c.checked_at, excerpt: c.excerpt, errors: c.findings.filter(f => f.severity === 'error').map(f => f.rule_id) })),
    sources: cited(sources, [period, ...cites])
  }
}

/** Calendar deadlines of the stored regulatory analyses in the period, or within UPCOMING_DAYS after it; by date. */
export function deadlineSection (analyses: Iterable<StoredRegulation>, from: string, to: string, sources: SourceList): DeadlineSection {
  const until = shiftDay(to, UPCOMING_DAYS)
  const deadlines: DeadlineSection['deadlines'] = []
  const cites: number[] = []
  for (const analysis of analyses) {
    analysis.deadlines.forEach((d, i) => {
      if (d.kind !== 'date' || d.date === undefined || d.date < from || d.date > until) return
      cites.push(sources.add('regulation', `${analysis.regulation_id}#${i}`, `regulatory analysis of ${analysis.title}${analysis.jurisdiction !== '' ? ` (${analysis.jurisdiction})` : ''}, ${d.section}: “${d.clause}”`))
      deadlines.push({ date: d.date, when: d.date <= to ? 'in period' : 'upcoming', text: d.text, clause: d.clause, regulation: analysis.title, section: d.section })
    })
  }
  return { deadlines: deadlines.sort((a, b) => a.date.localeCompare(b.date)), sources: cited(sources, cites) }
}

/** The rule-based summary of the three sections. */
export function reportSummary (from: string, to: string, limitCents: number, d: DonationSection, c: CheckSection, r: DeadlineSection): string {
  const top = c.by_rule[0]
  return [
    `From ${from} to ${to}: ${d.donations} donations totalling ${dollars(d.total_cents)} from ${d.donors} donors; ${d.near_or_over_limit.length} near or over the ${dollars(limitCents)} limit, ${d.itemized_donors.length} to itemise.`,
    `${c.checks} compliance checks ran: ${c.passed} passed, ${c.failed} failed${top !== undefined ? ` (most findings: ${top.rule_id}, ${top.findings})` : ''}.`,
    `${r.deadlines.filter(x => x.when === 'in period').length} regulatory deadlines fall in the period and ${r.deadlines.filter(x => x.when === 'upcoming').length} in the ${UPCOMING_DAYS} days after.`
  ].join(' ')
}
