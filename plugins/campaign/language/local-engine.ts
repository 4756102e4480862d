// The local language engine: sentences and headings by the rules of segmenter.ts, compromise for
// entities and noun phrases, AFINN-165 (the `sentiment` package's word list) backed off to VADER's
// lexicon (the `vader-sentiment` package's word list) read in context by the opinion scorer for
// sentiment, tinyld for the language, and the knowledge base's tokenizer for terms. Deterministic, no service; loaded on
// first use (the libraries take ~0.4 s to import).
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tokenize } from '../text/bm25.js'
import type { Entities, LanguageEngine, RankedTerm, Sentiment } from './engine.js'
import { scoreOpinion } from './opinion.js'
import { segmentText } from './segmenter.js'
import { centralSentences, cosine, polarityOf, rankTerms, round, termCounts } from './text-stats.js'

/**
 * VADER's words rated at least this far from 0 (mean of its raters, −4 to +4) back off AFINN-165:
 * fainter ratings ("energy", "trustee") are words that describe more than they judge.
 */
export const VADER_MIN = 1

/**
 * The opinion word list: AFINN-165, and for words it lacks VADER's (single words, rated at least
 * `VADER_MIN` away from 0; emoticons and phrases left out).
 */
function opinionLexicon (): Record<string, number> {
  const require = createRequire(import.meta.url)
  const afinn = require('sentiment/languages/en/labels.json') as Readonly<Record<string, number>>
  const lexicon: Record<string, number> = {}
  for (const line of readFileSync(require.resolve('vader-sentiment/vader_lexicon.txt'), 'utf8').split('\n')) {
    const [word, rating] = line.split('\t')
    if (/^\p{Ll}+(?:['-]\p{Ll}+)*$/u.test(word) && Math.abs(Number(rating)) >= VADER_MIN) lexicon[word] = Number(rating)
  }
  return Object.assign(lexicon, afinn)
}

/** |score| below this is neutral: what is left of a negated or conceded word alone does not make an opinion. */
export const OPINION_THRESHOLD = 0.5

const LEADING_WORDS = /^(?:(?:the|a|an|this|that|these|those|our|their|his|her|its|my|your|some|any|every|each|all|no|more|most|many|much|other|such)\s+)+/i
const TITLES = /^(?:senator|sen\.|mayor|governor|gov\.|representative|rep\.|judge|president|councillor|councilor|minister|dr\.|mr\.|mrs\.|ms\.)\s+/i

/** Trim punctuation, possessives and leading determiners or titles from an extracted name or phrase. */
function cleanPhrase (text: string, strip: RegExp): string {
  return text.replace(/[\s.,;:!?"'“”()[\]]+$/u, '').replace(/^[\s"'“”([]+/u, '').replace(/['’]s$/u, '').replace(strip, '').replace(/\s+/g, ' ').trim()
}

function distinct (items: Iterable<string>): string[] {
  const seen = new Map<string, string>()
  for (const item of items) if (item !== '' && !seen.has(item.toLowerCase())) seen.set(item.toLowerCase(), item)
  return [...seen.values()]
}

let loaded: Promise<LanguageEngine> | undefined

/** The local engine, imported once. */
export async function localEngine (): Promise<LanguageEngine> {
  loaded ??= buildLocalEngine()
  return await loaded
}

async function buildLocalEngine (): Promise<LanguageEngine> {
  const [{ default: nlp }, { detectAll }] = await Promise.all([import('compromise'), import('tinyld')])
  const lexicon = opinionLexicon()
  // A module often asks several things of one text in a row (sentences, entities, phrases): the last
  // text's parse is kept for the next question (only the last: a parse of a long text is large).
  let last: { text: string, doc: ReturnType<typeof nlp> } | undefined
  const parse = (text: string): ReturnType<typeof nlp> => {
    if (last?.text !== text) last = { text, doc: nlp(text) }
    return last.doc
  }
  const sentences = (text: string): string[] => segmentText(text).filter(s => !s.heading).map(s => s.text)

  return {
    name: 'local (compromise, AFINN-165 and VADER in context, tinyld)',
    sentences,
    segments: segmentText,
    terms: tokenize,

    entities (text: string): Entities {
      const doc = parse(text)
      const names = (found: string[], strip: RegExp): string[] => distinct(found.map(n => cleanPhrase(n, strip)))
      return {
        people: names(doc.people().out('array') as string[], TITLES),
        organizations: names(doc.organizations().out('array') as string[], LEADING_WORDS),
        places: names(doc.places().out('array') as string[], LEADING_WORDS)
      }
    },

    sentiment (text: string): Sentiment {
      const { score, positive_words: positive, negative_words: negative } = scoreOpinion(text, lexicon)
      return {
        score,
        polarity: polarityOf(score),
        label: score >= OPINION_THRESHOLD ? 'positive' : score <= -OPINION_THRESHOLD ? 'negative' : 'neutral',
        positive_words: positive,
        negative_words: negative
      }
    },

    keywords: (text, limit) => rankTerms(tokenize(text), limit),

    keyPhrases (text: string, limit: number): RankedTerm[] {
      const phrases = (parse(text).nouns().out('array') as string[])
        .map(p => cleanPhrase(p.toLowerCase(), LEADING_WORDS))
        .filter(p => p.split(' ').length >= 2 && /\p{L}{3}/u.test(p))
      return [...termCounts(phrases)]
        .map(([term, count]) => ({ term, count, weight: round(count * term.split(' ').length) }))
        .sort((a, b) => b.weight - a.weight || a.term.localeCompare(b.term))
        .slice(0, limit)
    },

    language (text: string) {
      const best = /\p{L}{2}/u.test(text) ? detectAll(text)[0] : undefined
      return best === undefined ? { language: 'und', confidence: 0 } : { language: best.lang, confidence: round(best.accuracy) }
    },

    similarity: (a, b) => round(cosine(termCounts(tokenize(a)), termCounts(tokenize(b)))),

    summarize: (text, count) => centralSentences(sentences(text), count)
  }
}
