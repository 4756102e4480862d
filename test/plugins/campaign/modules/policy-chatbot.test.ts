// The policy chatbot: answers retrieved from policy documents only, extractive, cited, follow-ups,
// nothing invented, off-topic questions unanswered (the held-out labelled questions at their floor);
// then through the API, follow-ups read with the last answered subject, sessions per user, resumed and
// listed (400, 413, 404).
import t from 'tap'
import { localEngine } from '../../../../plugins/campaign/language/local-engine.js'
import { addressingPassages } from '../../../../plugins/campaign/grounding/counter-message.js'
import { answerSentences } from '../../../../plugins/campaign/grounding/grounding.js'
import { answeringSources, composeAnswer, isPolicyDocument, lastSubject, MIN_COVERAGE, NOT_FOUND_ANSWER, policyQueries, policySource } from '../../../../plugins/campaign/modules/policy-chatbot/policy-answer.js'
import { accuracy, policyFixtureKb, readPolicyQuestions } from '../../../../bench/policy-question-set.js'
import { ServerFunctionError } from '../../../../plugins/campaign/client.js'
import { campaignApp, statusOf } from '../../../support/campaign.js'
import { ATTACK, ATTACK_TITLE, KB, PLATFORM, PLATFORM_TITLE } from '../fixtures/conversation.js'

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

t.test('off-topic questions are not answered: the held-out labelled questions (bench/policy-relevance.ts) at their floor', async t => {
  const engine = await localEngine()
  const kb = policyFixtureKb()
  const found = (question: string): boolean => answeringSources(engine, addressingPassages(engine, kb, [question]), [question]).length > 0
  const ticket = 'How much does a ticket to the football game cost?'
  t.match(addressingPassages(engine, kb, [ticket]), [{ sentence: 'A monthly pass will cost $20 for everyone else.' }], 'one shared word retrieves a fare')
  t.notOk(found(ticket), `but the passage holds less than ${MIN_COVERAGE.toFixed(2)} of what the question asks about`)
  t.ok(found('How much will a monthly bus pass cost?'), 'the question it does answer')
  const heldOut = readPolicyQuestions().filter(q => q.heldOut)
  const result = accuracy(heldOut, found)
  t.ok(heldOut.length >= 20 && heldOut.some(q => !q.onTopic), `${heldOut.length} held-out questions`)
  t.ok(result.right / result.all >= 0.85, `held-out: ${result.right}/${result.all} right`)

  const turns = [
    { role: 'user', text: 'How many homes?' }, { role: 'assistant', text: '…', meta: { found: true, method: 'extractive' as const } },
    { role: 'user', text: 'Who won the game?' }, { role: 'assistant', text: NOT_FOUND_ANSWER, meta: { found: false, method: 'none' as const } }
  ]
  t.equal(lastSubject(turns), 'How many homes?', 'a turn that found nothing is skipped')
  t.equal(lastSubject([...turns, { role: 'user', text: 'And by when?' }, { role: 'assistant', text: '…', meta: { found: true, method: 'extractive' as const, subject: 'How many homes?' } }]), 'How many homes?', 'a follow-up keeps its subject')
  t.equal(lastSubject(turns.slice(2)), undefined)
})

t.test('through the API', async t => {
  const { login, call } = await campaignApp(t)
  const volunteer = await login('volunteer')

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
  await call('policy-ingest', { title: 'Moving Riverside', text: 'Fares will be free for students and seniors. A monthly pass will cost $20 for everyone else.' })
  const homes = await call<Chat>('policy-chat', { message: 'How many affordable homes will you build?' }, volunteer)
  const game = await call<Chat>('policy-chat', { session_id: homes.session_id, message: 'How much does a ticket to the football game cost?' }, volunteer)
  t.match(game, { found: false, answer: NOT_FOUND_ANSWER, sources: [] }, 'an off-topic question sharing a word with a fare is not answered')
  const when = await call<Chat>('policy-chat', { session_id: homes.session_id, message: 'And by when?' }, volunteer)
  t.match(when, { found: true, answer: /by 2030/ }, 'a follow-up after an off-topic turn is read with the last answered subject')
  const where = await call<Chat>('policy-chat', { session_id: homes.session_id, message: 'And where?' }, volunteer)
  t.match(where, { found: true, answer: /near transit stations/ }, 'and so is the next one')
  const outside = await call<Chat>('policy-chat', { message: 'Who calls the plan a costly failure?' }, volunteer)
  t.match(outside, { found: false, answer: NOT_FOUND_ANSWER, answer_method: 'none', citations: [], sources: [] }, 'the attack is not policy: nothing invented')
  t.match(await call('record-feedback', { module_id: 'policy-chatbot', resource_id: first.resource_id, is_positive: true, is_active: true }, volunteer), { recorded: true })

  interface Listed { sessions: Array<{ session_id: string, title: string, turn_count: number, last_message: string, turns?: Array<{ role: string, text: string }> }>, next_cursor: string | null }
  const mine = await call<Listed>('list-policy-sessions', {}, volunteer)
  t.same(mine.sessions.map(s => s.session_id), [outside.session_id, homes.session_id, rent.session_id, first.session_id], 'newest first')
  t.match(mine.sessions[3], { title: 'How many affordable homes will you build?', turn_count: 4, last_message: second.answer.slice(0, 200) })
  t.equal(mine.sessions[2].turns, undefined, 'listed without turns')
  const paged = await call<Listed>('list-policy-sessions', { limit: 1 }, volunteer)
  t.equal(paged.sessions.length, 1)
  const rest = await call<Listed>('list-policy-sessions', { limit: 3, cursor: paged.next_cursor }, volunteer)
  t.same(rest.sessions.map(s => s.session_id), [homes.session_id, rent.session_id, first.session_id])
  const one = await call<Listed>('list-policy-sessions', { session_id: first.session_id }, volunteer)
  t.same(one.sessions[0].turns?.map(turn => turn.role), ['user', 'assistant', 'user', 'assistant'], 'one session with its turns')
  t.same((await call<Listed>('list-policy-sessions', {})).sessions, [], 'staff sees none of the volunteer\'s sessions')
  await t.rejects(call('policy-chat', { session_id: first.session_id, message: 'Hi' }), new ServerFunctionError(404, `no policy chat session "${first.session_id}"`, 'BERTH_NOT_FOUND'), 'someone else\'s session is 404')
  t.equal(await statusOf(call('list-policy-sessions', { session_id: first.session_id })), 404)
  t.equal(await statusOf(call('policy-chat', { session_id: 'nope', message: 'Hi' }, volunteer)), 404)
  t.equal(await statusOf(call('policy-ingest', { title: 'X', text: 'Y' }, volunteer)), 403, 'volunteers ask, staff add')

  await t.rejects(call('policy-chat', { message: '' }, volunteer), { status: 400, message: /^invalid arguments: \/message/ })
  await t.rejects(call('policy-chat', { message: 'x'.repeat(100_001) }, volunteer), new ServerFunctionError(413, 'message is 100,001 characters; at most 100,000 are analysed at once', 'BERTH_PAYLOAD_TOO_LARGE'))
  t.equal(await statusOf(call('coaching-exchange', { mode: 'debate', message: 'Hi', session_id: first.session_id })), 404, 'a policy chat is no coaching session')
})
