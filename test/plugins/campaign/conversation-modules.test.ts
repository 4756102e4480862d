// The conversation modules (policy chatbot, coaching and debate) and the empathy simulator: their
// methods on a planted platform and an opponent's attack, then each function through the API (sessions
// per user, resumed, listed; 400, 413, 404), and their generated paths against a stand-in provider.
import t from 'tap'
import devIdp from '../../../plugins/dev-idp/index.js'
import campaign from '../../../plugins/campaign/index.js'
import { callServerFunction, ServerFunctionError } from '../../../plugins/campaign/client.js'
import { localEngine } from '../../../plugins/campaign/language/local-engine.js'
import { labelledSections } from '../../../plugins/campaign/language/prompts.js'
import { Bm25Index } from '../../../plugins/campaign/text/bm25.js'
import { coachAnswer, keyTerms } from '../../../plugins/campaign/modules/coaching-debate/coaching-feedback.js'
import { addressingPassages } from '../../../plugins/campaign/grounding/counter-message.js'
import { counterPoint, followUp } from '../../../plugins/campaign/modules/coaching-debate/debate-opponent.js'
import type { KbLike } from '../../../plugins/campaign/grounding/grounding.js'
import { effectsIn, simulateReaction } from '../../../plugins/campaign/modules/empathy-simulator/persona-reaction.js'
import { loadPersonaBook } from '../../../plugins/campaign/modules/empathy-simulator/personas.js'
import {
  answerSentences, composeAnswer, isPolicyDocument, NOT_FOUND_ANSWER, policyQueries, policySource
} from '../../../plugins/campaign/grounding/policy-answer.js'
import { campaignApp, scriptedLogin, statusOf, withDevIdp } from '../../support/campaign.js'
import { startChatStandIn } from '../../support/chat-standin.js'
import { testKernel } from '../../support/kernel.js'

const PLATFORM_TITLE = 'Housing for everyone'
/** The platform: each paragraph is one passage. */
const PLATFORM = [
  'We will build 5,000 affordable homes near transit stations by 2030. Every new development near a station must include 30 percent affordable units.',
  'Rent increases will be capped at 3 percent a year for existing tenants. A tenant legal aid office will help renters facing eviction.',
  'Property taxes for seniors will be frozen for homeowners over 65. The freeze is paid for by closing the luxury second-home loophole.',
  'We will hire 200 new teachers and reduce class sizes in every public school.'
]
/** An opponent's attack, in the knowledge base but not a policy document. */
const ATTACK_TITLE = 'Metro Watch: critics of the housing plan'
const ATTACK = 'Critics say the housing plan is a costly failure. The plan would cost taxpayers $2 billion and the homes would arrive too late to help renters.'

/** A knowledge base over passages (document `doc-<i>` per passage group), for the unit tests. */
function kbOf (documents: Array<{ title: string, source: string, passages: string[] }>): KbLike & { policiesOnly: KbLike } {
  const index = new Bm25Index()
  const all = documents.flatMap((d, i) => d.passages.map((text, passage) => ({ id: `doc-${i}#${passage}`, document_id: `doc-${i}`, title: d.title, source: d.source, passage, text })))
  for (const p of all) index.add(p.id, p.text)
  const query = (keep: (p: typeof all[number]) => boolean) => (text: string, limit: number) =>
    index.search(text, limit, id => keep(all.find(p => p.id === id) as typeof all[number])).map(r => all.find(p => p.id === r.id) as typeof all[number])
  return { query: query(() => true), policiesOnly: { query: query(p => isPolicyDocument(p)) } }
}

const KB = kbOf([
  { title: PLATFORM_TITLE, source: policySource('platform.pdf'), passages: PLATFORM },
  { title: ATTACK_TITLE, source: 'Metro Watch', passages: [ATTACK] }
])

t.test('policy answers: retrieved from policy documents only, extractive, cited, follow-ups, nothing invented', async t => {
  const engine = await localEngine()
  t.equal(policySource(), 'policy')
  t.equal(policySource(' platform.pdf '), 'policy: platform.pdf')
  t.ok(isPolicyDocument({ source: 'policy: platform.pdf' }) && isPolicyDocument({ source: 'policy' }))
  t.notOk(isPolicyDocument({ source: 'policymakers.org' }), 'a source that merely starts with the word is no tag')

  const question = 'How many affordable homes will you build?'
  const sources = addressingPassages(engine, KB.policiesOnly, policyQueries(question))
  t.match(sources, [{ cite: 1, title: PLATFORM_TITLE, passage: 0 }])
  const sentences = answerSentences(engine, sources, [question])
  t.equal(sentences[0].text, PLATFORM[0].split('. ')[0] + '.', 'the planted sentence is quoted')
  t.ok(sentences.length <= 4 && sentences.every(s => s.relevance >= 0.15))
  t.match(composeAnswer(sentences), /^We will build 5,000 affordable homes near transit stations by 2030\..*\[1\]$/)
  t.equal(composeAnswer([{ cite: 1, text: 'A.', relevance: 1 }, { cite: 1, text: 'B.', relevance: 1 }, { cite: 2, text: 'C.', relevance: 1 }]), 'A. B. [1] C. [2]', 'grouped by passage')

  t.same(addressingPassages(engine, KB.policiesOnly, policyQueries('And by when?')), [], 'a bare follow-up finds nothing alone')
  const followUpSources = addressingPassages(engine, KB.policiesOnly, policyQueries('And by when?', question))
  t.match(followUpSources, [{ passage: 0 }], 'with the previous question it finds the housing passage')

  t.same(addressingPassages(engine, KB.policiesOnly, policyQueries('Who calls the plan a costly failure?')), [], 'the attack is not a policy document')
  t.match(addressingPassages(engine, KB, ['Who calls the plan a costly failure?']), [{ title: ATTACK_TITLE }], 'though the knowledge base has it')
  t.equal(NOT_FOUND_ANSWER, 'I could not find this in the policy documents.')
})

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

t.test('empathy: personas react by their concerns, what they pay and gain, with objections', async t => {
  const engine = await localEngine()
  const book = loadPersonaBook()
  t.same(book.personas.map(p => p.id), ['retired-homeowner', 'young-renter', 'small-business-owner', 'parent', 'union-worker'])
  const persona = (id: string) => book.personas.find(p => p.id === id) as typeof book.personas[number]

  t.match(effectsIn('We will raise the minimum wage and cut property taxes.', persona('small-business-owner')),
    [{ cue: 'minimum wage', direction: 'up', effect: -1 }, { cue: 'property tax', said: 'property taxes', direction: 'down', effect: 1 }], 'what one pays: raised angers, cut pleases')
  t.match(effectsIn('We will not raise property taxes.', persona('retired-homeowner')), [{ direction: 'down', effect: 1 }], 'a negation flips the raise')
  t.same(effectsIn('We will build 5,000 affordable homes near transit and freeze rents.', persona('young-renter')).map(e => [e.cue, e.direction]), [['affordable homes', 'up'], ['rent', 'down']],
    'in text order; "build" is too far back for transit, and a look-ahead stops at "and"')

  const message = 'We will raise the minimum wage to $20 an hour and add new permits for every shop.'
  const business = simulateReaction(engine, book, message, persona('small-business-owner'))
  t.match(business, { reaction: 'opposed', relevance: 0.5, missing: ['taxes', 'cost of living'] })
  t.ok(business.feeling < 0)
  t.same(business.objections, ['Any rise in minimum wage is the last thing I can afford.', 'Any rise in permits is the last thing I can afford.', 'And what will all this cost me in taxes?'])
  t.match(business.quote, /minimum wage/)
  const union = simulateReaction(engine, book, message, persona('union-worker'))
  t.match(union, { reaction: 'supportive', addressed: [{ concern: 'jobs and economy', priority: true }] })
  t.ok(union.feeling > 0)
  const parent = simulateReaction(engine, book, message, persona('parent'))
  t.match(parent, { reaction: 'indifferent', relevance: 0, feeling: 0, objections: ['What about our schools?', 'And how does this keep our streets safe?', 'Who is going to help with childcare?'] })
  t.equal(simulateReaction(engine, book, message, persona('parent')).quote, parent.quote, 'the same message gives the same quote')
  const seniors = simulateReaction(engine, book, 'We will not raise property taxes, and we will hire more police.', persona('retired-homeowner'))
  t.match(seniors, { reaction: 'supportive', addressed: [{ concern: 'taxes' }, { concern: 'public safety' }] })
})

t.test('through the API: sessions per user, resumed and listed; the simulator; 400, 413, 404', async t => {
  const { login, call } = await campaignApp(t)
  const [volunteer, readonly] = [await login('volunteer'), await login('readonly')]

  const ingested = await call<{ document_id: string, source: string, passage_count: number, issues: string[], engine: string }>('policy-ingest', { title: PLATFORM_TITLE, text: PLATFORM.join('\n\n'), source: 'platform.pdf' })
  t.match(ingested, { source: 'policy: platform.pdf', passage_count: 4, engine: /^local/ })
  t.ok(ingested.issues.includes('housing'))
  await call('kb-ingest', { title: ATTACK_TITLE, text: ATTACK, source: 'Metro Watch' })

  interface Chat { session_id: string, answer: string, found: boolean, answer_method: string, citations: Array<{ title: string, source: string }>, sources: string[], turn_count: number, resource_id: string, engine: string }
  const first = await call<Chat>('policy-chat', { message: 'How many affordable homes will you build?' }, volunteer)
  t.match(first, { found: true, answer_method: 'extractive', turn_count: 2, engine: /^local/, sources: [`[1] ${PLATFORM_TITLE}, passage 1`] })
  t.match(first.answer, /^We will build 5,000 affordable homes near transit stations by 2030\..*\[1\]$/)
  t.equal(first.resource_id, `${first.session_id}/2`)
  const second = await call<Chat>('policy-chat', { session_id: first.session_id, message: 'And by when?' }, volunteer)
  t.match(second, { session_id: first.session_id, found: true, turn_count: 4 })
  t.match(second.answer, /by 2030/, 'the follow-up is read with the previous question')
  const rent = await call<Chat>('policy-chat', { message: 'What is the cap on rent increases?' }, volunteer)
  t.match(rent, { found: true, answer: /capped at 3 percent/ })
  const fishing = await call<Chat>('policy-chat', { session_id: rent.session_id, message: 'What is the position on fishing licences?' }, volunteer)
  t.match(fishing, { found: false, answer: NOT_FOUND_ANSWER, sources: [] }, 'a question with its own subject is not answered from the previous one\'s')
  const seniors = await call<Chat>('policy-chat', { session_id: rent.session_id, message: 'And for seniors?' }, volunteer)
  t.match(seniors, { found: true, answer: /seniors/ }, 'a follow-up still leans on the conversation')
  const outside = await call<Chat>('policy-chat', { message: 'Who calls the plan a costly failure?' }, volunteer)
  t.match(outside, { found: false, answer: NOT_FOUND_ANSWER, answer_method: 'none', citations: [], sources: [] }, 'the attack is not policy: nothing invented')
  t.match(await call('record-feedback', { module_id: 'policy-chatbot', resource_id: first.resource_id, is_positive: true, is_active: true }, volunteer), { recorded: true })

  interface Listed { sessions: Array<{ session_id: string, title: string, turn_count: number, last_message: string, turns?: Array<{ role: string, text: string }> }>, next_cursor: string | null }
  const mine = await call<Listed>('list-policy-sessions', {}, volunteer)
  t.same(mine.sessions.map(s => s.session_id), [outside.session_id, rent.session_id, first.session_id], 'newest first')
  t.match(mine.sessions[2], { title: 'How many affordable homes will you build?', turn_count: 4, last_message: second.answer.slice(0, 200) })
  t.equal(mine.sessions[1].turns, undefined, 'listed without turns')
  const paged = await call<Listed>('list-policy-sessions', { limit: 1 }, volunteer)
  t.equal(paged.sessions.length, 1)
  const rest = await call<Listed>('list-policy-sessions', { limit: 2, cursor: paged.next_cursor }, volunteer)
  t.same(rest.sessions.map(s => s.session_id), [rent.session_id, first.session_id])
  const one = await call<Listed>('list-policy-sessions', { session_id: first.session_id }, volunteer)
  t.same(one.sessions[0].turns?.map(turn => turn.role), ['user', 'assistant', 'user', 'assistant'], 'one session with its turns')
  t.same((await call<Listed>('list-policy-sessions', {})).sessions, [], 'staff sees none of the volunteer\'s sessions')
  await t.rejects(call('policy-chat', { session_id: first.session_id, message: 'Hi' }), new ServerFunctionError(404, `no policy chat session "${first.session_id}"`), 'someone else\'s session is 404')
  t.equal(await statusOf(call('list-policy-sessions', { session_id: first.session_id })), 404)
  t.equal(await statusOf(call('policy-chat', { session_id: 'nope', message: 'Hi' }, volunteer)), 404)
  t.equal(await statusOf(call('policy-ingest', { title: 'X', text: 'Y' }, volunteer)), 403, 'volunteers ask, staff add')

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

  interface Simulated { reactions: Array<{ persona: { id: string }, reaction: string, quote: string, objections: string[], suggestion: { concern: string, cite: number, sentence: string } | null }>, summary: Record<string, number>, sources: string[], note: string, resource_id: string, engine: string }
  const simulated = await call<Simulated>('simulate-reaction', { message: 'We will raise the minimum wage to $20 an hour and add new permits for every shop.' }, readonly)
  t.same(simulated.reactions.map(r => [r.persona.id, r.reaction]), [['retired-homeowner', 'indifferent'], ['young-renter', 'supportive'], ['small-business-owner', 'opposed'], ['parent', 'indifferent'], ['union-worker', 'supportive']])
  t.match(simulated.summary, { supportive: 2, opposed: 1, mixed: 0, indifferent: 2 })
  t.match(simulated.reactions[0].suggestion, { concern: 'taxes', cite: 1, sentence: 'Property taxes for seniors will be frozen for homeowners over 65.' }, 'a cited line for the missing priority')
  t.match(simulated, { sources: [`[1] ${PLATFORM_TITLE}, passage 3`], note: /heuristic simulation, not a model/, resource_id: /^[0-9a-f]{16}$/, engine: /^local/ })
  const custom = await call<Simulated>('simulate-reaction', { message: 'We will double bus service.', personas: ['parent', { name: 'Commuter', concerns: ['transportation'], priorities: ['transportation'], gains: ['bus'] }] }, readonly)
  t.same(custom.reactions.map(r => [r.persona.id, r.reaction]), [['parent', 'indifferent'], ['commuter-2', 'supportive']])
  await t.rejects(call('simulate-reaction', { message: 'Hi', personas: ['astronaut'] }), { status: 400, message: /^invalid arguments: \/personas\/0: no default persona "astronaut"/ })
  await t.rejects(call('simulate-reaction', { message: 'Hi', personas: [{ name: 'A', concerns: ['housing'], priorities: ['taxes'] }] }),
    new ServerFunctionError(400, 'invalid arguments: /personas/0/priorities: "taxes" is not one of the persona\'s concerns'))
  t.equal(await statusOf(call('simulate-reaction', { message: 'Hi' }, volunteer)), 403)

  await t.rejects(call('policy-chat', { message: '' }, volunteer), { status: 400, message: /^invalid arguments: \/message/ })
  await t.rejects(call('policy-chat', { message: 'x'.repeat(100_001) }, volunteer), new ServerFunctionError(413, 'message is 100,001 characters; at most 100,000 are analysed at once'))
  t.equal(await statusOf(call('simulate-reaction', { message: 'x'.repeat(100_001) })), 413)
  t.equal(await statusOf(call('coaching-exchange', { mode: 'debate', message: 'Hi', session_id: first.session_id })), 404, 'a policy chat is no coaching session')
})

t.test('with a generative provider (a stand-in OpenAI-compatible server), and while it is down', async t => {
  const standIn = await startChatStandIn(t, request => {
    const system = request.body.messages[0].content
    if (system.includes('debate opponent')) return 'REBUTTAL: The plan would cost taxpayers $2 billion [1].\nQUESTION: Who pays?'
    if (system.includes('role-play one voter')) return 'I rent, so this matters to me.'
    if (system.includes('coach')) return 'Lead with the figure [1].'
    return 'The platform builds 5,000 homes by 2030 [1].'
  })
  const kernel = await testKernel(t, { plugins: [devIdp, campaign], config: withDevIdp({ generator_url: standIn.url, generator_model: 'stand-in' }) })
  const baseUrl = kernel.url('app')
  const staffUser = (kernel.service('campaign').devIdp?.users ?? []).find(u => u.role === 'staff') as { username: string, password: string }
  const { cookie } = await scriptedLogin(baseUrl, staffUser)
  const call = async <T> (name: string, args: object): Promise<T> => await callServerFunction<T>(name, args, { baseUrl, headers: { cookie } })
  const engine = `generative (stand-in at ${standIn.host})`
  await call('policy-ingest', { title: PLATFORM_TITLE, text: PLATFORM.join('\n\n') })
  await call('kb-ingest', { title: ATTACK_TITLE, text: ATTACK })

  const first = await call<{ session_id: string, answer: string, answer_method: string, citations: unknown[], engine: string }>('policy-chat', { message: 'How many affordable homes will you build?' })
  t.match(first, { answer: 'The platform builds 5,000 homes by 2030 [1].', answer_method: 'generative', engine })
  await call('policy-chat', { session_id: first.session_id, message: 'And by when?' })
  t.equal(standIn.received.length, 2)
  const prompt = standIn.received[1].body.messages.map(m => m.content).join('\n')
  t.match(prompt, `[1] ${PLATFORM_TITLE}: We will build 5,000 affordable homes`, 'the cited passage is sent')
  t.match(prompt, 'User: How many affordable homes will you build?\nAssistant: The platform builds 5,000 homes by 2030 [1].', 'and the recent turns')
  t.match(prompt, 'Question: And by when?')
  const outside = await call<{ answer: string, engine: string }>('policy-chat', { message: 'What about space exploration?' })
  t.match(outside, { answer: NOT_FOUND_ANSWER }, 'nothing found: the provider is not asked')
  t.equal(standIn.received.length, 2)

  const debate = await call<{ debate: { rebuttal: string, question: string, counter_point: { title: string } }, sources: string[], engine: string }>('coaching-exchange', { mode: 'debate', topic: 'housing', message: 'Our housing plan is a great success for renters and families.' })
  t.match(debate, { debate: { rebuttal: 'The plan would cost taxpayers $2 billion [1].', question: 'Who pays?', counter_point: { title: ATTACK_TITLE } }, sources: [`[1] ${ATTACK_TITLE}, passage 1`], engine })
  t.match(standIn.received[2].body.messages[1].content, `[1] ${ATTACK_TITLE}: ${ATTACK}`, 'the counter-point\'s passage comes first')

  const simulated = await call<{ reactions: Array<{ quote: string, reaction: string }>, engine: string }>('simulate-reaction', { message: 'We will freeze rents and build homes near transit.', personas: ['young-renter', 'parent'] })
  t.same(simulated.reactions.map(r => r.quote), ['I rent, so this matters to me.', 'I rent, so this matters to me.'])
  t.same(simulated.reactions.map(r => r.reaction), ['supportive', 'indifferent'], 'the measurements stay heuristic')
  t.equal(simulated.engine, engine)
  t.match(standIn.received.at(-1)?.body.messages[1].content, /Voter: (Young renter|Parent of two)/)

  await standIn.stop()
  const down = await call<{ answer_method: string, engine: string, fallback_note: string }>('policy-chat', { message: 'How many affordable homes will you build?' })
  t.match(down, { answer_method: 'extractive', engine: /^local/, fallback_note: new RegExp(`^the generative provider at ${standIn.url.replace(/\./g, '\\.')} cannot be reached: .*; this answer is the local engine's\\.$`) }, 'the provider down: answered from the platform by the local engine, with a note')
  t.same((await call<{ sessions: Array<{ turn_count: number }> }>('list-policy-sessions', {})).sessions.map(s => s.turn_count), [2, 2, 4], 'the exchange answered locally is stored in a new session')
})
