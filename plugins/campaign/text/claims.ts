// Claims set against a text: the terms a sentence negates, terms folded for comparison (a rise or a
// cut to one word, plurals to singulars), the share of a claim's terms a sentence holds, and whether a
// passage contradicts a claim (a negation mismatch, the opposite direction, or opposite sentiment).
import type { LanguageEngine } from '../language/engine.js'
import { DECREASES, INCREASES } from '../language/opinion-lexicon.js'
import { cosine, round, termCounts } from '../language/text-stats.js'
import { words } from './text-cues.js'

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
