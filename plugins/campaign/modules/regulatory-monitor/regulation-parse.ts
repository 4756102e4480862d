// The regulatory monitor's method: a bill or rule split into sections and clauses; its obligations,
// prohibitions and permissions (by modal verbs), deadlines, penalties, affected parties, the campaign
// topics it touches (a documented lexicon) and an impact score.
import { type LanguageEngine, round, findDue, AMOUNT, classifyClause, splitLegalClauses, splitSections, type LegalClause, type Provision, type ProvisionKind, distinctCi, escapeRegExp, matchesOf } from '../../module-kit.js'

export interface Deadline {
  section: string
  clause: string
  text: string
  /** "date": a calendar date; "period": a time span from an event ("within 30 days"). */
  kind: 'date' | 'period'
  /** YYYY-MM-DD for a date. */
  date?: string
  /** Length of a period in days (months as calendar months from the day of analysis). */
  days?: number
}

export interface Penalty { section: string, clause: string, kinds: Array<'fine' | 'imprisonment' | 'penalty'>, amounts: string[] }

/** "not later than" read as "no later than", and "thirty (30) days" as "thirty days", for due-dates.ts. */
const normaliseDue = (text: string): string => text.replace(/\bnot later than\b/gi, 'no later than').replace(/(\p{L}+)\s*\(\d+\)(?=\s)/gu, '$1')
const DAY_MS = 86_400_000

/**
 * The deadline a clause states, read by due-dates.ts (shared with accountability and meetings), at
 * most one per clause. A date that resolves the same against two different reference days is a
 * calendar date; otherwise the phrase is a period, reported in days from the day of analysis.
 */
export function deadlineOf (clause: LegalClause, today: Date): Deadline | undefined {
  const text = normaliseDue(clause.text)
  const due = findDue(text, today)
  if (due === undefined) return undefined
  const other = findDue(text, new Date(today.getTime() + 400 * DAY_MS))
  const base = { section: clause.section, clause: clause.text, text: due.due_text }
  if (other?.due_on === due.due_on) return { ...base, kind: 'date', date: due.due_on }
  const start = Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate())
  return { ...base, kind: 'period', days: Math.round((Date.parse(due.due_on) - start) / DAY_MS) }
}

const PENALTY_CUE = /\b(?:fine[sd]?|penalt(?:y|ies)|liable|punish(?:ed|able|ment)|imprison(?:ed|ment)|jail|misdemeanou?r|felony|forfeit(?:ure)?|sanctions?)\b/i

export function penaltyOf (clause: LegalClause): Penalty | undefined {
  if (!PENALTY_CUE.test(clause.text)) return undefined
  const amounts = matchesOf(clause.text, AMOUNT).map(a => a.trim())
  const kinds: Penalty['kinds'] = []
  if (/\bfine[sd]?\b/i.test(clause.text) || amounts.length > 0) kinds.push('fine')
  if (/\b(?:imprison(?:ed|ment)|jail|prison)\b/i.test(clause.text)) kinds.push('imprisonment')
  if (kinds.length === 0) kinds.push('penalty')
  return { section: clause.section, clause: clause.text, kinds, amounts }
}

/** Who campaign law commonly binds; longer names are matched first and their words not counted again. */
export const PARTIES = ['political action committee', 'political committee', 'candidate committee', 'party committee', 'political party',
  'foreign national', 'labor organization', 'election official', 'online platform', 'data broker', 'committee', 'candidate', 'treasurer',
  'campaign', 'contributor', 'donor', 'vendor', 'advertiser', 'broadcaster', 'platform', 'publisher', 'employer', 'lobbyist', 'registrant',
  'consultant', 'volunteer', 'voter', 'corporation']

export interface Party { party: string, mentions: number, provisions: number }

const partyPattern = (name: string): RegExp => new RegExp(`(?<![\\p{L}\\p{N}])${escapeRegExp(name)}(?:s|es)?(?![\\p{L}\\p{N}])`, 'giu')
const names = (text: string, party: string): number => matchesOf(text, partyPattern(party)).length

/** Lexicon parties (plurals folded) with their mentions and the provisions binding them, plus each provision subject that names none of them. */
export function partiesOf (text: string, provisions: readonly Provision[]): Party[] {
  let rest = text
  let subjects = provisions.map(p => p.subject)
  const found: Party[] = []
  for (const party of PARTIES) {
    const mentions = names(rest, party)
    if (mentions === 0) continue
    found.push({ party, mentions, provisions: subjects.filter(s => names(s, party) > 0).length })
    rest = rest.replace(partyPattern(party), ' ')
    subjects = subjects.map(s => s.replace(partyPattern(party), ' '))
  }
  const unnamed = distinctCi(provisions.map(p => p.subject).filter(s => s !== '' && PARTIES.every(party => names(s, party) === 0)))
  for (const subject of unnamed) {
    found.push({ party: subject.toLowerCase(), mentions: Math.max(1, names(text, subject)), provisions: provisions.filter(p => p.subject.toLowerCase() === subject.toLowerCase()).length })
  }
  return found.sort((a, b) => b.provisions - a.provisions || b.mentions - a.mentions || a.party.localeCompare(b.party))
}

/** The campaign topics and the words that raise them (case-insensitive, whole words). */
export const TOPICS: ReadonlyArray<{ topic: string, label: string, pattern: RegExp }> = [
  { topic: 'contributions', label: 'Contributions', pattern: /\bcontribut(?:ion|ions|or|ors|e|es|ed|ing)\b|\bdonat(?:ion|ions|e|ed|es|ing)\b|\bdonors?\b|\bfundrais(?:ing|er|ers)\b|\bin-kind\b|\b(?:super )?pacs?\b|\bbundl(?:e|er|ers|ing)\b/gi },
  { topic: 'disclosure', label: 'Disclosure and reporting', pattern: /\bdisclos(?:e|es|ed|ing|ure|ures)\b|\breport(?:s|ed|ing)?\b|\bfil(?:e|es|ed|ing)\b|\bitemi[sz](?:e|ed)\b|\bpublic record\b|\bregist(?:er|ers|ered|ration)\b/gi },
  { topic: 'advertising', label: 'Advertising and disclaimers', pattern: /\badvertis(?:e|es|ing|ement|ements|er|ers)\b|\bpolitical ads?\b|\bdisclaimers?\b|\bpaid for by\b|\bbroadcast(?:s|er|ers)?\b|\belectioneering\b|\bsponsor(?:s|ed|ship)?\b/gi },
  { topic: 'voter_contact', label: 'Voter contact', pattern: /\bvoter contact\b|\bcanvass(?:ing|er|ers)?\b|\brobocalls?\b|\bautomated (?:calls?|dialing)\b|\btext messages?\b|\btelephone\b|\bphone calls?\b|\bdoor-to-door\b|\bdo-not-call\b|\bvoter (?:files?|lists?|rolls?)\b|\bmailers?\b/gi },
  { topic: 'data_privacy', label: 'Data and privacy', pattern: /\bpersonal (?:data|information)\b|\bprivacy\b|\bconsent\b|\bdata protection\b|\bretention\b|\bopt[- ](?:out|in)\b|\bdata brokers?\b|\bbiometric\b|\bbreach(?:es)?\b/gi }
]

export interface TopicHit { topic: string, label: string, hits: number, terms: string[], provisions: number }

export function topicsOf (text: string, provisions: readonly Provision[]): TopicHit[] {
  return TOPICS.map(({ topic, label, pattern }) => {
    const found = matchesOf(text, pattern)
    return { topic, label, hits: found.length, terms: distinctCi(found.map(f => f.toLowerCase())), provisions: provisions.filter(p => matchesOf(p.text, pattern).length > 0).length }
  })
}

export interface Impact { score: number, level: 'low' | 'medium' | 'high', relevance: number, burden: number }

/**
 * relevance = 0 with no campaign topic, else min(1, 0.5 + 0.25 × (topics − 1));
 * burden = min(1, (obligations + prohibitions + deadlines + 2 × penalties + 0.5 × permissions) / 8);
 * score = relevance × (0.4 + 0.6 × burden); below 0.3 low, below 0.6 medium, otherwise high.
 */
export function impactOf (topics: readonly TopicHit[], counts: Record<ProvisionKind, number>, deadlines: number, penalties: number): Impact {
  const hit = topics.filter(t => t.hits > 0).length
  const relevance = hit === 0 ? 0 : Math.min(1, 0.5 + 0.25 * (hit - 1))
  const burden = Math.min(1, (counts.obligation + counts.prohibition + deadlines + 2 * penalties + 0.5 * counts.permission) / 8)
  const score = round(relevance * (0.4 + 0.6 * burden))
  return { score, level: score >= 0.6 ? 'high' : score >= 0.3 ? 'medium' : 'low', relevance: round(relevance), burden: round(burden) }
}

export interface RegulationAnalysis {
  sections: Array<{ heading: string, clauses: number }>
  clause_count: number
  obligations: Provision[]
  counts: Record<ProvisionKind, number>
  deadlines: Deadline[]
  penalties: Penalty[]
  parties: Party[]
  topics: TopicHit[]
  impact: Impact
}

export function analyzeRegulation (engine: LanguageEngine, text: string, today = new Date()): RegulationAnalysis {
  const sections = splitSections(text)
  const perSection = sections.map(section => splitLegalClauses(engine, [section]))
  const clauses = perSection.flat()
  const provisions = clauses.map(classifyClause).filter((p): p is Provision => p !== undefined)
  const deadlines = clauses.map(c => deadlineOf(c, today)).filter((d): d is Deadline => d !== undefined)
  const penalties = clauses.map(penaltyOf).filter((p): p is Penalty => p !== undefined)
  const counts: Record<ProvisionKind, number> = { obligation: 0, prohibition: 0, permission: 0 }
  for (const p of provisions) counts[p.kind]++
  const topics = topicsOf(text, provisions)
  return {
    sections: sections.map((s, i) => ({ heading: s.heading, clauses: perSection[i].length })),
    clause_count: clauses.length,
    obligations: provisions,
    counts,
    deadlines,
    penalties,
    parties: partiesOf(text, provisions),
    topics,
    impact: impactOf(topics, counts, deadlines.length, penalties.length)
  }
}
