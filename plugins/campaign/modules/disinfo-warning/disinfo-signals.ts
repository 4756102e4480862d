// The disinfo warning's method: weighted signals of manipulation (urgency phrases, absolutist words,
// shouting, exclamations), emotional intensity, unsourced statistics and claims the knowledge base
// contradicts, each with its evidence, summed into a risk score 0–1 and a level.
import type { LanguageEngine } from '../../language/engine.js'
import { DECREASES, INCREASES } from '../../language/opinion-lexicon.js'
import { cosine, mean, round, termCounts } from '../../language/text-stats.js'
import { distinctCi, matchesOf, words } from '../../text/text-cues.js'

export type SignalName = 'urgency_phrases' | 'absolutist_words' | 'all_caps' | 'exclamations' | 'emotional_intensity' | 'unsourced_statistics' | 'kb_contradictions'

/** Weights of the signals; they sum to 1, so the risk Σ weight × value is 0 to 1. */
export const WEIGHTS: Readonly<Record<SignalName, number>> = {
  urgency_phrases: 0.25,
  absolutist_words: 0.10,
  all_caps: 0.10,
  exclamations: 0.05,
  emotional_intensity: 0.15,
  unsourced_statistics: 0.15,
  kb_contradictions: 0.20
}

/** Risk below `medium` is low, below `high` medium, otherwise high. */
export const LEVELS = { medium: 0.3, high: 0.55 }

const GROUP: Readonly<Record<SignalName, string>> = {
  urgency_phrases: 'manipulation',
  absolutist_words: 'manipulation',
  all_caps: 'manipulation',
  exclamations: 'manipulation',
  emotional_intensity: 'emotion',
  unsourced_statistics: 'statistics',
  kb_contradictions: 'knowledge base'
}

/** Pressure to share, appeals to hidden truth, calls to distrust: each match is one hit. */
export const URGENCY_PHRASES = new RegExp([
  String.raw`\b(?:share|repost|spread|forward)\b[^.!?]{0,30}?\bbefore\b[^.!?]{0,30}?\b(?:deleted|removed|taken down|censored|banned|gone)\b`,
  String.raw`\bthey (?:don'?t|do not|won'?t|will not) (?:want you to|let you) (?:know|see|hear)\b`,
  String.raw`\bwhat (?:they|the media|the government|nobody) (?:are|is|aren'?t|isn'?t|won'?t|will) (?:not )?(?:telling|tell) you\b`,
  String.raw`\b(?:mainstream|legacy) media (?:won'?t|will not|refuses? to|is hiding)\b`,
  String.raw`\bwake up\b`, String.raw`\bopen your eyes\b`, String.raw`\bdo your own research\b`, String.raw`\bspread the word\b`,
  String.raw`\bshare (?:this|it) (?:now|everywhere|widely|with everyone)\b`, String.raw`\b(?:act|share|watch|read) (?:this )?now\b`,
  String.raw`\bbefore it'?s too late\b`, String.raw`\burgent(?:ly)?\b`, String.raw`\bbreaking\b`, String.raw`\bshocking\b`,
  String.raw`\b(?:banned|censored|deleted) (?:video|post|story|article)\b`, String.raw`\b100% (?:proof|proven|true|real)\b`
].join('|'), 'gi')

export const ABSOLUTIST_WORDS = new Set(['always', 'never', 'everyone', 'everybody', 'nobody', 'nothing', 'all', 'none', 'every',
  'completely', 'totally', 'absolutely', 'entirely', 'undeniable', 'undeniably', 'proven', 'guaranteed', 'definitely', 'certainly', 'forever'])

/** A statistic: a percentage, an amount, "N in/out of M", "N times", a number of three or more digits (years 1900–2099 aside). */
const STATISTIC = /[$€£]\s?\d[\d,.]*(?:\s?(?:million|billion|trillion|thousand|[kmb]n?)\b)?|\b\d[\d,.]*\s?(?:%|percent\b|per cent\b)|\b\d[\d,.]*\s(?:million|billion|trillion|thousand)\b|\b\d+\s(?:out of|in)\s(?:every\s)?\d+\b|\b\d[\d,.]*\s?times\b|\b\d{1,3}(?:,\d{3})+\b|\b\d{3,}\b/gi
const YEAR = /^(?:19|20)\d{2}$/
/** A cue that a sentence names where its figure comes from. */
export const SOURCE_CUE = /\baccording to\b|\bsources?\b|\bcited\b|\breport(?:s|ed)?\b|\bstud(?:y|ies)\b|\bsurvey(?:s|ed)?\b|\bpoll(?:s|ed)?\b|\bdata (?:from|by)\b|\bcensus\b|\bpublished\b|\bfigures? (?:from|by)\b|\bstatistics (?:from|by)\b|https?:\/\/|\bwww\./i
/** A negator negates the first content word after it ("were not hacked" → hacked). */
const NEGATORS = new Set(['not', 'no', 'never', 'none', 'nobody', 'nothing', 'neither', 'nor', 'cannot'])
/** A denial negates every term of its sentence ("the claim that … is false"). */
const DENIALS = new Set(['false', 'untrue', 'myth', 'hoax', 'debunked', 'baseless', 'unfounded'])
/** Skipped when looking for the negated word: auxiliaries, articles, prepositions, quantifiers and intensifiers. */
const SKIPPED = new Set(['be', 'been', 'being', 'is', 'are', 'was', 'were', 'am', 'do', 'does', 'did', 'have', 'has', 'had', 'a', 'an', 'the',
  'to', 'in', 'of', 'for', 'on', 'at', 'by', 'with', 'any', 'ever', 'all', 'so', 'very', 'really', 'even', 'still', 'yet', 'one', 'single', 'more', 'longer'])

/** The terms a sentence negates. */
export function negatedTerms (engine: LanguageEngine, sentence: string): Set<string> {
  const all = words(sentence).map(w => w.toLowerCase())
  const negated = new Set<string>()
  all.forEach((word, i) => {
    if (DENIALS.has(word)) for (const term of engine.terms(sentence)) negated.add(term)
    if (!NEGATORS.has(word) && !/n['’]t$/.test(word)) return
    const next = all.slice(i + 1).find(w => !SKIPPED.has(w) && engine.terms(w).length > 0)
    if (next !== undefined) for (const term of engine.terms(next)) negated.add(term)
  })
  return negated
}

/** A claim and a knowledge-base sentence are on the same topic at this cosine similarity (of their folded terms) or more. */
export const SAME_TOPIC = 0.3
/** Both polarities must reach this magnitude, with opposite signs, to count as opposite. */
export const OPPOSITE_POLARITY = 0.2
/** Claims checked against the knowledge base per text (the first sentences with 3+ content terms). */
export const MAX_CLAIMS = 20

export interface Signal {
  signal: SignalName
  group: string
  weight: number
  /** 0 to 1. */
  value: number
  /** weight × value. */
  contribution: number
  /** What was measured, in words. */
  detail: string
  /** The text that raised it. */
  evidence: string[]
}

export interface Contradiction {
  claim: string
  passage: string
  /** The passage's sentence that contradicts the claim (the closest on its topic that does). */
  sentence: string
  title: string
  document_id: string
  passage_index: number
  similarity: number
  reason: 'negation mismatch' | 'opposite direction' | 'opposite polarity'
}

/** What the knowledge base offers: kb.query's shape. */
export interface KbLike {
  query(text: string, limit: number): Array<{ document_id: string, title: string, source: string, passage: number, text: string }>
}

const signal = (name: SignalName, value: number, detail: string, evidence: string[]): Signal => {
  const v = round(Math.min(1, Math.max(0, value)))
  return { signal: name, group: GROUP[name], weight: WEIGHTS[name], value: v, contribution: round(WEIGHTS[name] * v), detail, evidence }
}

/** Words of three or more letters, all upper-case, that shout: five or more letters, or next to another such word (lone acronyms aside). */
export function shoutedWords (text: string): string[] {
  const all = words(text)
  const caps = all.map(w => /^\p{Lu}{3,}$/u.test(w.replace(/['’-]/g, '')))
  return all.filter((w, i) => caps[i] && (w.length >= 5 || caps[i - 1] === true || caps[i + 1] === true))
}

/** Whether a sentence carries an urgency phrase (it is pressure, not a claim to answer). */
export const isUrgent = (sentence: string): boolean => matchesOf(sentence, URGENCY_PHRASES).length > 0

export function statisticsIn (sentence: string): string[] {
  return matchesOf(sentence, STATISTIC).map(s => s.trim()).filter(s => !YEAR.test(s))
}

/** The claims of a text: sentences with at least three content terms. */
export function claimSentences (engine: LanguageEngine, sentences: readonly string[]): string[] {
  return sentences.filter(s => engine.terms(s).length >= 3)
}

/** A term folded for comparing a claim with a passage: a rise or a cut to one word ("raise", "hike" → increase), a plural to its singular ("taxes" → tax). */
export function foldTerm (term: string): string {
  if (INCREASES.has(term)) return 'increase'
  if (DECREASES.has(term)) return 'decrease'
  if (term.length <= 3 || /(?:ss|us|is)$/.test(term)) return term
  if (/ies$/.test(term)) return `${term.slice(0, -3)}y`
  if (/(?:x|z|ch|sh|ss)es$/.test(term)) return term.slice(0, -2)
  return term.endsWith('s') ? term.slice(0, -1) : term
}

/** A sentence's folded content terms (negators aside: they say how, not what). */
export const foldedTerms = (engine: LanguageEngine, sentence: string): string[] =>
  engine.terms(sentence).filter(t => !NEGATORS.has(t)).map(foldTerm)

/** The share (0 to 1) of a claim's distinct folded terms that a sentence holds. */
export function topicShare (engine: LanguageEngine, claim: string, sentence: string): number {
  const wanted = new Set(foldedTerms(engine, claim))
  const held = new Set(foldedTerms(engine, sentence))
  return wanted.size === 0 ? 0 : [...wanted].filter(t => held.has(t)).length / wanted.size
}

const DIRECTIONS = new Set(['increase', 'decrease'])

/** 1 when folded terms say something rises, −1 when it falls, 0 for neither or both (a negated rise or cut says neither). */
function direction (terms: readonly string[], negated: ReadonlySet<string>): number {
  const up = terms.includes('increase') && !negated.has('increase')
  const down = terms.includes('decrease') && !negated.has('decrease')
  return up === down ? 0 : up ? 1 : -1
}

/**
 * Whether a passage contradicts a claim: one of its sentences on the claim's topic (cosine of the
 * folded terms ≥ SAME_TOPIC; the closest that contradicts) holds a term of the claim negated where
 * the claim asserts it or the reverse ("No increase in property taxes is planned" against "Lopez will
 * raise property taxes"), moves the same thing the other way ("cut fares" against "raise fares"), or
 * both carry sentiment (|polarity| ≥ OPPOSITE_POLARITY) of opposite signs.
 */
export function contradicts (engine: LanguageEngine, claim: string, passage: string): Omit<Contradiction, 'claim' | 'passage' | 'title' | 'document_id' | 'passage_index'> | undefined {
  const claimTerms = foldedTerms(engine, claim)
  const claimCounts = termCounts(claimTerms)
  const negatedInClaim = new Set([...negatedTerms(engine, claim)].map(foldTerm))
  const polarity = engine.sentiment(claim).polarity
  const onTopic = engine.sentences(passage).map(sentence => ({ sentence, terms: foldedTerms(engine, sentence) }))
    .map(s => ({ ...s, similarity: round(cosine(claimCounts, termCounts(s.terms))) }))
    .filter(s => s.similarity >= SAME_TOPIC)
    .sort((a, b) => b.similarity - a.similarity)
  for (const { sentence, terms, similarity } of onTopic) {
    const shared = new Set(terms)
    const negatedInKb = new Set([...negatedTerms(engine, sentence)].map(foldTerm))
    if (claimTerms.some(t => shared.has(t) && negatedInClaim.has(t) !== negatedInKb.has(t))) return { sentence, similarity, reason: 'negation mismatch' }
    if (claimTerms.some(t => !DIRECTIONS.has(t) && shared.has(t)) && direction(claimTerms, negatedInClaim) * direction(terms, negatedInKb) === -1) {
      return { sentence, similarity, reason: 'opposite direction' }
    }
    const b = engine.sentiment(sentence).polarity
    if (Math.abs(polarity) >= OPPOSITE_POLARITY && Math.abs(b) >= OPPOSITE_POLARITY && Math.sign(polarity) !== Math.sign(b)) return { sentence, similarity, reason: 'opposite polarity' }
  }
  return undefined
}

export function findContradictions (engine: LanguageEngine, kb: KbLike, claims: readonly string[]): Contradiction[] {
  const found: Contradiction[] = []
  for (const claim of claims.slice(0, MAX_CLAIMS)) {
    for (const hit of kb.query(claim, 3)) {
      const c = contradicts(engine, claim, hit.text)
      if (c === undefined) continue
      found.push({ claim, passage: hit.text, title: hit.title, document_id: hit.document_id, passage_index: hit.passage, ...c })
      break
    }
  }
  return found
}

export interface DisinfoAnalysis {
  risk: number
  level: 'low' | 'medium' | 'high'
  signals: Signal[]
  contradictions: Contradiction[]
  /** The sentences a counter-message should answer: contradicted claims, then unsourced figures, then other claims (at most 3). */
  claims: string[]
}

export function analyzeDisinfo (engine: LanguageEngine, kb: KbLike, text: string): DisinfoAnalysis {
  const sentences = engine.sentences(text)
  const all = words(text)
  const count = Math.max(1, all.length)
  const urgency = matchesOf(text, URGENCY_PHRASES)
  const absolutist = all.filter(w => ABSOLUTIST_WORDS.has(w.toLowerCase()))
  const shouted = shoutedWords(text)
  const exclamations = (text.match(/!/g) ?? []).length
  const moods = sentences.map(s => engine.sentiment(s))
  const intensity = mean(moods.map(m => Math.abs(m.polarity)))
  const withFigures = sentences.map(s => ({ sentence: s, figures: statisticsIn(s) })).filter(s => s.figures.length > 0)
  const unsourced = withFigures.filter(s => !SOURCE_CUE.test(s.sentence))
  const claims = claimSentences(engine, sentences)
  const contradictions = findContradictions(engine, kb, claims)
  const absolutistDensity = absolutist.length / count
  const shoutedRatio = shouted.length / count
  const perSentence = exclamations / Math.max(1, sentences.length)
  const signals = [
    signal('urgency_phrases', urgency.length / 2, `${urgency.length} urgency or hidden-truth phrase(s); value = hits / 2`, distinctCi(urgency)),
    signal('absolutist_words', absolutistDensity / 0.06, `${absolutist.length} absolutist word(s) in ${all.length} words (${round(absolutistDensity * 100, 1)}%); value = density / 6%`, distinctCi(absolutist)),
    signal('all_caps', shoutedRatio / 0.15, `${shouted.length} shouted word(s) in ${all.length} (${round(shoutedRatio * 100, 1)}%); value = ratio / 15%`, distinctCi(shouted)),
    signal('exclamations', perSentence / 0.5, `${exclamations} exclamation mark(s) in ${sentences.length} sentence(s); value = per sentence / 0.5`, sentences.filter(s => s.includes('!'))),
    signal('emotional_intensity', intensity / 0.6, `mean |polarity| over sentences ${round(intensity)}; value = mean / 0.6`,
      distinctCi(moods.flatMap(m => [...m.positive_words, ...m.negative_words])).slice(0, 12)),
    signal('unsourced_statistics', unsourced.length / 2, `${unsourced.length} of ${withFigures.length} sentence(s) with figures name no source; value = unsourced / 2`, unsourced.map(s => s.sentence)),
    signal('kb_contradictions', contradictions.length / 2, `${contradictions.length} of ${Math.min(claims.length, MAX_CLAIMS)} claim(s) contradicted by the knowledge base; value = contradicted / 2`,
      contradictions.map(c => `${c.claim} ↔ ${c.sentence} (${c.title}, ${c.reason})`))
  ]
  const risk = round(signals.reduce((sum, s) => sum + s.weight * s.value, 0))
  const answerable = [...contradictions.map(c => c.claim), ...unsourced.map(s => s.sentence), ...claims.filter(s => !isUrgent(s))]
  return {
    risk,
    level: risk >= LEVELS.high ? 'high' : risk >= LEVELS.medium ? 'medium' : 'low',
    signals,
    contradictions,
    claims: [...new Set(answerable)].slice(0, 3)
  }
}
