// The disinfo warning's method: weighted signals of manipulation (urgency phrases, absolutist words,
// shouting, exclamations), emotional intensity, unsourced statistics and claims the knowledge base
// contradicts, each with its evidence, summed into a risk score 0–1 and a level.
import { type LanguageEngine, mean, round, type KbLike, contradicts, type Contradiction, distinctCi, matchesOf, words } from '../../module-kit.js'

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
