// The policy chatbot's method: policy documents are knowledge-base documents tagged `policy` in their
// source; a message is answered from the passages retrieved for it (for a follow-up with no subject of
// its own, for the previous question and it together), extractively with citations, or by the
// generative provider from the cited passages and recent turns.
import type { ChatMessage } from '../../language/generator.js'
import { promptMessages, type PromptTemplate } from '../../language/prompts.js'
import type { CitedSource } from '../../grounding/counter-message.js'
import { sourceLines, type AnswerSentence, type KbLike } from '../../grounding/grounding.js'
import { tokenize } from '../../text/bm25.js'
import type { KbDocument, KnowledgeBase } from '../knowledge-base/knowledge-base.js'

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
 * The retrieval queries: the message alone; for a follow-up, also the previous question followed by
 * the message. Context helps a follow-up find its subject; it never stands in for a question that has
 * a subject of its own.
 */
export function policyQueries (message: string, previousQuestion?: string): string[] {
  return previousQuestion === undefined || !isFollowUp(message) ? [message] : [message, `${previousQuestion} ${message}`]
}

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
