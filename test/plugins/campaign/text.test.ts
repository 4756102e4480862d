// The general text tools modules share (plugins/campaign/text/): BM25 ranking, stances of speakers,
// the issue lexicon, due dates in a sentence.
import t from 'tap'
import { localEngine } from '../../../plugins/campaign/language/local-engine.js'
import { Bm25Index, tokenize } from '../../../plugins/campaign/text/bm25.js'
import { findDue } from '../../../plugins/campaign/text/due-dates.js'
import { findIssues } from '../../../plugins/campaign/text/issue-lexicon.js'
import { foldTerm, opinionPolarity, splitClauses } from '../../../plugins/campaign/text/stance.js'

t.test('opinion polarity: AFINN plus stance cues, negation, clauses, plural folding', async t => {
  const engine = await localEngine()
  t.ok(opinionPolarity(engine, 'We oppose the toll.') < 0, '"oppose" counts against (AFINN scores it 0)')
  t.ok(opinionPolarity(engine, 'We do not oppose the toll.') > 0, 'a negation flips a cue')
  t.equal(opinionPolarity(engine, 'The toll starts in May.'), 0)
  t.equal(opinionPolarity(engine, 'We oppose it.'), Math.round(-2 / Math.sqrt(4 + 15) * 1000) / 1000, 's / √(s² + 15)')
  t.same(splitClauses(engine, 'We support transit but oppose the fare hike; buses are late.'), ['We support transit', 'but oppose the fare hike', 'buses are late.'])
  t.same(splitClauses(engine, 'We back transit so workers reach jobs, and it is so great.'), ['We back transit', 'so workers reach jobs, and it is so great.'])
  t.same(['policies', 'taxes', 'wages', 'bus', 'class'].map(foldTerm), ['policy', 'tax', 'wage', 'bus', 'class'])
})

t.test('BM25: scores by the documented formula, ranks, drops stop words, replaces re-added entries', async t => {
  const index = new Bm25Index()
  index.add('a', 'Housing policy: housing!')
  index.add('b', 'The transit policy')
  index.add('c', 'Schools')
  t.same(tokenize('The Housing-policy, 2026'), ['housing', 'policy', '2026'])
  // N = 3, n(housing) = 1, |a| = 3, avgdl = 2: idf = ln(1 + 2.5 / 1.5), tf part = 2·2.2 / (2 + 1.2·(0.25 + 0.75·1.5)).
  const expected = Math.log(1 + 2.5 / 1.5) * 4.4 / (2 + 1.2 * (0.25 + 0.75 * 1.5))
  const [best] = index.search('housing', 5)
  t.equal(best.id, 'a')
  t.ok(Math.abs(best.score - expected) < 1e-9, `score ${best.score} = ${expected}`)
  t.same(index.search('policy', 5).map(r => r.id), ['b', 'a'], 'the shorter passage ranks first for an equal count')
  t.same(index.search('the of', 5), [], 'stop words alone match nothing')
  t.same(index.search('budget', 5), [])
  index.add('a', 'Budget')
  t.same(index.search('housing', 5), [], 're-adding replaces the old text')
  t.equal(index.search('budget', 5)[0].id, 'a')
})

t.test('issues and due dates', async t => {
  t.same(findIssues('Property tax and rent, rent, rent! Potholes everywhere.'),
    [{ issue: 'housing', count: 3, cues: ['rent'] }, { issue: 'taxes', count: 1, cues: ['property tax'] }, { issue: 'transportation', count: 1, cues: ['potholes'] }])
  const said = new Date('2026-05-04T15:00:00Z') // a Monday
  const due = (text: string): string | undefined => findDue(text, said)?.due_on
  t.equal(due('open it by March 2027'), '2027-03-31')
  t.equal(due('done by March'), '2027-03-31', 'a month without a year: its next end')
  t.equal(due('within 100 days'), '2026-08-12')
  t.equal(due('in the next six months'), '2026-11-04')
  t.equal(due('next year'), '2027-12-31')
  t.equal(due('by the end of the year'), '2026-12-31')
  t.equal(due('by 2030'), '2030-12-31')
  t.equal(due('by June 3'), '2026-06-03')
  t.equal(due('by Friday'), '2026-05-08')
  t.equal(due('next Friday'), '2026-05-15')
  const wednesday = new Date('2026-05-06T15:00:00Z')
  t.same(['next Monday', 'next Friday', 'this Friday', 'on Monday'].map(text => findDue(text, wednesday)?.due_on), ['2026-05-11', '2026-05-15', '2026-05-08', '2026-05-11'],
    'said on a Wednesday: next Monday is the one of the following week, in five days, not twelve')
  t.equal(findDue('next Monday', new Date('2026-05-10T15:00:00Z'))?.due_on, '2026-05-11', 'said on a Sunday: tomorrow, the Monday of the next week')
  t.equal(due('by tomorrow'), '2026-05-05')
  t.equal(due('we built it years ago'), undefined)
  t.equal(findDue('in 100 days, or by 2030', said)?.due_text, 'in 100 days', 'the first phrase in the text wins')
})
