// Opposition research's method: an opponent's statements grouped by the topics two or more of them
// share, with the stance of each (stance.ts, each statement a speaker of its own), the rest by issue of
// the lexicon; and contradictions: two statements on one topic with opposite stances or a negation mismatch.
import { type LanguageEngine, mean, round, negatedTerms, findIssues, evidence, stanceSign, stanceTable, type Clause, type Position } from '../../module-kit.js'

export interface Statement {
  statement_id: string
  opponent: string
  /** The opponent's name folded (lower case, single spaces): statements of one opponent share it. */
  opponent_key: string
  text: string
  /** YYYY-MM-DD, or null when not given. */
  said_on: string | null
  source: string
  added_by: string
  added_at: string
}

export const opponentKey = (name: string): string => name.trim().replace(/\s+/g, ' ').toLowerCase()
export const sameText = (a: string, b: string): boolean => a.trim().replace(/\s+/g, ' ').toLowerCase() === b.trim().replace(/\s+/g, ' ').toLowerCase()

/** A negation mismatch counts as this strength (as opposite stances of ±0.5 would). */
export const NEGATION_STRENGTH = 0.5
/** A topic of one term weighs this much against a two-term topic (1). */
export const SINGLE_TERM_WEIGHT = 0.8
/** Statements listed per topic, contradictions in a briefing. */
export const STATEMENTS_PER_TOPIC = 5

export type TopicLabel = 'supports' | 'opposes' | 'shifting' | 'neutral'

export interface Quoted {
  statement_id: string
  said_on: string | null
  source: string
  /** The statement's stance on the topic (mean opinion polarity of its clauses on it). */
  stance: number
  /** The statement's sentence that best shows it. */
  quote: string
}

export interface OpponentTopic { topic: string, terms: string[], stance: number, label: TopicLabel, statements: Quoted[] }

export interface Contradiction {
  contradiction_id: string
  topic: string
  /** Every topic the two statements contradict each other on, strongest first. */
  topics: string[]
  strength: number
  reasons: Array<'opposite stance' | 'negation mismatch'>
  earlier: Quoted
  later: Quoted
}

export interface StatementAnalysis {
  topics: OpponentTopic[]
  /** Statements on no shared topic, by issue of the lexicon ("other" when none). */
  other: Array<{ issue: string, statements: Quoted[] }>
  contradictions: Contradiction[]
}

/** Oldest first: by the day said (undated ones last), then by when they were added. */
export const chronological = (a: Statement, b: Statement): number =>
  (a.said_on ?? '9999').localeCompare(b.said_on ?? '9999') || a.added_at.localeCompare(b.added_at) || a.statement_id.localeCompare(b.statement_id)

/** How a statement is cited in sources. */
export const statementLine = (s: Pick<Statement, 'statement_id' | 'source' | 'said_on'>): string =>
  `statement ${s.statement_id} (${s.source === '' ? 'no source' : s.source}, ${s.said_on ?? 'date unknown'})`

const quoted = (s: Statement, position: Position | undefined): Quoted =>
  ({ statement_id: s.statement_id, said_on: s.said_on, source: s.source, stance: position?.stance ?? 0, quote: position === undefined ? s.text.trim() : evidence(position, 1)[0] ?? s.text.trim() })

function labelOf (stances: readonly number[]): TopicLabel {
  const signs = new Set(stances.map(stanceSign))
  if (signs.has(1) && signs.has(-1)) return 'shifting'
  return signs.has(1) ? 'supports' : signs.has(-1) ? 'opposes' : 'neutral'
}

/** Whether a term both clauses hold is negated in one and not in the other. */
function negationMismatch (engine: LanguageEngine, a: readonly Clause[], b: readonly Clause[]): boolean {
  return a.some(ca => b.some(cb => {
    const inB = new Set(engine.terms(cb.text))
    const [negA, negB] = [negatedTerms(engine, ca.text), negatedTerms(engine, cb.text)]
    return engine.terms(ca.text).some(t => inB.has(t) && negA.has(t) !== negB.has(t))
  }))
}

/**
 * The statements' topics (a statement is a speaker of the stance table, so a topic is a term or phrase
 * two or more statements mention), the others by issue, and the contradictions: for every topic and two
 * statements on it (the earlier first), strength = max(|stance₁ − stance₂| / 2 when their signs are
 * opposite, NEGATION_STRENGTH on a negation mismatch) × (1 for two-term topics, SINGLE_TERM_WEIGHT for
 * one term), rounded to 3 decimals; one entry per pair of statements, on its strongest topic.
 */
export function analyseStatements (engine: LanguageEngine, statements: readonly Statement[]): StatementAnalysis {
  const ordered = [...statements].sort(chronological)
  const nameOf = (s: Statement): string => `${s.opponent} ${s.statement_id}`
  const table = stanceTable(engine, ordered.map(s => ({ name: nameOf(s), statements: [s.text] })))
  const placed = new Set<string>()
  const pairs = new Map<string, Omit<Contradiction, 'topics'> & { topics: Array<{ topic: string, strength: number }> }>()
  const topics = table.topics.map(topic => {
    const on = ordered.flatMap(s => {
      const position = table.positions.get(nameOf(s))?.get(topic.topic)
      return position === undefined ? [] : [{ s, position }]
    })
    on.forEach(({ s }) => placed.add(s.statement_id))
    const weight = topic.terms.length >= 2 ? 1 : SINGLE_TERM_WEIGHT
    on.forEach((a, i) => on.slice(i + 1).forEach(b => {
      const reasons: Contradiction['reasons'] = []
      let strength = 0
      if (stanceSign(a.position.stance) * stanceSign(b.position.stance) === -1) {
        reasons.push('opposite stance')
        strength = Math.abs(a.position.stance - b.position.stance) / 2
      }
      if (negationMismatch(engine, a.position.clauses, b.position.clauses)) {
        reasons.push('negation mismatch')
        strength = Math.max(strength, NEGATION_STRENGTH)
      }
      if (reasons.length === 0) return
      strength = round(strength * weight)
      const key = `${a.s.statement_id}~${b.s.statement_id}`
      const found = pairs.get(key)
      if (found === undefined || found.strength < strength) {
        pairs.set(key, { contradiction_id: key, topic: topic.topic, strength, reasons, earlier: quoted(a.s, a.position), later: quoted(b.s, b.position), topics: [...(found?.topics ?? []), { topic: topic.topic, strength }] })
      } else {
        found.topics.push({ topic: topic.topic, strength })
      }
    }))
    const stances = on.map(x => x.position.stance)
    const opinions = on.filter(x => x.position.opinionated > 0).map(x => x.position.stance)
    return { topic: topic.topic, terms: topic.terms, stance: round(mean(opinions)), label: labelOf(stances), statements: on.slice(-STATEMENTS_PER_TOPIC).map(x => quoted(x.s, x.position)) }
  })
  const byIssue = new Map<string, Quoted[]>()
  for (const s of ordered.filter(s => !placed.has(s.statement_id))) {
    const issue = findIssues(s.text)[0]?.issue ?? 'other'
    byIssue.set(issue, [...(byIssue.get(issue) ?? []), quoted(s, undefined)])
  }
  const contradictions = [...pairs.values()].map(c => ({ ...c, topics: c.topics.sort((a, b) => b.strength - a.strength).map(t => t.topic) }))
    .sort((a, b) => b.strength - a.strength || (b.later.said_on ?? '').localeCompare(a.later.said_on ?? '') || a.contradiction_id.localeCompare(b.contradiction_id))
  return {
    topics,
    other: [...byIssue].map(([issue, quotes]) => ({ issue, statements: quotes })).sort((a, b) => Number(a.issue === 'other') - Number(b.issue === 'other') || a.issue.localeCompare(b.issue)),
    contradictions
  }
}
