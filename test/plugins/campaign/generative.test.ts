// The generative paths against a stand-in OpenAI-compatible server (a small local server: no model can
// be downloaded here), module by module, and once it is stopped the local engine with a fallback note.
import t from 'tap'
import { NOT_FOUND_ANSWER } from '../../../plugins/campaign/modules/policy-chatbot/policy-answer.js'
import { campaignApp } from '../../support/campaign.js'
import { startChatStandIn } from '../../support/chat-standin.js'
import { POLICY_A, POLICY_B } from '../../../plugins/campaign/modules/policy-diff/examples.js'
import { TOLL, TRANSIT } from './fixtures/composition.js'
import { ATTACK, ATTACK_TITLE, PLATFORM, PLATFORM_TITLE } from './fixtures/conversation.js'
import { HOUSING_PLAN, POSTS } from './fixtures/review.js'

t.test('multilingual, question anticipation, policy diff and compliance against a stand-in OpenAI-compatible server, and the local engine with a note once it is down', async t => {
  const standIn = await startChatStandIn(t, request => {
    const prompt = request.body.messages.map(m => m.content).join('\n')
    if (prompt.includes('Translate this text')) return 'Merci pour votre soutien. Les nids-de-poule seront réparés.'
    if (prompt.includes('suggested answer')) return [...prompt.matchAll(/^Q(\d+): /gm)].map(m => `A${m[1]}: An answer from the cited plan [${/\[(\d+)\] Housing plan/.exec(prompt)?.[1] ?? '0'}].`).join('\n')
    if (prompt.includes('policy text changed')) return '[B] makes disclosure mandatory and raises the threshold to $500.'
    return 'Dora Donor is near the limit.'
  })
  const { call } = await campaignApp(t, { generator_url: standIn.url, generator_model: 'stand-in' })
  const engine = `generative (stand-in at ${standIn.host})`

  const translated = await call<{ translation: string, translated: string, method: string, glossary_applied: unknown[], note: string, engine: string }>('translate-content', { text: 'Thank you for your support. The potholes will be fixed.', target_language: 'fr' })
  t.match(translated, { translation: 'Merci pour votre soutien. Les nids-de-poule seront réparés.', translated: 'full', method: 'generative', engine, note: /^Machine translation by generative \(stand-in/ })
  const sent = standIn.received[0].body.messages.map(m => m.content).join('\n')
  t.match(sent, /Translate this text from English into French\.[\s\S]*Thank you for your support → Merci pour votre soutien[\s\S]*The potholes will be fixed\./, 'the languages, the glossary terms and the text are sent')

  await call('ingest-posts', { posts: POSTS })
  await call('kb-ingest', { title: 'Housing plan', text: HOUSING_PLAN })
  interface Anticipated { questions: Array<{ answer: { found: boolean, method: string, text: string, cites: number[] } }>, engine: string }
  const anticipated = await call<Anticipated>('anticipate-questions', { topic: 'housing in Eastside', date: '2026-05-10', from: '2026-04-01', to: '2026-05-09T23:59:59Z' })
  t.equal(anticipated.engine, engine)
  const answered = anticipated.questions.filter(q => q.answer.found)
  t.ok(answered.length > 0 && answered.every(q => q.answer.method === 'generative' && /^An answer from the cited plan \[\d+\]\.$/.test(q.answer.text) && q.answer.cites.length === 1), 'each found answer drafted by the provider, citing the passage')
  t.ok(anticipated.questions.filter(q => !q.answer.found).every(q => q.answer.text === 'No prepared answer in the knowledge base.'), 'nothing drafted without a passage')
  t.match(standIn.received[1].body.messages[1].content, /Q1: .*\nWhy it is likely: .*\nSources:\n\[\d+\] Housing plan, passage 1: Housing plan: Maria Lopez will freeze rents/)

  const compared = await call<{ summary: string, summary_method: string, counts: { substantive: number }, engine: string }>('compare-policies', { a: { text: POLICY_A }, b: { text: POLICY_B } })
  t.match(compared, { summary: '[B] makes disclosure mandatory and raises the threshold to $500.', summary_method: 'generative', counts: { substantive: 3 }, engine })
  t.match(standIn.received[2].body.messages[1].content, /changed \(SECTION 1\. Contributions\.\): .* — in substance: “may” → “must” \(strengthened\); \$200 → \$500/)

  const year = new Date().toISOString().slice(0, 4)
  const report = await call<{ summary: string, summary_method: string, engine: string }>('generate-report', { period_from: `${year}-01-01`, period_to: `${year}-12-31` })
  t.match(report, { summary: 'Dora Donor is near the limit.', summary_method: 'generative', engine })

  await standIn.stop()
  const down = await call<{ method: string, engine: string, fallback_note: string }>('translate-content', { text: 'Thank you for your support.', target_language: 'es' })
  t.match(down, { method: 'glossary', engine: /^local/, fallback_note: new RegExp(`^the generative provider at http://${standIn.host.replace(/\./g, '\\.')}/v1 cannot be reached: .*; this answer is the local engine's\\.$`) }, 'the provider down: the glossary translation, with a note')
  t.match(await call('compare-policies', { a: { text: POLICY_A }, b: { text: POLICY_B } }), { summary_method: 'rules', fallback_note: /cannot be reached/ }, 'no silent fallback to the rules: a visible one')
})

t.test('the policy chatbot, coaching and debate, and the empathy simulator with a stand-in provider, and while it is down', async t => {
  const standIn = await startChatStandIn(t, request => {
    const system = request.body.messages[0].content
    if (system.includes('debate opponent')) return 'REBUTTAL: The plan would cost taxpayers $2 billion [1].\nQUESTION: Who pays?'
    if (system.includes('role-play one voter')) return 'I rent, so this matters to me.'
    if (system.includes('coach')) return 'Lead with the figure [1].'
    return 'The platform builds 5,000 homes by 2030 [1].'
  })
  const { call } = await campaignApp(t, { generator_url: standIn.url, generator_model: 'stand-in' })
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

t.test('campaign copy and briefings with a generative provider (a stand-in OpenAI-compatible server), and while it is down', async t => {
  const standIn = await startChatStandIn(t, request => request.body.messages[1].content.includes('Channel: an SMS')
    ? `HEADLINE: none\nTEXT: Free transit fares for students and seniors [1]. ${'Ride with us. '.repeat(20)}`
    : 'The bridge toll is contested [1].')
  const { call } = await campaignApp(t, { generator_url: standIn.url, generator_model: 'stand-in' })
  await call('kb-ingest', { title: 'Transit plan', text: TRANSIT })
  await call('kb-ingest', { title: 'Bridge toll', text: TOLL })

  const copy = await call<{ text: string, headline: string, clipped: boolean, method: string, engine: string, citation_lines: string[] }>('generate-copy', { topic: 'public transit', channel: 'sms', tone: 'urgent' })
  t.match(copy, { method: 'generative', engine: `generative (stand-in at ${standIn.host})`, headline: '', clipped: true, text: /^Free transit fares for students and seniors \[1\]\. Ride with us\./ })
  t.ok(copy.text.length <= 160, 'the answer is cut to the SMS limit')
  t.same(copy.citation_lines, ['[1] Transit plan, passage 2', '[2] Transit plan, passage 1'], 'the passages sent')
  const prompt = standIn.received[0].body.messages.map(m => m.content).join('\n')
  t.match(prompt, 'Channel: an SMS text message: at most 160 characters')
  t.match(prompt, '[1] Transit plan: Public transit fares will be free for students and seniors.', 'the cited passage is sent')
  t.match(prompt, 'End with this call to action: Reply YES to act today.\n')
  t.match(prompt, 'no opt-out instructions (no "Reply STOP"): this campaign does not receive them', 'no STOP asked for while replies are not received')
  t.notMatch(prompt, /\{\{|<!--/, 'every placeholder filled')

  const nothing = await call<{ method: string, engine: string }>('generate-copy', { topic: 'moon landing', channel: 'sms' })
  t.match(nothing, { method: 'none', engine: /^local/ }, 'nothing is sent without sources')
  t.equal(standIn.received.length, 1)

  const briefing = await call<{ summary: string, summary_method: string, engine: string }>('generate-briefing', { subject: 'bridge toll' })
  t.match(briefing, { summary: 'The bridge toll is contested [1].', summary_method: 'generative', engine: /^generative/ })
  t.match(standIn.received[1].body.messages[1].content, /Background from the knowledge base:\nThe bridge toll pays for the repairs of the Riverside bridge\. \[1\]/)

  await standIn.stop()
  const down = await call<{ method: string, engine: string, fallback_note: string }>('generate-copy', { topic: 'public transit', channel: 'email' })
  t.match(down, { method: 'extractive', engine: /^local/, fallback_note: new RegExp(`^the generative provider at ${standIn.url.replace(/\./g, '\\.')} cannot be reached: .*; this answer is the local engine's\\.$`) }, 'the provider down: the local engine writes it, and says so')
  const history = await call<{ total: number }>('list-copy-history', {})
  t.equal(history.total, 2, 'the local copy is stored')
})
