// Counter-messages for a claim: the knowledge-base passages that address it, cited [1], [2]…, composed
// extractively from their closest sentences, or with a generative provider from the prompt template in
// modules/disinfo-warning/prompts/counter-messaging.md (its answer read back as SHORT: … LONG: …).
import type { LanguageEngine } from '../language/engine.js'
import type { ChatMessage } from '../language/generator.js'
import { promptMessages, type PromptTemplate } from '../language/prompts.js'
import type { KbLike } from './grounding.js'
import { contradicts, topicShare, type Contradiction } from '../text/claims.js'
import type { CounterTone } from './counter-tones.js'

export type { CounterTone }

export interface CitedSource {
  cite: number
  document_id: string
  title: string
  source: string
  passage: number
  text: string
  /** The passage's sentence closest to the claim. */
  sentence: string
  similarity: number
  /** How the sentence contradicts the claim, when it does (`answeringPassages`). */
  contradiction?: Contradiction['reason']
}

/** A passage addresses a claim when one of its sentences has at least this cosine similarity to it. */
export const RELEVANT = 0.15
/** Most passages cited. */
export const MAX_SOURCES = 3
/** Longest claim quoted, in words. */
const QUOTED_WORDS = 25

/** A passage read for a claim: the sentence it is cited by, and its rank (higher first); undefined when it is not cited. */
type Reading = (claim: string, passage: string) => { sentence: string, similarity: number, rank: number, contradiction?: Contradiction['reason'] } | undefined

/** The passages (at most `max`, the highest rank first) that `read` cites for any of the claims, numbered from 1. */
function citedPassages (kb: KbLike, claims: readonly string[], max: number, read: Reading): CitedSource[] {
  const found = new Map<string, Omit<CitedSource, 'cite'> & { rank: number }>()
  for (const claim of claims) {
    for (const hit of kb.query(claim, Math.max(5, max))) {
      const reading = read(claim, hit.text)
      if (reading === undefined) continue
      const key = `${hit.document_id}#${hit.passage}`
      if ((found.get(key)?.rank ?? -1) >= reading.rank) continue
      found.set(key, { document_id: hit.document_id, title: hit.title, source: hit.source, passage: hit.passage, text: hit.text, ...reading })
    }
  }
  return [...found.values()].sort((a, b) => b.rank - a.rank).slice(0, max).map(({ rank: _rank, ...s }, i) => ({ cite: i + 1, ...s }))
}

const closestSentence = (engine: LanguageEngine, claim: string, passage: string): { sentence: string, similarity: number } | undefined =>
  engine.sentences(passage).map(sentence => ({ sentence, similarity: engine.similarity(claim, sentence) })).sort((a, b) => b.similarity - a.similarity)[0]

/** The passages (at most `max`, closest first) that address any of the claims, numbered from 1. */
export function addressingPassages (engine: LanguageEngine, kb: KbLike, claims: readonly string[], max = MAX_SOURCES): CitedSource[] {
  return citedPassages(kb, claims, max, (claim, passage) => {
    const best = closestSentence(engine, claim, passage)
    return best === undefined || best.similarity < RELEVANT ? undefined : { ...best, rank: best.similarity }
  })
}

/** A passage is on a claim's topic when one of its sentences holds at least this share of the claim's (folded) terms. */
export const ON_TOPIC = 1 / 3

/**
 * The passages that answer claims to be countered (at most `max`): those contradicting a claim first
 * (cited by the contradicting sentence), then those on a claim's topic (by their sentence holding the
 * largest share of its terms, at least ON_TOPIC), closest first; numbered from 1. A passage sharing
 * only a name or a common word with the claim is not cited.
 */
export function answeringPassages (engine: LanguageEngine, kb: KbLike, claims: readonly string[], max = MAX_SOURCES): CitedSource[] {
  return citedPassages(kb, claims, max, (claim, passage) => {
    const contradiction = contradicts(engine, claim, passage)
    if (contradiction !== undefined) return { sentence: contradiction.sentence, similarity: contradiction.similarity, rank: 2 + contradiction.similarity, contradiction: contradiction.reason }
    const best = engine.sentences(passage).map(sentence => ({ sentence, share: topicShare(engine, claim, sentence), similarity: engine.similarity(claim, sentence) }))
      .sort((a, b) => b.share - a.share || b.similarity - a.similarity)[0]
    return best === undefined || best.share < ON_TOPIC ? undefined : { sentence: best.sentence, similarity: best.similarity, rank: best.similarity }
  })
}

/** The claim as quoted: trailing punctuation dropped, at most QUOTED_WORDS words. */
export function quoteClaim (claim: string): string {
  const plain = claim.replace(/\s+/g, ' ').trim().replace(/[\s.!?;:,]+$/u, '')
  const cut = plain.split(' ')
  return cut.length > QUOTED_WORDS ? `${cut.slice(0, QUOTED_WORDS).join(' ')}…` : plain
}

const OPENERS: Readonly<Record<CounterTone, string>> = {
  neutral: '',
  warm: 'It is understandable to be worried by this. ',
  firm: 'Let us be clear. '
}

const CLOSINGS: Readonly<Record<CounterTone, string>> = {
  neutral: 'Please check the sources before sharing.',
  warm: 'If you have seen this claim, you are not alone; the sources above are a good place to check before sharing it.',
  firm: 'Sharing this claim spreads misinformation; the record says otherwise.'
}

/**
 * "The claim that … is not supported: <contradicting sentence> [1]" when the first source contradicts
 * the claim, else "On the claim that …, the record says: <closest sentence> [1]"; and a long form
 * citing every source.
 */
export function composeExtractive (claim: string, sources: readonly CitedSource[], tone: CounterTone): { short: string, long: string } {
  const quoted = quoteClaim(claim)
  const lead = sources[0].contradiction !== undefined ? `The claim that “${quoted}” is not supported` : `On the claim that “${quoted}”, the record says`
  return {
    short: `${OPENERS[tone]}${lead}: ${sources[0].sentence} [1]`,
    long: `${OPENERS[tone]}${lead}: ${sources.map(s => `${s.sentence} [${s.cite}]`).join(' ')} ${CLOSINGS[tone]}`
  }
}

export function counterPrompt (template: PromptTemplate, claim: string, sources: readonly CitedSource[], tone: CounterTone): ChatMessage[] {
  const values = { claim: claim.trim(), tone, sources: sources.map(s => `[${s.cite}] ${s.title}: ${s.text}`).join('\n') }
  return promptMessages(template, values)
}

/** The provider's answer read back: SHORT: … LONG: …; otherwise its first 280 characters and the whole. */
export function readGenerated (answer: string): { short: string, long: string } {
  const parts = /SHORT:\s*([\s\S]*?)\s*LONG:\s*([\s\S]*)$/i.exec(answer)
  if (parts !== null && parts[1].trim() !== '' && parts[2].trim() !== '') return { short: parts[1].trim(), long: parts[2].trim() }
  const text = answer.trim()
  return { short: text.length <= 280 ? text : `${text.slice(0, 279).replace(/\s+\S*$/, '')}…`, long: text }
}
