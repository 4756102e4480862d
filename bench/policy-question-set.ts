// The labelled policy questions of test/fixtures/policy-questions: the policy documents as a knowledge
// base, the questions labelled on or off topic (every fourth held out), and whether the policy
// chatbot's retrieval answers a question (found) with a given relevance rule. Shared by
// bench/policy-relevance.ts and the policy chatbot's test that keeps the held-out floor.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { PACKAGE_ROOT } from '../kernel/paths.js'
import { Bm25Index } from '../plugins/campaign/text/bm25.js'
import type { KbLike } from '../plugins/campaign/grounding/grounding.js'

const FOLDER = join(PACKAGE_ROOT, 'test', 'fixtures', 'policy-questions')

export interface LabelledQuestion { line: number, question: string, onTopic: boolean, heldOut: boolean }

/** "on | question" or "off | question" a line; every fourth question (the 4th, 8th…) is held out. */
export function readPolicyQuestions (): LabelledQuestion[] {
  const questions: LabelledQuestion[] = []
  readFileSync(join(FOLDER, 'questions.txt'), 'utf8').split('\n').forEach((raw, i) => {
    const m = /^(on|off) \| (.+)$/u.exec(raw.trim())
    if (m === null) return
    questions.push({ line: i + 1, question: m[2], onTopic: m[1] === 'on', heldOut: (questions.length + 1) % 4 === 0 })
  })
  return questions
}

/** The policy documents of policies.json as a knowledge base (every document a policy). */
export function policyFixtureKb (): KbLike {
  const documents = JSON.parse(readFileSync(join(FOLDER, 'policies.json'), 'utf8')) as Array<{ title: string, passages: string[] }>
  const index = new Bm25Index()
  const all = documents.flatMap((d, i) => d.passages.map((text, passage) => ({ document_id: `doc-${i}`, title: d.title, source: 'policy', passage, text })))
  all.forEach((p, i) => { index.add(String(i), p.text) })
  return { query: (text, limit) => index.search(text, limit).map(r => all[Number(r.id)]) }
}

/** Questions answered right (found when on topic, not found when off) by `found`. */
export function accuracy (questions: readonly LabelledQuestion[], found: (question: string) => boolean): { right: number, all: number, wrong: LabelledQuestion[] } {
  const wrong = questions.filter(q => found(q.question) !== q.onTopic)
  return { right: questions.length - wrong.length, all: questions.length, wrong }
}
