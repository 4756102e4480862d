// The regulatory monitor on a short bill (two obligations, one prohibition, one deadline, one fine):
// exactly those found; then analyze-regulation through the API.
import t from 'tap'
import { localEngine } from '../../../../plugins/campaign/language/local-engine.js'
import { analyzeRegulation, deadlineOf } from '../../../../plugins/campaign/modules/regulatory-monitor/regulation-parse.js'
import { classifyClause, splitSections } from '../../../../plugins/campaign/text/provisions.js'
import { campaignApp, statusOf } from '../../../support/campaign.js'

/** A short bill: two obligations, one prohibition, one deadline, one fine (and a citation and a definition that are none of them). */
const BILL = `Campaign Transparency Act

SECTION 1. Short title.
This Act may be cited as the Campaign Transparency Act.

SECTION 2. Definitions.
In this Act, "committee" means a political committee registered with the Elections Board.

SECTION 3. Disclosure.
(a) Each political committee shall disclose every contribution over $200 to the Elections Board.
(b) The treasurer must file a contribution report within 30 days after the election.

SECTION 4. Foreign money.
A committee may not accept a contribution from a foreign national.

SECTION 5. Penalties.
A committee that violates this Act shall be liable to a fine of up to $10,000.
`

t.test('regulatory monitor: exactly the planted obligations, prohibition, deadline and fine', async t => {
  const engine = await localEngine()
  const result = analyzeRegulation(engine, BILL, new Date('2026-05-01T00:00:00Z'))
  t.same(result.counts, { obligation: 2, prohibition: 1, permission: 0 })
  t.same(result.obligations.map(o => [o.kind, o.subject, o.modal]), [['obligation', 'political committee', 'shall'], ['obligation', 'treasurer', 'must'], ['prohibition', 'committee', 'may not']])
  t.same(result.deadlines.map(d => [d.text, d.kind, d.days]), [['within 30 days', 'period', 30]])
  t.same(result.penalties.map(p => [p.kinds, p.amounts, p.section]), [[['fine'], ['$10,000'], 'SECTION 5. Penalties.']])
  t.same(result.sections.map(s => s.heading), ['preamble', 'SECTION 1. Short title.', 'SECTION 2. Definitions.', 'SECTION 3. Disclosure.', 'SECTION 4. Foreign money.', 'SECTION 5. Penalties.'])
  t.same(result.topics.filter(x => x.hits > 0).map(x => x.topic), ['contributions', 'disclosure'])
  t.match(result.parties.slice(0, 3), [{ party: 'committee', provisions: 1 }, { party: 'political committee', provisions: 1 }, { party: 'treasurer', provisions: 1 }])
  t.same(result.impact, { score: 0.638, level: 'high', relevance: 0.75, burden: 0.75 }, '0.75 × (0.4 + 0.6 × 6/8)')

  const clause = (text: string): ReturnType<typeof classifyClause> => classifyClause({ section: '1', text })
  t.equal(clause('The Board may grant an extension of 10 days.')?.kind, 'permission')
  t.equal(clause('No person shall make a contribution in cash.')?.kind, 'prohibition')
  t.equal(clause('Anonymous contributions are prohibited.')?.kind, 'prohibition')
  t.equal(clause('A vendor is required to keep records.')?.kind, 'obligation')
  t.equal(clause('This Act shall take effect on July 1, 2027.'), undefined, 'commencement is no obligation')
  t.match(deadlineOf({ section: '1', text: 'Reports are due not later than January 31, 2027.' }, new Date('2026-05-01T00:00:00Z')), { kind: 'date', date: '2027-01-31' })
  t.match(deadlineOf({ section: '1', text: 'Notice is due within thirty (30) days.' }, new Date('2026-05-01T00:00:00Z')), { kind: 'period', days: 30 })
  t.same(splitSections('First paragraph.\n\nSecond one.').map(s => s.heading), ['¶1', '¶2'], 'paragraphs when no section markers')
  t.same(splitSections('Fares are free for students.\nBuses run every 10 minutes.\nParking costs $3 an hour.').map(s => s.heading), ['¶1', '¶2', '¶3'], 'pasted text without blank lines: a paragraph per line, not all ¶1')
})

t.test('through the API', async t => {
  const { call } = await campaignApp(t)

  await t.test('regulatory monitor: the bill through the API', async t => {
    const result = await call<{ regulation_id: string, counts: Record<string, number>, deadlines: unknown[], penalties: unknown[], impact: { level: string }, jurisdiction: string, engine: string }>(
      'analyze-regulation', { title: 'Campaign Transparency Act', text: BILL, jurisdiction: 'State' })
    t.match(result, { counts: { obligation: 2, prohibition: 1, permission: 0 }, impact: { level: 'high' }, jurisdiction: 'State', engine: /^local/ })
    t.equal(result.deadlines.length, 1)
    t.equal(result.penalties.length, 1)
    t.equal(await statusOf(call('analyze-regulation', { title: 'Act', text: 'x', extra: true })), 400, 'unknown key')
  })
})
