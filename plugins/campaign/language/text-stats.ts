// Engine-independent text arithmetic: term counts, cosine similarity, ranked terms, and the
// centrality of sentences used for extractive summaries.
import { tokenize } from '../text/bm25.js'
import type { RankedTerm, SummarySentence } from './engine.js'

export function termCounts (terms: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>()
  for (const term of terms) counts.set(term, (counts.get(term) ?? 0) + 1)
  return counts
}

export function cosine (a: ReadonlyMap<string, number>, b: ReadonlyMap<string, number>): number {
  let dot = 0
  let normA = 0
  let normB = 0
  for (const [term, x] of a) {
    normA += x * x
    dot += x * (b.get(term) ?? 0)
  }
  for (const y of b.values()) normB += y * y
  return normA === 0 || normB === 0 ? 0 : dot / Math.sqrt(normA * normB)
}

/** Terms of at least three characters that are not numbers, by count × (1 + ln length), ties by term. */
export function rankTerms (terms: readonly string[], limit: number): RankedTerm[] {
  return [...termCounts(terms.filter(t => t.length >= 3 && !/^\d+$/.test(t)))]
    .map(([term, count]) => ({ term, count, weight: round(count * (1 + Math.log(term.length))) }))
    .sort((a, b) => b.weight - a.weight || a.term.localeCompare(b.term))
    .slice(0, limit)
}

/**
 * Degree centrality over cosine similarity: each sentence scores Σ over the other sentences of the
 * cosine of their term-count vectors, computed in one pass as û·C − 1, with û the sentence's unit
 * vector and C the sum of all unit vectors. The best `count` come back in text order; ties go to
 * the earlier sentence.
 */
export function centralSentences (sentences: readonly string[], count: number): SummarySentence[] {
  const units = sentences.map(s => {
    const counts = termCounts(tokenize(s))
    const norm = Math.sqrt([...counts.values()].reduce((sum, x) => sum + x * x, 0))
    for (const [term, x] of counts) counts.set(term, x / norm)
    return counts
  })
  const centroid = new Map<string, number>()
  for (const unit of units) for (const [term, x] of unit) centroid.set(term, (centroid.get(term) ?? 0) + x)
  const scored = sentences.map((text, index) => {
    let dot = 0
    for (const [term, x] of units[index]) dot += x * (centroid.get(term) as number)
    return { index, text, score: units[index].size === 0 ? 0 : round(dot - 1) }
  })
  return [...scored].sort((a, b) => b.score - a.score || a.index - b.index).slice(0, count).sort((a, b) => a.index - b.index)
}

export const mean = (xs: readonly number[]): number => xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length

export function standardDeviation (xs: readonly number[]): number {
  const m = mean(xs)
  return Math.sqrt(mean(xs.map(x => (x - m) ** 2)))
}

/** An opinion score bounded to (−1, 1): score / √(score² + 15), VADER's normalisation, rounded to 3 decimals. */
export const polarityOf = (score: number): number => round(score / Math.sqrt(score * score + 15))

export const round = (x: number, digits = 3): number => Math.round(x * 10 ** digits) / 10 ** digits
