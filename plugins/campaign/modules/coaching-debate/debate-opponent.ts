// The debate sparring partner: the strongest counter-point to the candidate's statement among the
// knowledge base's sentences (relevant to it, of the opposite stance), and a follow-up question chosen
// by documented cues; no counter-point in the record gives a challenge built from the statement alone.
import { type LanguageEngine, round, RELEVANT, type KbLike, type CitedPassage, opinionPolarity, stanceSign } from '../../module-kit.js'

/** A cited passage (`text`) and the sentence of it that answers the statement. */
export interface CounterPoint extends CitedPassage {
  sentence: string
  /** Cosine similarity of the sentence to the statement (and topic). */
  relevance: number
  /** Opinion polarity of the sentence (AFINN + stance cues). */
  stance: number
  /** relevance × (1 + |stance|), halved for a contrast without opposite stance. */
  strength: number
}

/** Passages retrieved for the statement. */
export const RETRIEVED = 8

/** Words that mark a sentence as an objection even when its stance is not opposite. */
const CONTRAST = /\b(?:but|however|yet|although|instead|fail(?:s|ed)?|cost(?:s|ly)?|taxpayers?|risk(?:s|y)?|no evidence|never|delay(?:s|ed)?|over budget)\b/i
const COST = /\b(?:costs?|costly|budget|tax(?:es)?|taxpayers?|pay|afford(?:able)?|spending|deficit|debt|billion|million)\b|[$€£]\s?\d/i
const COMMITMENT = /\b(?:will|shall|promise[sd]?|pledge[sd]?|going to|commit(?:ted)?)\b|'ll\b/i
const FIGURE = /[$€£]?\d[\d,.]*\s?(?:%|percent|million|billion|thousand)?/

/** The candidate's stance: the opinion polarity of the whole statement. */
export const statementStance = (engine: LanguageEngine, statement: string): number => opinionPolarity(engine, statement)

/**
 * The strongest counter-point: each sentence of the passages retrieved for `query` that was not used
 * before in the session and has relevance ≥ RELEVANT to the query scores relevance × (1 + |stance|)
 * when its stance sign is opposite to the statement's (any non-neutral stance against a neutral
 * statement), half that when it only holds a contrast word (but, however, costs, fails…), else 0.
 */
export function counterPoint (engine: LanguageEngine, kb: KbLike, query: string, statement: string, used: ReadonlySet<string> = new Set()): CounterPoint | undefined {
  const own = stanceSign(statementStance(engine, statement))
  let best: CounterPoint | undefined
  for (const hit of kb.query(query, RETRIEVED)) {
    for (const sentence of engine.sentences(hit.text).map(s => s.trim())) {
      if (used.has(sentence)) continue
      const relevance = engine.similarity(query, sentence)
      if (relevance < RELEVANT) continue
      const stance = opinionPolarity(engine, sentence)
      const sign = stanceSign(stance)
      const opposite = own === 0 ? sign !== 0 : sign === -own
      const factor = opposite ? 1 : CONTRAST.test(sentence) ? 0.5 : 0
      const strength = round(relevance * (1 + Math.abs(stance)) * factor)
      if (strength > 0 && (best === undefined || strength > best.strength)) {
        best = { cite: 1, document_id: hit.document_id, title: hit.title, source: hit.source, passage: hit.passage, text: hit.text, sentence, relevance: round(relevance), stance, strength }
      }
    }
  }
  return best
}

export type QuestionKind = 'cost' | 'figure' | 'timeline' | 'trust'

/**
 * The follow-up question, the first that applies: a cost word in the counter-point or statement →
 * who pays; a figure in the counter-point → square it; a commitment in the statement → timeline;
 * otherwise → why trust your approach. `focus` is the topic the question names.
 */
export function followUp (statement: string, counter: string | undefined, focus: string): { kind: QuestionKind, question: string } {
  const text = counter ?? ''
  if (COST.test(text) || COST.test(statement)) return { kind: 'cost', question: `Who pays for ${focus}, and how much will it cost?` }
  const figure = FIGURE.exec(text)
  if (figure !== null) return { kind: 'figure', question: `The record says ${figure[0].trim().replace(/[.,]+$/, '')}. How do you square that with your position on ${focus}?` }
  if (COMMITMENT.test(statement)) return { kind: 'timeline', question: `What is your timeline for ${focus}, and what happens if it slips?` }
  return { kind: 'trust', question: `Why should voters trust your approach on ${focus} over that?` }
}

/** What the question is about: the given topic, else the statement's top key phrase or keyword. */
export function focusOf (engine: LanguageEngine, statement: string, topic: string): string {
  if (topic.trim() !== '') return topic.trim().replace(/[?.!]+$/, '')
  return engine.keyPhrases(statement, 1)[0]?.term ?? engine.keywords(statement, 1)[0]?.term ?? 'this'
}

/** The opponent's turn: "<counter-point> [1] <question>", or the challenge alone. */
export const opponentText = (counter: CounterPoint | undefined, question: string): string => counter === undefined ? question : `${counter.sentence} [1] ${question}`
