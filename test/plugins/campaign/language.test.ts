// The local language engine on fixture texts: sentences, entities, sentiment, keywords, key phrases,
// language, similarity, summaries; and its measured quality on the labelled set kept in bench/fixtures.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { localEngine } from '../../../plugins/campaign/language/local-engine.js'

const TEXT = 'Senator Maria Lopez will visit Chicago by March 2027. The council must publish the housing report within 30 days! ' +
  'The housing report is late again. Is this fine? We hate the terrible delays.'

t.test('the local engine on one text', async t => {
  const engine = await localEngine()
  t.match(engine.name, /^local/)
  t.same(engine.sentences(TEXT), ['Senator Maria Lopez will visit Chicago by March 2027.', 'The council must publish the housing report within 30 days!',
    'The housing report is late again.', 'Is this fine?', 'We hate the terrible delays.'])
  t.same(engine.entities(TEXT), { people: ['Maria Lopez'], organizations: [], places: ['Chicago'] })
  const mood = engine.sentiment('We hate the terrible delays.')
  t.equal(mood.label, 'negative')
  t.same(mood.negative_words.sort(), ['hate', 'terrible'])
  t.equal(mood.polarity, Math.round(mood.score / Math.sqrt(mood.score ** 2 + 15) * 1000) / 1000, 'polarity = score / √(score² + 15)')
  t.equal(engine.sentiment('I do not like this plan.').label, 'negative', 'a negation flips "like"')
  t.equal(engine.keywords(TEXT, 2)[0].term, 'housing', 'the most frequent long term first')
  t.equal(engine.keyPhrases(TEXT, 1)[0].term, 'housing report')
  t.equal(engine.keyPhrases(TEXT, 1)[0].count, 2)
  t.equal(engine.language(TEXT).language, 'en')
  t.equal(engine.language('Wir werden bezahlbare Wohnungen in der Nähe jeder Haltestelle bauen.').language, 'de')
  t.same(engine.language('?!'), { language: 'und', confidence: 0 })
  t.equal(engine.similarity('housing report', 'the housing report'), 1)
  t.equal(engine.similarity('housing', 'transit'), 0)
  const summary = engine.summarize(TEXT, 2)
  t.same(summary.map(s => s.index), [1, 2], 'the two sentences about the housing report')
})

t.test('quality on the labelled set (the figures in docs/campaign.md)', async t => {
  const engine = await localEngine()
  const set = JSON.parse(readFileSync(join(import.meta.dirname, '../../../bench/fixtures/language-labelled.json'), 'utf8')) as {
    sentiment: Array<[string, string]>
    language: Array<[string, string]>
    entities: Array<[string, Record<'people' | 'organizations' | 'places', string[]>]>
  }
  const sentimentRight = set.sentiment.filter(([text, label]) => engine.sentiment(text).label === label).length
  t.ok(sentimentRight >= 56, `sentiment: ${sentimentRight}/${set.sentiment.length}`)
  const languageRight = set.language.filter(([text, code]) => engine.language(text).language === code).length
  t.equal(languageRight, set.language.length, 'every language right')
  let found = 0
  let expected = 0
  for (const [text, gold] of set.entities) {
    const got = engine.entities(text)
    for (const kind of ['people', 'organizations', 'places'] as const) {
      expected += gold[kind].length
      found += gold[kind].filter(name => got[kind].includes(name)).length
    }
  }
  t.ok(found / expected >= 0.7, `entity recall ${found}/${expected}`)
})
