// Coaching feedback on a candidate's answer, by documented rules: length and speaking time, hedging and
// filler words, tone, whether it uses the question's key terms, and a cited knowledge-base fact that
// could strengthen it; each finding costs points off 100 and gives a tip.
import { type LanguageEngine, round, RELEVANT, type KbLike, foldTerm, distinctCi, escapeRegExp, FUNCTION_WORDS, matchesOf, words } from '../../module-kit.js'

/** Speaking rate used for the speaking time. */
export const WORDS_PER_MINUTE = 150
/** An answer under SHORT_WORDS (20 s) is short, over LONG_WORDS (90 s) long. */
export const SHORT_WORDS = 50
export const LONG_WORDS = 225
/** Hedges or fillers per 100 words from which they are flagged. */
export const HEDGE_RATE = 2
export const FILLER_RATE = 1
/** Polarity at or below which the tone is flagged as mostly attack. */
export const NEGATIVE_TONE = -0.5
/** A knowledge-base sentence this similar to the answer is already in it. */
export const ALREADY_SAID = 0.8
/** Share of the question's key terms an answer must use to count as answering it. */
export const ANSWERS_COVERAGE = 0.5

export const HEDGES = ['maybe', 'perhaps', 'possibly', 'probably', 'i think', 'i believe', 'i guess', 'i feel like', 'i suppose', 'sort of',
  'kind of', 'somewhat', 'might', 'could be', 'try to', 'trying to', 'hopefully', 'it seems', 'arguably', 'more or less', 'in a way',
  'to some extent', 'not sure', 'if possible']
/** "like" counts as a filler only before a comma ("it was, like, huge"). */
export const FILLERS = ['um', 'umm', 'uh', 'uhh', 'er', 'erm', 'ah', 'hmm', 'you know', 'i mean', 'basically', 'actually', 'literally',
  'so yeah', 'anyway', 'like,']

const phrasePattern = (phrases: readonly string[]): RegExp =>
  new RegExp(`(?<![\\p{L}\\p{N}'’])(?:${[...phrases].sort((a, b) => b.length - a.length).map(p => escapeRegExp(p).replace(/ /g, '\\s+').replace(/,$/, '(?=\\s*,)')).join('|')})(?![\\p{L}\\p{N}'’])`, 'giu')
const HEDGE_PATTERN = phrasePattern(HEDGES)
const FILLER_PATTERN = phrasePattern(FILLERS)

/** Question words and auxiliaries that are never a key term of a question. */
const QUESTION_WORDS = new Set(['what', 'how', 'why', 'when', 'where', 'which', 'who', 'whom', 'would', 'will', 'should', 'could', 'does', 'did',
  'you', 'your', 'yours', 'plan', 'think', 'tell', 'explain', 'voters', 'people', 'going'])

export interface WordCount { count: number, per_100_words: number, found: string[], flagged: boolean }

export interface CitedFact { cite: number, document_id: string, title: string, source: string, passage: number, sentence: string, relevance: number }

export interface CoachingFeedback {
  length: { words: number, seconds: number, verdict: 'short' | 'good' | 'long' }
  hedges: WordCount
  fillers: WordCount
  tone: { polarity: number, label: string, flagged: boolean }
  key_terms: { question: string, terms: string[], used: string[], missing: string[], coverage: number, answers: boolean } | null
  fact: CitedFact | null
  /** Points each finding cost. */
  points_lost: { length: number, hedges: number, fillers: number, key_terms: number, tone: number }
  score: number
  tips: string[]
}

function counted (text: string, pattern: RegExp, total: number, rate: number): WordCount {
  const found = matchesOf(text, pattern).map(m => m.toLowerCase().replace(/\s+/g, ' '))
  const per100 = round(found.length * 100 / Math.max(1, total), 1)
  return { count: found.length, per_100_words: per100, found: distinctCi(found), flagged: found.length > 0 && per100 >= rate }
}

/** The question's key terms: content terms of three letters or more, folded, without question words and function words. */
export function keyTerms (engine: LanguageEngine, question: string): string[] {
  return [...new Set(engine.terms(question).filter(t => t.length >= 3 && !/^\d+$/.test(t) && !QUESTION_WORDS.has(t) && !FUNCTION_WORDS.has(t)).map(foldTerm))]
}

/**
 * A fact that could strengthen the answer: among the knowledge-base passages retrieved for the question
 * and the answer, the sentence with the highest relevance (the larger cosine similarity to the question
 * or to the answer, at least RELEVANT) × 1.5 when it holds a figure, leaving out sentences the answer
 * already makes (similarity to the answer 0.8 or more).
 */
export function strengtheningFact (engine: LanguageEngine, kb: KbLike, question: string, answer: string): CitedFact | null {
  const query = `${question} ${answer}`.trim()
  let best: (Omit<CitedFact, 'cite'> & { score: number }) | undefined
  for (const hit of kb.query(query, 5)) {
    for (const sentence of engine.sentences(hit.text).map(s => s.trim())) {
      const relevance = Math.max(question.trim() === '' ? 0 : engine.similarity(question, sentence), engine.similarity(answer, sentence))
      if (relevance < RELEVANT || engine.similarity(answer, sentence) >= ALREADY_SAID) continue
      const score = relevance * (/\d/.test(sentence) ? 1.5 : 1)
      if (best === undefined || score > best.score) {
        best = { document_id: hit.document_id, title: hit.title, source: hit.source, passage: hit.passage, sentence, relevance: round(relevance), score }
      }
    }
  }
  if (best === undefined) return null
  const { score: _score, ...fact } = best
  return { cite: 1, ...fact }
}

/** Points off 100 per finding: length −15, each hedge or filler −5 (at most −20 each), key terms −30 × share missing, attack tone −10. */
export function coachAnswer (engine: LanguageEngine, kb: KbLike, answer: string, question: string): CoachingFeedback {
  const total = words(answer).length
  const seconds = Math.round(total * 60 / WORDS_PER_MINUTE)
  const verdict = total < SHORT_WORDS ? 'short' : total > LONG_WORDS ? 'long' : 'good'
  const hedges = counted(answer, HEDGE_PATTERN, total, HEDGE_RATE)
  const fillers = counted(answer, FILLER_PATTERN, total, FILLER_RATE)
  const sentiment = engine.sentiment(answer)
  const tone = { polarity: round(sentiment.polarity), label: sentiment.label, flagged: sentiment.polarity <= NEGATIVE_TONE }
  let keys: CoachingFeedback['key_terms'] = null
  const terms = question.trim() === '' ? [] : keyTerms(engine, question)
  if (terms.length > 0) {
    const said = new Set(engine.terms(answer).map(foldTerm))
    const used = terms.filter(t => said.has(t))
    const coverage = round(used.length / terms.length)
    keys = { question: question.trim(), terms, used, missing: terms.filter(t => !said.has(t)), coverage, answers: coverage >= ANSWERS_COVERAGE }
  }
  const fact = strengtheningFact(engine, kb, question, answer)

  const lost = {
    length: verdict === 'good' ? 0 : 15,
    hedges: Math.min(20, 5 * hedges.count),
    fillers: Math.min(20, 5 * fillers.count),
    key_terms: keys === null ? 0 : Math.round(30 * (1 - keys.coverage)),
    tone: tone.flagged ? 10 : 0
  }
  const tips: string[] = []
  if (verdict !== 'good') {
    tips.push(verdict === 'short'
      ? `At ${total} words (about ${seconds} s) the answer is short: give one reason and one example (aim for ${SHORT_WORDS}–${LONG_WORDS} words, 20–90 s).`
      : `At ${total} words (about ${seconds} s) the answer runs long: keep it under 90 seconds (${LONG_WORDS} words) and lead with the point.`)
  }
  if (hedges.flagged) tips.push(`Drop the hedges (${hedges.found.join(', ')}): say what you will do.`)
  if (fillers.flagged) tips.push(`Cut the filler words (${fillers.found.join(', ')}); pause instead.`)
  if (keys !== null && !keys.answers) tips.push(`The answer does not use the question's key terms (${keys.missing.join(', ')}): answer the question asked before pivoting.`)
  if (tone.flagged) tips.push('The tone is mostly attack: pair the criticism with what you propose.')
  if (fact !== null) tips.push(`Strengthen it with a fact: ${fact.sentence} [1]`)
  const score = Math.max(0, 100 - Object.values(lost).reduce((sum, x) => sum + x, 0))
  return { length: { words: total, seconds, verdict }, hedges, fillers, tone, key_terms: keys, fact, points_lost: lost, score, tips }
}
