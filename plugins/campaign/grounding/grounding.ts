// What the modules that write from the knowledge base share: the sentences that address a query, cited
// under one numbering across a whole result, the sentences an extractive answer quotes, citation and
// source lines, the note for "nothing in the knowledge base", stable ids for results that are not
// stored, and clipping.
import type { LanguageEngine } from '../language/engine.js'
import { addressingPassages, RELEVANT, type CitedSource } from './counter-message.js'
import { contentId } from '../modules/kit.js'

/** What the knowledge base offers: kb.query's shape. */
export interface KbLike {
  query(text: string, limit: number): Array<{ document_id: string, title: string, source: string, passage: number, text: string }>
}

/** A knowledge-base passage cited in a result as [cite]. */
export type CitedPassage = Omit<CitedSource, 'sentence' | 'similarity'>

/** A sentence quoted from a cited passage; `relevance` is its cosine similarity to the query. */
export interface GroundedSentence { cite: number, text: string, relevance: number }

export interface Retrieval {
  /** Passages retrieved (addressing the query), at most. */
  passages: number
  /** Sentences quoted from one passage, and in all, at most. */
  perPassage: number
  total: number
}

/** The passages of one result, numbered [1], [2]… in the order they are first cited. */
export class Citations {
  readonly #byKey = new Map<string, CitedPassage>()

  /** The number of `passage` in this result (a new one when it was not cited yet). */
  cite (passage: Omit<CitedPassage, 'cite'>): number {
    const key = `${passage.document_id}#${passage.passage}`
    let found = this.#byKey.get(key)
    if (found === undefined) {
      found = { cite: this.#byKey.size + 1, document_id: passage.document_id, title: passage.title, source: passage.source, passage: passage.passage, text: passage.text }
      this.#byKey.set(key, found)
    }
    return found.cite
  }

  get passages (): CitedPassage[] {
    return [...this.#byKey.values()]
  }

  /** `[n] Title, passage p` for each, as kb-query cites. */
  get lines (): string[] {
    return citationLines(this.passages)
  }

  /** The lines of the given numbers only. */
  linesOf (cites: Iterable<number>): string[] {
    const wanted = new Set(cites)
    return citationLines(this.passages.filter(p => wanted.has(p.cite)))
  }
}

/**
 * The knowledge base's sentences on `query`: the passages that address it (a sentence with cosine
 * similarity ≥ RELEVANT, `addressingPassages`), closest first, and from each its sentences with that
 * relevance, the most relevant first within the limits (`answerSentences`), numbered in `citations`.
 */
export function groundedSentences (engine: LanguageEngine, kb: KbLike, query: string, retrieval: Retrieval, citations: Citations): GroundedSentence[] {
  const sources = addressingPassages(engine, kb, [query], retrieval.passages)
  const numbers = new Map(sources.map(s => [s.cite, citations.cite(s)]))
  return answerSentences(engine, sources, [query], { perPassage: retrieval.perPassage, total: retrieval.total })
    .map(s => ({ cite: numbers.get(s.cite) as number, text: s.text, relevance: s.relevance }))
}

/** What a result says instead of writing about a topic the knowledge base does not cover. */
export const nothingInKb = (topic: string): string =>
  `Nothing in the knowledge base on “${topic}”: nothing was written about it, so that nothing is invented. Add a document that covers it (kb-ingest) and ask again.`

/** A stable id for a result that is not stored (`prefix-` + the content id of `parts` as JSON), for record-feedback. */
export function resourceHash (prefix: string, parts: unknown): string {
  return `${prefix}-${contentId(JSON.stringify(parts))}`
}

/** `text` cut to at most `max` characters at a word boundary, with "…" when cut. */
export function clip (text: string, max: number): string {
  if (text.length <= max) return text
  const cut = text.slice(0, Math.max(0, max - 1)).replace(/\s+\S*$/, '').replace(/[\s,;:.–-]+$/u, '')
  return `${cut}…`
}

/** The sentence with its citation marker: "text [n]". */
export const marked = (s: Pick<GroundedSentence, 'cite' | 'text'>): string => `${s.text} [${s.cite}]`

/** Most sentences of an extractive answer, and from one passage. */
export const MAX_ANSWER_SENTENCES = 4
export const MAX_PER_PASSAGE = 2

export interface AnswerSentence { cite: number, text: string, relevance: number }

/**
 * The sentences an extractive answer quotes: in each cited passage, the sentences whose relevance (the
 * highest cosine similarity to any query) is at least RELEVANT, at most MAX_PER_PASSAGE per passage
 * (the most relevant, kept in text order) and MAX_ANSWER_SENTENCES in all (or `limits`), passage by passage.
 */
export function answerSentences (engine: LanguageEngine, sources: readonly CitedSource[], queries: readonly string[],
  limits: { perPassage: number, total: number } = { perPassage: MAX_PER_PASSAGE, total: MAX_ANSWER_SENTENCES }): AnswerSentence[] {
  const picked: AnswerSentence[] = []
  for (const source of sources) {
    const scored = engine.sentences(source.text).map((text, index) => ({ text: text.trim(), index, relevance: Math.max(...queries.map(q => engine.similarity(q, text))) }))
      .filter(s => s.relevance >= RELEVANT)
      .sort((a, b) => b.relevance - a.relevance || a.index - b.index)
      .slice(0, Math.min(limits.perPassage, limits.total - picked.length))
      .sort((a, b) => a.index - b.index)
    picked.push(...scored.map(s => ({ cite: source.cite, text: s.text, relevance: Math.round(s.relevance * 1000) / 1000 })))
    if (picked.length >= limits.total) break
  }
  return picked
}

/** `[n] Title, passage p` for each source, as kb-query cites. */
export const citationLines = (sources: ReadonlyArray<Pick<CitedSource, 'cite' | 'title' | 'passage'>>): string[] => sources.map(s => `[${s.cite}] ${s.title}, passage ${s.passage + 1}`)

/** The passages one per line as "[n] Title: passage", for prompts. */
export const sourceLines = (sources: ReadonlyArray<Pick<CitedSource, 'cite' | 'title' | 'text'>>): string => sources.map(s => `[${s.cite}] ${s.title}: ${s.text}`).join('\n')
