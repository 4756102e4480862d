// Whether the policy chatbot answers only questions its policies answer: accuracy on the labelled
// questions of test/fixtures/policy-questions (on topic: found; off topic: not found), for the tuning
// and the held-out part, of the rule before (a passage with a sentence of cosine ≥ 0.15) and of the
// share of the question's asked terms a passage holds at several thresholds (MIN_COVERAGE is chosen
// on the tuning part). Mistakes are listed for the tuning part only (`--wrong`).
// Run: node --import tsx bench/policy-relevance.ts [--wrong]
import { localEngine } from '../plugins/campaign/language/local-engine.js'
import { addressingPassages } from '../plugins/campaign/grounding/counter-message.js'
import { coverage, MIN_COVERAGE } from '../plugins/campaign/modules/policy-chatbot/policy-answer.js'
import { accuracy, policyFixtureKb, readPolicyQuestions } from './policy-question-set.js'
import { markdownTable } from './stats.js'

const engine = await localEngine()
const kb = policyFixtureKb()
const questions = readPolicyQuestions()
const parts = [['tuning', questions.filter(q => !q.heldOut)], ['held-out', questions.filter(q => q.heldOut)]] as const
const best = (question: string): number => Math.max(0, ...addressingPassages(engine, kb, [question]).map(s => coverage(engine, question, s.text)))
const rules: Array<[string, (question: string) => boolean]> = [
  ['before: a sentence with cosine ≥ 0.15', q => addressingPassages(engine, kb, [q]).length > 0],
  ...[0.25, 1 / 3, 0.4, 0.5, 0.6, 2 / 3, 0.75].map(min => [`asked terms held ≥ ${min.toFixed(2)}${min === MIN_COVERAGE ? ' (MIN_COVERAGE)' : ''}`, (q: string) => best(q) >= min] as [string, (q: string) => boolean])
]
const percent = (r: { right: number, all: number }): string => `${r.right} / ${r.all} (${(100 * r.right / r.all).toFixed(1)}%)`
console.log(`${questions.length} questions: ${questions.filter(q => q.onTopic).length} on topic, ${questions.filter(q => !q.onTopic).length} off; held out ${parts[1][1].length}\n`)
console.log(markdownTable(['rule', ...parts.map(([name]) => name)], rules.map(([name, found]) => [name, ...parts.map(([, part]) => percent(accuracy(part, found)))])))
if (process.argv.includes('--wrong')) {
  const chosen = rules.find(([name]) => name.includes('MIN_COVERAGE'))
  for (const q of chosen === undefined ? [] : accuracy(parts[0][1], chosen[1]).wrong) console.log(`- [${q.onTopic ? 'on' : 'off'}, held ${best(q.question).toFixed(2)}] ${q.question}`)
}
