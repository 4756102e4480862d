// Question anticipation: planted questions of every kind come out, cited, with the answers the
// knowledge base holds; the preparation checklist in due order; then both through the API.
import t from 'tap'
import { ServerFunctionError } from '../../../../plugins/campaign/client.js'
import { localEngine } from '../../../../plugins/campaign/language/local-engine.js'
import { anticipate, focusTerms, onFocus } from '../../../../plugins/campaign/modules/question-anticipation/anticipation.js'
import { deadlineItems, gapItems, loadLogistics, logisticsItems, orderItems } from '../../../../plugins/campaign/modules/question-anticipation/preparation.js'
import type { StoredRegulation } from '../../../../plugins/campaign/modules/regulatory-monitor/regulatory-monitor.js'
import { SourceList } from '../../../../plugins/campaign/grounding/source-list.js'
import { campaignApp, statusOf } from '../../../support/campaign.js'
import { commitment, HOUSING_PLAN, kbOf, postsOf, storeReviewRecords } from '../fixtures/review.js'

t.test('question anticipation: every kind of planted question comes out, cited, with the answers the knowledge base holds', async t => {
  const engine = await localEngine()
  const focus = focusTerms(engine, 'Town hall on housing and rent in Eastside')
  t.same(focus, ['housing', 'rent', 'eastside'], 'the kind of event is not the topic')
  const posts = postsOf(engine).filter(p => onFocus(p, focus))
  t.equal(posts.length, 8, 'the market post is off the topic')
  const sources = new SourceList()
  const questions = anticipate({
    engine, kb: kbOf(HOUSING_PLAN.split('\n\n')), posts, focus, focusIssues: ['housing'], audience: focusTerms(engine, 'Eastside renters'),
    commitments: [commitment(), commitment({ commitment_id: 'c2', text: 'We will repaint the library', promise: 'repaint the library', due_on: '2026-01-01' }), commitment({ commitment_id: 'c3', status: 'kept' })],
    day: '2026-05-10', sources, limit: 10
  })
  t.same(questions.map(q => [q.kind, q.question]), [
    ['narrative', 'What do you say to people who say “The rent is unaffordable and landlords are greedy”?'],
    ['local-issue', 'What will you do about housing in Eastside?'],
    ['tension', 'Where do you stand on housing plan? People are split: 2 for, 2 against.'],
    ['asked', 'Why is rent going up every year in Eastside?'],
    ['commitment', 'What happened to Maria Lopez\'s promise to build 500 affordable homes by March 2026?']
  ], 'one of each kind, the rent narrative first (every post on rent reads negative); the library promise is off the topic and the kept one is not asked about')
  const [asked, promise, tension] = (['asked', 'commitment', 'tension'] as const).map(kind => questions.find(q => q.kind === kind) as (typeof questions)[number])
  t.match(asked, { score: 0.938, why: 'asked in 2 posts by 2 people' }, '0.5 + 0.5 × 1/4, boosted by half as both askers are in Eastside')
  t.same(asked.evidence.map(e => sources.lines[e.cite - 1]), ['[1] post by ana on fb, 2026-05-01: “Why is rent going up every year in Eastside? Somebody has to act.”', '[2] post by ben on x, 2026-05-02: “Why does rent keep going up in Eastside?”'])
  t.same(asked.answer, { text: 'No prepared answer in the knowledge base.', found: false, method: 'none', cites: [] }, '"rents" is not "rent": nothing addresses it')
  t.match(promise, { score: 0.8, why: 'a commitment overdue since 2026-03-31 (accountability)' })
  t.match(promise.answer, { found: true, method: 'extractive', text: /^Housing plan: Maria Lopez will freeze rents .* \[\d+\]$/ })
  t.match(sources.lines[promise.answer.cites[0] - 1], /^\[\d+\] Housing plan, passage 1$/, 'the answer cites the passage as kb-query does')
  t.match(tension.evidence.map(e => e.text), ['I love the new housing plan, finally homes near transit!', 'The new housing plan is terrible, the developers get everything.'], 'one quote from each side')
})

t.test('preparation checklist: knowledge-base gaps, deadlines near the day, logistics of the event kind, in due order', async t => {
  const engine = await localEngine()
  const sources = new SourceList()
  const kb = kbOf(HOUSING_PLAN.split('\n\n'))
  t.same(gapItems(engine, kb, ['affordable homes', 'broadband'], '2026-05-10', sources).map(i => [i.text, i.status, i.due_on]), [
    ['Review the briefing on “affordable homes”', 'ready', '2026-05-07'],
    ['Add a briefing on “broadband” to the knowledge base: no passage covers it', 'gap', '2026-05-07']
  ])
  const analysis = (title: string, deadlines: StoredRegulation['deadlines']): StoredRegulation => ({ regulation_id: title, title, jurisdiction: 'State', deadlines } as unknown as StoredRegulation)
  const deadlines = deadlineItems([analysis('Reporting Act', [
    { section: 'SECTION 2', clause: 'Each committee shall file a pre-election report no later than May 20, 2026.', text: 'no later than May 20, 2026', kind: 'date', date: '2026-05-20' },
    { section: 'SECTION 3', clause: 'A report is due by December 1, 2026.', text: 'by December 1, 2026', kind: 'date', date: '2026-12-01' },
    { section: 'SECTION 4', clause: 'Within 30 days after the election.', text: 'within 30 days', kind: 'period', days: 30 }
  ])], '2026-05-10', sources)
  t.same(deadlines.map(i => [i.due_on, i.text]), [['2026-05-20', 'Regulatory deadline (no later than May 20, 2026): Each committee shall file a pre-election report no later than May 20, 2026.']], 'only calendar deadlines within 14 days')
  const logistics = logisticsItems(loadLogistics(), 'Town hall on housing', '2026-05-10', sources)
  t.ok(logistics.some(i => i.text === 'Test the microphones, the sound and the projector' && i.due_on === '2026-05-10'), 'a town-hall item')
  t.notOk(logistics.some(i => i.text.startsWith('Agree the format')), 'no debate item at a town hall')
  t.equal(logistics.find(i => i.text.startsWith('Send the thank-you notes'))?.due_on, '2026-05-12', 'negative days_before: after the event')
  const ordered = orderItems([...logistics, ...deadlines])
  t.same([ordered[0].due_on, ordered.at(-1)?.due_on], ['2026-04-26', '2026-05-20'], 'by due day')
})

t.test('through the API', async t => {
  const { login: cookie, call } = await campaignApp(t)
  const readonly = await cookie('readonly')
  await storeReviewRecords(call)

  await t.test('anticipate-questions reads the posts, commitments and knowledge base; preparation-checklist stores a checklist', async t => {
    interface Anticipated { posts_read: number, questions: Array<{ question_id: string, kind: string, question: string, evidence: Array<{ cite: number }>, answer: { found: boolean, text: string } }>, sources: string[], resource_id: string, engine: string }
    const found = await call<Anticipated>('anticipate-questions', { event: 'Town hall on housing in Eastside', audience: 'Eastside renters', date: '2026-05-10', from: '2026-04-01', to: '2026-05-09T23:59:59Z' }, readonly)
    t.equal(found.posts_read, 8)
    t.same(found.questions.map(q => q.kind).sort(), ['asked', 'commitment', 'local-issue', 'narrative', 'tension'])
    t.ok(found.questions.every(q => q.evidence.length > 0 && q.evidence.every(e => found.sources[e.cite - 1] !== undefined)), 'every question cites its evidence')
    t.match(found.questions.find(q => q.kind === 'commitment'), { question: 'What happened to Maria Lopez\'s promise to build 500 affordable homes by March 2026?', answer: { found: true } })
    t.match(found.sources.join('\n'), /\[\d+\] commitment by Maria Lopez, said 2025-06-01 \(launch speech\)/)
    t.match(found, { engine: /^local/, resource_id: /^[0-9a-f]{16}$/ })
    t.equal(await statusOf(call('anticipate-questions', { date: 'next Tuesday' })), 400, 'a date that is no day')
    await t.rejects(call('anticipate-questions', { from: '2026-05-09', to: '2026-05-01' }), new ServerFunctionError(400, 'invalid arguments: /to: comes before from', 'BERTH_BAD_REQUEST'))

    interface Checklist { checklist_id: string, resource_id: string, items: Array<{ section: string, text: string, status: string, due_on: string | null }>, counts: Record<string, number>, sources: string[], engine: string }
    const list = await call<Checklist>('preparation-checklist', { event: 'Town hall on housing in Eastside', date: '2026-05-10', topics: ['affordable homes', 'broadband'] })
    t.equal(list.resource_id, list.checklist_id)
    t.ok(list.items.some(i => i.section === 'deadline' && i.due_on === '2026-05-20'), 'the stored bill\'s deadline is near the day')
    t.ok(list.items.some(i => i.section === 'knowledge-gap' && i.status === 'gap' && i.text.includes('broadband')))
    t.ok(list.items.some(i => i.section === 'question' && i.status === 'gap' && i.text.includes('Why is rent going up every year in Eastside?')))
    t.ok(list.items.some(i => i.section === 'logistics' && i.text.startsWith('Test the microphones')))
    t.equal(list.counts.total, list.items.length)
    t.match(await call('record-feedback', { module_id: 'question-anticipation', resource_id: list.resource_id, is_positive: true, is_active: true }), { recorded: true, updated_at: /Z$/ })
    t.equal(await statusOf(call('preparation-checklist', { event: 'Town hall' }, readonly)), 403, 'readonly does not store')
    await t.rejects(call('preparation-checklist', { event: 'Town hall', topics: ['  '] }), new ServerFunctionError(400, 'invalid arguments: /topics/0: must not be blank', 'BERTH_BAD_REQUEST'))
  })
})
