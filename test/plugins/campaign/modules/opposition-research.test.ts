// Opposition research: statements grouped by topic, the reversal and the negated promise found; then
// through the API, statements stored by the briefing, opponents listed, contradictions detected.
import t from 'tap'
import { ServerFunctionError } from '../../../../plugins/campaign/client.js'
import { localEngine } from '../../../../plugins/campaign/language/local-engine.js'
import { analyseStatements, type Statement } from '../../../../plugins/campaign/modules/opposition-research/opponent-statements.js'
import { statusOf } from '../../../support/campaign.js'
import { STATEMENTS, writingApp } from '../fixtures/composition.js'

t.test('opposition research: statements grouped by topic, the reversal and the negated promise found', async t => {
  const engine = await localEngine()
  const statements: Statement[] = STATEMENTS.map((s, i) => ({ statement_id: `s${i + 1}`, opponent: 'Dan Reyes', opponent_key: 'dan reyes', ...s, added_by: '', added_at: '2026-11-01T00:00:00Z' }))
  const analysis = analyseStatements(engine, [...statements].reverse())
  t.same(analysis.topics.map(x => [x.topic, x.label, x.statements.map(q => q.statement_id)]), [['bridge toll', 'shifting', ['s1', 's2']], ['property', 'shifting', ['s3', 's4']]],
    '"never raise property taxes" and "must raise property taxes" read as opposite opinions')
  t.same(analysis.other, [{ issue: 'environment', statements: [{ statement_id: 's5', said_on: '2025-06-01', source: 'newsletter', stance: 0, quote: STATEMENTS[4].text }] }], 'parks: a topic of one statement, filed by issue')
  t.same(analysis.contradictions.map(c => [c.contradiction_id, c.topic, c.reasons, c.strength]), [
    ['s1~s2', 'bridge toll', ['opposite stance'], 0.75],
    ['s3~s4', 'property', ['opposite stance', 'negation mismatch'], 0.4]
  ], 'strength |0.625 − (−0.875)| / 2 for the toll; 0.5 × 0.8 for one-term "property"')
  t.match(analysis.contradictions[0], { earlier: { said_on: '2025-03-01', source: 'Herald interview', stance: 0.625 }, later: { said_on: '2026-01-10', source: 'town hall', stance: -0.875 } })
  t.same(analyseStatements(engine, statements.slice(2, 4).map(s => ({ ...s, text: s.text.replace('never raise', 'not cut') }))).contradictions, [], '"not cut" and "raise" share no negated term')
})

t.test('through the API', async t => {
  const { call, readonly, feedback } = await writingApp(t)

  await t.test('opposition research: statements stored by the briefing, opponents listed, contradictions detected', async t => {
    await call('analyze-article', { title: 'Dan Reyes flips on the bridge toll', outlet: 'Harbor Herald', published_at: '2026-02-02T08:00:00Z', text: 'Dan Reyes now opposes the bridge toll he once praised. Critics called the reversal cynical and dishonest.' })
    interface OppBriefing { resource_id: string, opponent: string, added: number, duplicates: number, statement_count: number, summary: string, topics: Array<{ topic: string, label: string, sources: string[], our_position: Array<{ text: string }> }>, contradictions: Array<{ topic: string }>, media: { matched: number, items: Array<{ title: string }> }, engine: string }
    const first = await call<OppBriefing>('generate-opposition-briefing', { opponent: 'Dan Reyes', statements: STATEMENTS.slice(0, 3) })
    t.match(first, { added: 3, statement_count: 3, contradictions: [{ topic: 'bridge toll' }], media: { matched: 1, items: [{ title: 'Dan Reyes flips on the bridge toll' }] }, engine: /^local/ })
    const briefing = await call<OppBriefing>('generate-opposition-briefing', { opponent: 'dan  reyes', statements: STATEMENTS })
    t.match(briefing, { opponent: 'Dan Reyes', added: 2, duplicates: 3, statement_count: 5 })
    t.same(briefing.contradictions.map(c => c.topic), ['bridge toll', 'property'])
    t.match(briefing.topics[0], { topic: 'bridge toll', label: 'shifting', our_position: [{ text: /bridge toll/ }] })
    t.match(briefing.topics[0].sources[0], /^statement \S+ \(Herald interview, 2025-03-01\)$/)
    t.match(briefing.summary, /^Dan Reyes: 5 statement\(s\), 2025-03-01 to 2026-02-01\. Shifting on: bridge toll, property\./)
    await feedback('opposition-research', briefing.resource_id)

    interface Opponents { total: number, opponents: Array<{ opponent: string, statements: number, first_said_on: string, last_said_on: string, sources: number }> }
    const listed = await call<Opponents>('list-opponents', {}, readonly)
    t.match(listed, { total: 1, opponents: [{ opponent: 'Dan Reyes', statements: 5, first_said_on: '2025-03-01', last_said_on: '2026-02-01', sources: 5 }] })
    t.same((await call<Opponents>('list-opponents', { search: 'nobody' })).opponents, [])
    interface Contradictions { statements: number, total: number, contradictions: Array<{ resource_id: string, topic: string, strength: number, sources: string[] }> }
    const found = await call<Contradictions>('detect-contradictions', { opponent: 'DAN REYES' }, readonly)
    t.same(found.contradictions.map(c => [c.topic, c.strength]), [['bridge toll', 0.75], ['property', 0.4]])
    t.match(found.contradictions[0].sources, [/Herald interview, 2025-03-01/, /town hall, 2026-01-10/])
    t.same((await call<Contradictions>('detect-contradictions', { opponent: 'Dan Reyes', topic: 'property' })).contradictions.map(c => c.topic), ['property'])
    await t.rejects(call('detect-contradictions', { opponent: 'Nobody Known' }), new ServerFunctionError(404, 'no statements of opponent "Nobody Known": add them with generate-opposition-briefing', 'BERTH_NOT_FOUND'))
    const long = 'The toll is bad. '.repeat(6000)
    await t.rejects(call('generate-opposition-briefing', { opponent: 'Dan Reyes', statements: [{ text: long }] }), new ServerFunctionError(413, `statements/0/text is ${long.length.toLocaleString('en-US')} characters; at most 100,000 are analysed at once`, 'BERTH_PAYLOAD_TOO_LARGE'))
    await t.rejects(call('generate-opposition-briefing', { opponent: 'Dan Reyes', statements: [{ text: 'x', said_on: 'spring' }] }), new ServerFunctionError(400, 'invalid arguments: /statements/0/said_on: expected an ISO 8601 date or UTC time, got "spring"', 'BERTH_BAD_REQUEST'))
    t.equal(await statusOf(call('generate-opposition-briefing', { opponent: 'Dan Reyes' }, readonly)), 403, 'readonly adds no statements')
  })
})
