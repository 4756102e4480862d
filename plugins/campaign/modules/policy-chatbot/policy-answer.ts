// The policy chatbot's method: policy documents are knowledge-base documents tagged `policy` in their
// source; a message is answered from the passages retrieved for it that hold enough of what it asks
// about (for a follow-up with no subject of its own, read with the conversation's last answered
// subject), extractively with citations, or by the generative provider from the cited passages and
// recent turns.
import { type ChatMessage, promptMessages, type PromptTemplate, type CitedSource, sourceLines, type AnswerSentence, type KbLike, tokenize, foldedTerms, type LanguageEngine } from '../../module-kit.js'
import type { KbDocument, KnowledgeBase } from '../knowledge-base/index.js'

/** The source tag of policy documents: `policy`, or `policy: <where it came from>`. */
export const POLICY_TAG = 'policy'
export const isPolicyDocument = (document: Pick<KbDocument, 'source'>): boolean => document.source === POLICY_TAG || document.source.startsWith(`${POLICY_TAG}:`)
export const policySource = (origin?: string): string => origin === undefined || origin.trim() === '' ? POLICY_TAG : `${POLICY_TAG}: ${origin.trim()}`

/** The knowledge base seen through policy documents only. */
export const policyKb = (kb: KnowledgeBase): KbLike => ({ query: (text, limit) => kb.query(text, limit, isPolicyDocument) })

export const NOT_FOUND_ANSWER = 'I could not find this in the policy documents.'

/** A message with at most this many terms of its own ("and by when?", "and for seniors?") may lean on the previous question. */
export const FOLLOW_UP_TERMS = 2

/** Whether a message is a follow-up: too few terms of its own to be asked on its own. */
export const isFollowUp = (message: string): boolean => tokenize(message).length <= FOLLOW_UP_TERMS

/**
 * The retrieval queries: the message alone; for a follow-up, also the subject it follows (the last
 * question the conversation answered) followed by the message. Context helps a follow-up find its
 * subject; it never stands in for a question that has a subject of its own.
 */
export function policyQueries (message: string, subject?: string): string[] {
  return subject === undefined || !isFollowUp(message) ? [message] : [message, `${subject} ${message}`]
}

/** Words that ask rather than name what is asked about ("how many", "what is the plan for", "will you"). */
const ASKING = new Set(('many much plan plans policy policies position say says said do does did can could would should there ' +
  'about tell me you your any going get happen happens long often soon fast far not').split(' '))

/** What a question asks about: its folded content terms, the asking words left out. */
export const askedTerms = (engine: LanguageEngine, question: string): Set<string> =>
  new Set(foldedTerms(engine, question).filter(t => !ASKING.has(t)))

/** The share (0 to 1) of what `question` asks about that `passage` holds (its heading included). */
export function coverage (engine: LanguageEngine, question: string, passage: string): number {
  const asked = askedTerms(engine, question)
  const held = new Set(foldedTerms(engine, passage))
  return asked.size === 0 ? 0 : [...asked].filter(t => held.has(t)).length / asked.size
}

/**
 * A passage answers a question when it holds at least this share of what the question asks about:
 * the best threshold on the tuning part of test/fixtures/policy-questions (bench/policy-relevance.ts;
 * of two equally good, the stricter), so that a question sharing one word with a policy is not
 * answered with it.
 */
export const MIN_COVERAGE = 1 / 3

/** The retrieved passages that answer one of the queries (MIN_COVERAGE), renumbered from 1. */
export function answeringSources (engine: LanguageEngine, sources: readonly CitedSource[], queries: readonly string[]): CitedSource[] {
  return sources.filter(s => queries.some(q => coverage(engine, q, s.text) >= MIN_COVERAGE)).map((s, i) => ({ ...s, cite: i + 1 }))
}

/** What an assistant turn of a policy chat keeps: whether it found an answer, how, and the subject it answered. */
export interface PolicyTurnMeta { found: boolean, method: 'extractive' | 'generative' | 'none', subject?: string }

/**
 * The subject a follow-up is read with: that of the last turn that found an answer (turns that found
 * none, such as an off-topic question, are skipped), or its question for turns stored without one.
 */
export function lastSubject (turns: ReadonlyArray<{ role: string, text: string, meta?: PolicyTurnMeta }>): string | undefined {
  const at = turns.findLastIndex(t => t.role === 'assistant' && t.meta?.found === true)
  if (at < 0) return undefined
  return turns[at].meta?.subject ?? turns.slice(0, at).findLast(t => t.role === 'user')?.text
}

/** The subject a turn answered: a follow-up keeps the one it was read with, any other question is its own. */
export const subjectOf = (message: string, followed: string | undefined): string => followed !== undefined && isFollowUp(message) ? followed : message

/** The sentences grouped by passage, each group followed by its citation: "S1 S2 [1] S3 [2]". */
export function composeAnswer (sentences: readonly AnswerSentence[]): string {
  const groups: string[] = []
  sentences.forEach((s, i) => {
    const last = i === sentences.length - 1 || sentences[i + 1].cite !== s.cite
    groups.push(last ? `${s.text} [${s.cite}]` : s.text)
  })
  return groups.join(' ')
}

export function policyPrompt (template: PromptTemplate, message: string, sources: readonly CitedSource[], history: string): ChatMessage[] {
  return promptMessages(template, { message: message.trim(), sources: sourceLines(sources), history })
}
