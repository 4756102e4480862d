// Stances of speakers (coalition groups, actors) on the topics they share, for the coalition detector
// and the faction mapper: topics are content terms and noun-phrase bigrams that two or more speakers
// mention; a speaker's stance on a topic is the mean opinion polarity of its clauses mentioning it.
import type { LanguageEngine } from '../language/engine.js'
import { mean, round } from '../language/text-stats.js'

export interface Speaker { name: string, statements: readonly string[] }

/** A clause of a statement: where a topic is looked for and an opinion measured. */
export interface Clause {
  text: string
  /** The whole sentence the clause belongs to (quoted as evidence). */
  sentence: string
  /** The clause's content terms, folded (`foldTerm`), in text order. */
  terms: string[]
  /** Opinion polarity of the clause in (−1, 1): `opinionPolarity`; 0 when it holds no opinion word. */
  polarity: number
}

export interface Topic {
  topic: string
  terms: string[]
  /** Speakers that mention the topic. */
  speakers: number
  /** Clauses, over all speakers, that mention it. */
  mentions: number
}

export interface Position {
  /** Mean polarity of the speaker's opinionated clauses mentioning the topic; 0 when none is. */
  stance: number
  /** Clauses mentioning the topic, and how many of them hold an opinion (polarity ≠ 0). */
  clauses: Clause[]
  opinionated: number
}

export interface StanceTable {
  speakers: Array<{ name: string, clauses: Clause[] }>
  /** Ranked as `stanceTable` says: by speakers, mentions, phrases first, nouns first, name. */
  topics: Topic[]
  /** speaker name → topic → position; only where the speaker mentions the topic. */
  positions: Map<string, Map<string, Position>>
}

/** Most topics a table keeps. */
export const MAX_TOPICS = 40
/** Fewest speakers that must mention a candidate for it to be a topic. */
export const MIN_TOPIC_SPEAKERS = 2
/** |stance| below this is neutral: its sign is 0. */
export const NEUTRAL_BAND = 0.1

/** Words that never name a topic: auxiliaries, pronouns, quantifiers and reporting verbs the tokenizer keeps. */
const GENERIC = new Set(('not no nor do does did done don doesn didn won can cannot could would should must shall may might very also just only ' +
  'all any some more most much many such than then so too up out about into over under again there here if one two us me my i him ' +
  'been being am were has had having get gets got make makes made say says said think thinks believe believes want wants need needs ' +
  'know see way ways thing things lot lots year years time times people everyone everybody someone anyone members member today now ' +
  'let keep keeps going goes go like well yes new own other others every each why but because although though whereas while yet unlike that ' +
  'those these position view views stance').split(' '))

/** A crude plural fold, applied alike to text and topics: policies → policy, taxes → tax, wages → wage. */
export function foldTerm (term: string): string {
  if (term.length >= 5 && term.endsWith('ies')) return `${term.slice(0, -3)}y`
  if (term.length >= 5 && /(?:sses|xes|ches|shes|zes)$/.test(term)) return term.slice(0, -2)
  if (term.length >= 4 && term.endsWith('s') && !/(?:ss|us|is)$/.test(term)) return term.slice(0, -1)
  return term
}

/** The opinion polarity of a clause or sentence: the engine's (its campaign lexicon holds the stance words, "oppose", "unaffordable"…). */
export const opinionPolarity = (engine: LanguageEngine, sentence: string): number => engine.sentiment(sentence).polarity

/** −1, 0 or 1: the sign of a stance outside the neutral band. */
export const stanceSign = (stance: number): -1 | 0 | 1 => stance >= NEUTRAL_BAND ? 1 : stance <= -NEUTRAL_BAND ? -1 : 0

/** Whether `terms` holds `sequence` as consecutive terms. */
export function containsSequence (terms: readonly string[], sequence: readonly string[]): boolean {
  for (let i = 0; i + sequence.length <= terms.length; i++) if (sequence.every((term, j) => terms[i + j] === term)) return true
  return false
}

/** Conjunctions that start a new clause (the break falls before them, a comma before them included). */
const CLAUSE_BREAK = /\s*;\s*|,?\s+(?=(?:but|because|although|though|whereas|while|yet|unlike|so that)\s)/i
/** After "so" these make it an intensifier ("so much"), not a conjunction. */
const DEGREE = new Set(['much', 'many', 'far', 'long', 'little', 'few', 'often', 'very', 'too', 'called', 'on', 'forth', 'that'])

/**
 * A sentence's clauses: broken at semicolons, before but / because / although / though / whereas /
 * while / yet / unlike / so that, and before "so" when the next word is neither an opinion word nor
 * a degree word ("so workers can…" breaks, "so unfair" and "so much" do not).
 */
export function splitClauses (engine: LanguageEngine, sentence: string): string[] {
  return sentence.split(CLAUSE_BREAK).flatMap(part => {
    const pieces: string[] = []
    let start = 0
    for (const match of part.matchAll(/\s+so\s+([\p{L}']+)/giu)) {
      const next = match[1].toLowerCase()
      if (DEGREE.has(next) || engine.sentiment(next).score !== 0) continue
      pieces.push(part.slice(start, match.index))
      start = match.index
    }
    pieces.push(part.slice(start))
    return pieces
  }).map(piece => piece.trim()).filter(piece => /[\p{L}\p{N}]/u.test(piece))
}

/** The clauses of the statements' sentences, each with folded terms and opinion polarity. */
export function analyseClauses (engine: LanguageEngine, statements: readonly string[]): Clause[] {
  return statements.flatMap(statement => {
    const found = engine.sentences(statement).map(s => s.trim()).filter(s => s !== '')
    return (found.length > 0 ? found : [statement.trim()]).flatMap(sentence => splitClauses(engine, sentence).map(clause => ({
      text: clause,
      sentence,
      terms: engine.terms(clause).map(foldTerm),
      polarity: opinionPolarity(engine, clause)
    })))
  })
}

/** The position the clauses mentioning a topic take: the mean polarity of the opinionated ones, 0 when none is. */
export function positionOf (clauses: Clause[]): Position {
  const opinions = clauses.map(c => c.polarity).filter(p => p !== 0)
  return { stance: round(mean(opinions)), clauses, opinionated: opinions.length }
}

/** Whether a term can name a topic: three or more characters, not a number, not generic, not a name, not an opinion word (memoised). */
function topicalTerms (engine: LanguageEngine, names: ReadonlySet<string>): (term: string) => boolean {
  const known = new Map<string, boolean>()
  return term => {
    let topical = known.get(term)
    if (topical === undefined) {
      topical = term.length >= 3 && !/^\d/.test(term) && !GENERIC.has(term) && !names.has(term) && engine.sentiment(term).score === 0
      known.set(term, topical)
    }
    return topical
  }
}

interface Candidate { terms: string[], nominal: boolean }

/**
 * Candidate topics of one speaker: its topical terms, and adjacent topical term pairs inside its noun
 * phrases (engine key phrases); `nominal` marks those seen inside a noun phrase.
 */
function candidates (engine: LanguageEngine, speaker: Speaker, clauses: readonly Clause[], topical: (term: string) => boolean): Map<string, Candidate> {
  const found = new Map<string, Candidate>()
  for (const clause of clauses) for (const term of clause.terms) if (topical(term)) found.set(term, { terms: [term], nominal: false })
  for (const { term: phrase } of engine.keyPhrases(speaker.statements.join('\n'), 50)) {
    const terms = engine.terms(phrase).map(foldTerm).filter(topical)
    for (const term of terms) found.set(term, { terms: [term], nominal: true })
    for (let i = 0; i + 1 < terms.length; i++) found.set(`${terms[i]} ${terms[i + 1]}`, { terms: [terms[i], terms[i + 1]], nominal: true })
  }
  return found
}

/**
 * The stance table of `speakers` (names distinct). A candidate (see `candidates`) becomes a topic when
 * at least MIN_TOPIC_SPEAKERS speakers have a clause holding its terms consecutively. Ranked by
 * speakers, mentions, terms (phrases first), then the number of speakers in whose noun phrases it
 * appears (nouns before verbs), then alphabetically, a topic is dropped when a topic ranked before it
 * is mentioned by exactly the same clauses, or contains all its terms and is mentioned by every
 * clause that mentions it ("wage" inside "minimum wage"). At most `maxTopics` are kept.
 */
export function stanceTable (engine: LanguageEngine, speakers: readonly Speaker[], maxTopics = MAX_TOPICS): StanceTable {
  const topical = topicalTerms(engine, new Set(speakers.flatMap(s => engine.terms(s.name).map(foldTerm))))
  const analysed = speakers.map(speaker => ({ name: speaker.name, clauses: analyseClauses(engine, speaker.statements) }))
  // Where each term occurs: [speaker, clause] pairs, so that a candidate is looked for only where its first term is.
  const postings = new Map<string, Array<[number, number]>>()
  analysed.forEach((speaker, s) => speaker.clauses.forEach((clause, i) => {
    for (const term of new Set(clause.terms)) {
      const found = postings.get(term)
      if (found === undefined) postings.set(term, [[s, i]])
      else found.push([s, i])
    }
  }))
  const pool = new Map<string, { terms: string[], nominal: number }>()
  speakers.forEach((speaker, i) => {
    for (const [topic, { terms, nominal }] of candidates(engine, speaker, analysed[i].clauses, topical)) {
      pool.set(topic, { terms, nominal: (pool.get(topic)?.nominal ?? 0) + (nominal ? 1 : 0) })
    }
  })

  const ranked = [...pool].map(([topic, { terms, nominal }]) => {
    const mentions = new Set<string>()
    const mentioning = new Set<number>()
    for (const [s, i] of postings.get(terms[0]) ?? []) {
      if (containsSequence(analysed[s].clauses[i].terms, terms)) { mentions.add(`${s}:${i}`); mentioning.add(s) }
    }
    return { topic, terms, nominal, speakers: mentioning.size, mentions }
  }).filter(t => t.speakers >= MIN_TOPIC_SPEAKERS)
    .sort((a, b) => b.speakers - a.speakers || b.mentions.size - a.mentions.size || b.terms.length - a.terms.length || b.nominal - a.nominal || a.topic.localeCompare(b.topic))

  const kept: typeof ranked = []
  for (const candidate of ranked) {
    if (kept.length === maxTopics) break
    const coveredBy = (other: typeof candidate): boolean => [...candidate.mentions].every(m => other.mentions.has(m))
    const redundant = kept.some(other => coveredBy(other) && (other.mentions.size === candidate.mentions.size || candidate.terms.every(term => other.terms.includes(term))))
    if (!redundant) kept.push(candidate)
  }

  const positions = new Map<string, Map<string, Position>>()
  for (const speaker of analysed) {
    const byTopic = new Map<string, Position>()
    for (const topic of kept) {
      const clauses = speaker.clauses.filter(c => containsSequence(c.terms, topic.terms))
      if (clauses.length > 0) byTopic.set(topic.topic, positionOf(clauses))
    }
    positions.set(speaker.name, byTopic)
  }
  return {
    speakers: analysed,
    topics: kept.map(t => ({ topic: t.topic, terms: t.terms, speakers: t.speakers, mentions: t.mentions.size })),
    positions
  }
}

/** Up to `count` distinct sentences that best show a position: the most polar in its direction first. */
export function evidence (position: Position, count = 2): string[] {
  const direction = stanceSign(position.stance)
  const ordered = position.clauses.map((clause, index) => ({ clause, index }))
    .sort((a, b) => (direction === 0 ? Math.abs(a.clause.polarity) - Math.abs(b.clause.polarity) : direction * (b.clause.polarity - a.clause.polarity)) || a.index - b.index)
  return [...new Set(ordered.map(({ clause }) => clause.sentence))].slice(0, count)
}
