// Policy diff: a policy whose changes in substance are known, clauses aligned and what changed; then
// compare-policies through the API, on texts and on knowledge-base documents.
import t from 'tap'
import { ServerFunctionError } from '../../../../plugins/campaign/client.js'
import { localEngine } from '../../../../plugins/campaign/language/local-engine.js'
import { diffPolicies, figuresOf, modalOf, wordDiff } from '../../../../plugins/campaign/modules/policy-diff/clause-diff.js'
import { diffSummary } from '../../../../plugins/campaign/modules/policy-diff/policy-diff.js'
import { storeReviewRecords } from '../fixtures/review.js'
import { campaignApp } from '../../../support/campaign.js'
import { POLICY_A, POLICY_B } from '../../../../plugins/campaign/modules/policy-diff/examples.js'

t.test('policy diff: clauses aligned, and what changed in substance', async t => {
  const engine = await localEngine()
  const diff = diffPolicies(engine, POLICY_A, POLICY_B)
  t.same(diff.counts, { clauses_a: 5, clauses_b: 5, added: 1, removed: 1, changed: 3, unchanged: 1, substantive: 3 })
  t.same(diff.clauses.map(c => c.status), ['changed', 'unchanged', 'changed', 'changed', 'removed', 'added'])
  const [money, , volunteers, transit, removed, added] = diff.clauses
  t.same(money.substance, { figures: { before: ['$200'], after: ['$500'] }, modal: { before: { kind: 'permission', modal: 'may' }, after: { kind: 'obligation', modal: 'must' }, change: 'strengthened' } })
  t.same([money.removed_words, money.added_words], [['may', '$200'], ['must', '$500']])
  t.match(volunteers.substance, { modal: { change: 'reversed', after: { kind: 'prohibition', modal: 'may not' } }, negation: { negated: ['canvass'], unnegated: [] } })
  t.match(transit.substance, { stance: { change: 'more negative' } })
  t.ok((transit.substance.stance?.before ?? 0) > 0 && (transit.substance.stance?.after ?? 0) < 0, 'support → oppose')
  t.match(removed, { a: 'The campaign will hold a rally every month in the park.', b: null })
  t.match(added, { section_b: 'SECTION 4. Data.', b: 'The campaign shall delete voter data after the election.' })
  t.match(diffSummary(diff), /^\[B\] changes 3 of the 5 clauses of \[A\] \(3 in substance\), adds 1 and removes 1; 1 unchanged\. In substance: SECTION 1\. Contributions\. — “may” → “must” \(strengthened\); \$200 → \$500/)

  t.same(wordDiff('Reports are due in 30 days.', 'Reports are due in 60 days.'), [{ op: '=', text: 'Reports are due in' }, { op: '-', text: '30' }, { op: '+', text: '60' }, { op: '=', text: 'days.' }])
  t.same(figuresOf('Pay $1,000 within thirty days, 5% by June 1, 2027.'), ['$1,000', 'thirty days', '5%', 'june 1, 2027'])
  t.same(modalOf('Committees should file early.'), { kind: 'recommendation', modal: 'should' })
  t.equal(modalOf('Committees file early.'), null)
  t.same(diffPolicies(engine, POLICY_A, POLICY_A).counts.unchanged, 5, 'a text against itself')
})

t.test('through the API', async t => {
  const { login: cookie, call } = await campaignApp(t)
  const readonly = await cookie('readonly')
  await storeReviewRecords(call)

  await t.test('compare-policies: texts or knowledge-base documents; 404 for an unknown one', async t => {
    interface Compared { counts: Record<string, number>, clauses: Array<{ status: string }>, summary: string, summary_method: string, sources: string[], resource_id: string, engine: string }
    const compared = await call<Compared>('compare-policies', { a: { title: 'Platform 2025', text: POLICY_A }, b: { title: 'Platform 2026', text: POLICY_B } }, readonly)
    t.match(compared, { counts: { changed: 3, added: 1, removed: 1, unchanged: 1, substantive: 3 }, summary_method: 'rules', sources: ['[A] Platform 2025', '[B] Platform 2026'], engine: /^local/ })
    const a = await call<{ document_id: string }>('kb-ingest', { title: 'Platform 2025', text: POLICY_A })
    const b = await call<{ document_id: string }>('kb-ingest', { title: 'Platform 2026', text: POLICY_B })
    const fromKb = await call<Compared>('compare-policies', { a: { document_id: a.document_id }, b: { document_id: b.document_id } })
    t.same(fromKb.sources, [`[A] Platform 2025 (knowledge-base document ${a.document_id})`, `[B] Platform 2026 (knowledge-base document ${b.document_id})`])
    t.equal(fromKb.counts.substantive, 3, 'the same changes from the stored passages')
    await t.rejects(call('compare-policies', { a: { document_id: 'nope' }, b: { text: POLICY_B } }), new ServerFunctionError(404, 'no knowledge-base document "nope"', 'BERTH_NOT_FOUND'))
    await t.rejects(call('compare-policies', { a: { text: POLICY_A, document_id: a.document_id }, b: { text: POLICY_B } }), new ServerFunctionError(400, 'invalid arguments: /a/text: give either text or document_id, not both or neither', 'BERTH_BAD_REQUEST'))
    const long = 'Volunteers may canvass. '.repeat(4200)
    await t.rejects(call('compare-policies', { a: { text: POLICY_A }, b: { text: long } }), new ServerFunctionError(413, `b/text is ${long.length.toLocaleString('en-US')} characters; at most 100,000 are analysed at once`, 'BERTH_PAYLOAD_TOO_LARGE'))
  })
})
