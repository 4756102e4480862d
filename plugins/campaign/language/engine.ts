// The language engine the campaign modules share: one interface for sentences (and headings), terms,
// entities, sentiment, keywords and key phrases, language, similarity and extractive summaries. The
// local implementation (local-engine.ts) needs no service; results name the engine that produced them.
import type { Segment } from './segmenter.js'

export type { Segment }

export interface Entities {
  people: string[]
  organizations: string[]
  places: string[]
}

export interface Sentiment {
  /** The AFINN-165 sum over the words (negations flip the word after "not", "no", "never"…). */
  score: number
  /** score / √(score² + 15): bounded to (−1, 1), VADER's normalisation. */
  polarity: number
  label: 'positive' | 'negative' | 'neutral'
  positive_words: string[]
  negative_words: string[]
}

export interface RankedTerm { term: string, count: number, weight: number }

export interface SummarySentence { index: number, text: string, score: number }

export interface LanguageGuess {
  /** ISO 639-1 code, or "und" when the text is too short or unknown. */
  language: string
  confidence: number
}

export interface LanguageEngine {
  /** Name and versions of what produced a result, recorded in every module result. */
  readonly name: string
  /** The text's sentences, in order; heading lines are left out (they name a topic, they state nothing). */
  sentences(text: string): string[]
  /** Every sentence and heading line, in order, headings flagged; `title` is the document's, whose repetition as its first line is a heading. */
  segments(text: string, title?: string): Segment[]
  /** Content terms: lower-cased runs of letters and digits, stop words dropped (the knowledge base's tokenizer). */
  terms(text: string): string[]
  entities(text: string): Entities
  sentiment(text: string): Sentiment
  /** Content terms by count × length weight, at most `limit`. */
  keywords(text: string, limit: number): RankedTerm[]
  /** Noun phrases of two or more words by count, at most `limit`. */
  keyPhrases(text: string, limit: number): RankedTerm[]
  language(text: string): LanguageGuess
  /** Cosine similarity of the two texts' term-count vectors, 0 to 1. */
  similarity(a: string, b: string): number
  /** The `count` most central sentences (headings left out), in text order. */
  summarize(text: string, count: number): SummarySentence[]
}
