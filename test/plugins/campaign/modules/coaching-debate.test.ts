// Coaching and debate: an answer measured (length, hedges, filler, key terms, tone, a cited fact, the
// score), the strongest opposite-stance counter-point with a follow-up question; then coaching-exchange
// through the API, debate and coaching in one session.
import t from 'tap'
import { localEngine } from '../../../../plugins/campaign/language/local-engine.js'
import { labelledSections } from '../../../../plugins/campaign/language/prompts.js'
import { coachAnswer, keyTerms } from '../../../../plugins/campaign/modules/coaching-debate/coaching-feedback.js'
import { counterPoint, followUp } from '../../../../plugins/campaign/modules/coaching-debate/debate-opponent.js'
import { campaignApp, statusOf } from '../../../support/campaign.js'
import { ATTACK_TITLE, KB, PLATFORM_TITLE, storePlatform } from '../fixtures/conversation.js'

t.test('coaching: length, hedges, filler, key terms, tone, a cited fact, the score', async t => {
  const engine = await localEngine()
  const question = 'How will you keep rent affordable for families?'
  t.same(keyTerms(engine, question), ['keep', 'rent', 'affordable', 'family'])

  const weak = coachAnswer(engine, KB, 'Um, I think maybe we could, like, try to do something about housing, you know.', question)
  t.match(weak.length, { words: 15, seconds: 6, verdict: 'short' })
  t.match(weak.hedges, { count: 3, found: ['i think', 'maybe', 'try to'], flagged: true })
  t.match(weak.fillers, { count: 3, found: ['um', 'like', 'you know'], flagged: true })
  t.match(weak.key_terms, { used: [], missing: ['keep', 'rent', 'affordable', 'family'], coverage: 0, answers: false })
  t.same(weak.points_lost, { length: 15, hedges: 15, fillers: 15, key_terms: 30, tone: 0 })
  t.equal(weak.score, 100 - 15 - 15 - 15 - 30, 'short −15, three hedges −15, three fillers −15, no key term −30')
  t.ok(weak.fact !== null && /\d/.test(weak.fact.sentence) && weak.fact.title === PLATFORM_TITLE, `a fact with a figure: ${weak.fact?.sentence}`)
  t.match(weak.tips.at(-1), /^Strengthen it with a fact: .* \[1\]$/)

  const strong = coachAnswer(engine, KB, 'We will cap rent increases at 3 percent a year, so families can afford to stay in their homes. ' +
    'And we will build 5,000 affordable homes near transit by 2030, which keeps rent affordable for the next generation of families in this city. ' +
    'That is a concrete plan, and I will deliver it in my first term.', question)
  t.match(strong, { length: { verdict: 'good' }, hedges: { count: 0 }, fillers: { count: 0 }, key_terms: { coverage: 1, answers: true }, score: 100 })
  t.equal(strong.length.seconds, Math.round(strong.length.words * 60 / 150), 'speaking time at 150 words a minute')

  const attack = coachAnswer(engine, KB, 'My opponent is a liar and a disgrace, a corrupt failure who ruined this city and betrayed every family.', '')
  t.match(attack, { tone: { label: 'negative', flagged: true }, key_terms: null })
})

t.test('debate: the strongest opposite-stance counter-point, and a follow-up question by cue', async t => {
  const engine = await localEngine()
  const statement = 'Our housing plan is a great success for renters and families.'
  const counter = counterPoint(engine, KB, `housing ${statement}`, statement)
  t.match(counter, { title: ATTACK_TITLE, sentence: 'Critics say the housing plan is a costly failure.' })
  t.ok((counter?.stance ?? 0) < 0, 'of the opposite stance')
  t.same(followUp(statement, counter?.sentence, 'housing'), { kind: 'cost', question: 'Who pays for housing, and how much will it cost?' })
  const next = counterPoint(engine, KB, `housing ${statement}`, statement, new Set([counter?.sentence ?? '']))
  t.not(next?.sentence, counter?.sentence, 'a counter-point used earlier in the session is not repeated')
  t.equal(counterPoint(engine, KB, 'space exploration', 'We love space exploration.'), undefined, 'nothing relevant: no counter-point')
  t.same(followUp('We will open a library.', undefined, 'the library'), { kind: 'timeline', question: 'What is your timeline for the library, and what happens if it slips?' })
  t.same(followUp('The library is wonderful.', 'Only 40 percent of residents use it.', 'the library').kind, 'figure')
  t.same(labelledSections('REBUTTAL: No [1].\nquestion: Why?', ['REBUTTAL', 'QUESTION']), { REBUTTAL: 'No [1].', QUESTION: 'Why?' })
  t.equal(labelledSections('Just text', ['REBUTTAL', 'QUESTION']), undefined)
})

t.test('through the API', async t => {
  const { login, call } = await campaignApp(t)
  const volunteer = await login('volunteer')
  await storePlatform(call)

  interface Exchange { session_id: string, mode: string, reply: string, debate?: { counter_point: { title: string } | null, rebuttal: string, question: string, question_kind: string }, coaching?: { score: number, key_terms: { question: string } | null }, sources: string[], turns: Array<{ role: string, mode: string }>, turn_count: number, resource_id: string, engine: string }
  const debate = await call<Exchange>('coaching-exchange', { mode: 'debate', topic: 'housing', message: 'Our housing plan is a great success for renters and families.' })
  t.match(debate, { mode: 'debate', debate: { counter_point: { title: ATTACK_TITLE }, question_kind: 'cost', question: 'Who pays for housing, and how much will it cost?' }, sources: [`[1] ${ATTACK_TITLE}, passage 1`], turn_count: 2 })
  t.equal(debate.reply, 'Critics say the housing plan is a costly failure. [1] Who pays for housing, and how much will it cost?')
  const coached = await call<Exchange>('coaching-exchange', { session_id: debate.session_id, mode: 'coaching', message: 'Um, maybe the homes pay for themselves.' })
  t.match(coached, { session_id: debate.session_id, mode: 'coaching', coaching: { key_terms: { question: 'Who pays for housing, and how much will it cost?' } }, turn_count: 4 },
    'coaching in the session answers the opponent\'s last question')
  t.match(coached.reply, /^Score \d+\/100\. /)
  t.same(coached.turns.map(turn => turn.mode), ['debate', 'debate', 'coaching', 'coaching'])
  t.equal(await statusOf(call('coaching-exchange', { session_id: debate.session_id, mode: 'coaching', message: 'x' }, volunteer)), 403)
  t.equal(await statusOf(call('coaching-exchange', { mode: 'rehearse', message: 'x' })), 400)
})
