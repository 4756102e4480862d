// The general text tools modules share (plugins/campaign/text/): stances of speakers.
import t from 'tap'
import { localEngine } from '../../../plugins/campaign/language/local-engine.js'
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
