// The local language engine on fixture texts: sentences, entities, sentiment, keywords, key phrases,
// language, similarity, summaries; sentences and headings on the labelled set of test/fixtures/sentences;
// and its measured quality on the labelled sets kept in bench/fixtures.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { localEngine } from '../../../plugins/campaign/language/local-engine.js'
import { precision, readSentenceSet, recall, scoreSegmenter } from '../../../bench/sentence-set.js'

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
  t.same(mood.negative_words.sort(), ['delays', 'hate', 'terrible'], 'the campaign lexicon scores "delays", which AFINN lacks')
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

t.test('sentences: abbreviations before numerals and names, initials, lists; headings apart', async t => {
  const engine = await localEngine()
  t.same(engine.sentences('See Sec. 4 of the plan. Prop. 12 passed in 2018. No. 5 is next, then Art. 3 and Fig. 2.'),
    ['See Sec. 4 of the plan.', 'Prop. 12 passed in 2018.', 'No. 5 is next, then Art. 3 and Fig. 2.'])
  t.same(engine.sentences('Vol. 1 and pp. 10–12 cover approx. 40 stops on St. 9. J. R. R. Tolkien wrote it. The rate is 3.5 percent.'),
    ['Vol. 1 and pp. 10–12 cover approx. 40 stops on St. 9.', 'J. R. R. Tolkien wrote it.', 'The rate is 3.5 percent.'])
  t.same(engine.sentences('We need bread, milk, etc. The store is closed. She moved to the U.S. She was ten.'),
    ['We need bread, milk, etc.', 'The store is closed.', 'She moved to the U.S.', 'She was ten.'])
  t.same(engine.sentences('1. Foo 2. Bar'), ['1. Foo', '2. Bar'])
  const text = '# Transit Plan for Riverside\n\nOur plan doubles bus service.\nFunding\nThe state grant pays for it.'
  t.same(engine.sentences(text), ['Our plan doubles bus service.', 'The state grant pays for it.'], 'headings are no sentences')
  t.same(engine.segments(text).map(s => [s.text, s.heading]), [['# Transit Plan for Riverside', true], ['Our plan doubles bus service.', false], ['Funding', true], ['The state grant pays for it.', false]])
  t.same(engine.segments('Housing for everyone\nWe will build homes.', 'Housing for everyone').map(s => s.heading), [true, false], 'a first line repeating the title')
  t.same(engine.sentences('The plan will double bus service\non every route by 2027.'), ['The plan will double bus service on every route by 2027.'], 'a wrapped line is no heading')
  t.same(engine.summarize(text, 1).map(s => s.text), ['Our plan doubles bus service.'])
})

t.test('sentences on the held-out part of the labelled set (bench/sentences.ts) stay at their floor', async t => {
  const engine = await localEngine()
  const heldOut = readSentenceSet().filter(s => s.heldOut)
  const score = scoreSegmenter(heldOut, text => engine.segments(text))
  t.ok(heldOut.length >= 60 && score.boundaries.labelled + score.nonBoundaries >= 100, `${heldOut.length} held-out texts, ${score.boundaries.labelled} boundaries, ${score.nonBoundaries} places that are none`)
  t.ok(score.exact / score.texts >= 0.95, `texts exactly right: ${score.exact}/${score.texts}`)
  t.ok(precision(score.boundaries) >= 0.95 && recall(score.boundaries) >= 0.95, `boundaries: precision ${precision(score.boundaries)}, recall ${recall(score.boundaries)}`)
  t.ok(precision(score.headings) >= 0.9 && recall(score.headings) >= 0.9, `headings: precision ${precision(score.headings)}, recall ${recall(score.headings)}`)
})

t.test('opinion in context: negation, reported criticism, contrast, burdens and goods, names', async t => {
  const engine = await localEngine()
  const label = (text: string): string => engine.sentiment(text).label
  t.equal(label('Her transit plan is not credible.'), 'negative', '"not credible": the praise word negated')
  t.equal(label('After six months there is still no plan for the leaking roof.'), 'negative', '"no plan": an expected thing missing')
  t.equal(label('The proposal lacks any costing.'), 'negative', '"lacks any costing"')
  t.equal(label('Residents were never informed about the closure.'), 'negative', '"never informed"')
  t.equal(label('Honestly, not bad for a first debate.'), 'positive', '"not bad"')
  t.equal(label('The inspection found the tender process free of corruption.'), 'positive', '"free of" negates a bad word')
  t.equal(label('Critics say the tunnel will take a decade and hand a fortune to one contractor.'), 'negative', 'criticism reported, in neutral words')
  t.equal(label('Opponents argue the new rules are a wonderful gift to landlords.'), 'negative', 'praise words inside reported criticism are the critics\' words')
  t.equal(label('The critic of the mayor spoke for five minutes.'), 'neutral', 'a critic named is no criticism')
  t.equal(label('The press conference was slick, but it said nothing about the layoffs.'), 'negative', 'the clause after "but" decides')
  t.equal(label('Although turnout was low, the vote was a clear success for the library.'), 'positive', 'a concession weighs less than its main clause')
  t.equal(label('The brochure looks impressive, yet the site remains empty.'), 'negative', 'a main clause without opinion turns the conceded praise around')
  t.equal(label('The rally was lively and well organised. However, the speech dodged every hard question.'), 'negative', '"However," contrasts with the sentence before')
  t.equal(label('The council would raise the parking fees again.'), 'negative', 'a burden raised')
  t.equal(label('Violence fell sharply after the lighting program began.'), 'positive', 'a bad thing that fell')
  t.equal(label('The budget will not reduce crime at all.'), 'negative', 'a negated improvement')
  t.equal(label('No one has done more for the east side than Ana Reyes.'), 'positive', '"no one … more … than" is praise')
  t.equal(label('The Safe Streets Committee meets at the Department of Justice.'), 'neutral', 'words inside names are no opinion')
  t.equal(label('The health care forum is at noon.'), 'neutral', '"health care" names a topic')
  t.equal(label('The mayor claims to have a brilliant housing strategy.'), 'neutral', 'praise after a hedge counts for nothing')
  t.equal(label('The plan lacks funding detail.'), 'negative', '"lacks … detail": an expected thing missing')
  t.equal(label('Critics say the plan is unrealistic, a fantasy that will raise taxes.'), 'negative', 'reported criticism with a burden raised')
  t.equal(label('Critics say the plan is a bold step.'), 'negative', 'even a praise word, when critics say it')
  t.equal(label('The plan is ambitious, but it lacks any funding detail.'), 'negative', 'praise conceded, then a missing detail')
  t.equal(label('Auditors questioned the so-called savings of the new contract.'), 'negative', 'a verb of criticism, whoever voices it, and the praise after it')
  t.equal(label('Nobody I spoke to at the meeting could explain the plan.'), 'negative', 'a negation reaches to its clause\'s end')
  t.equal(label('The speech was polished, but it offered no answers on crime.'), 'negative', 'the expected thing negated first, not the burden after it')
  t.equal(label('Nobody expected the new candidate to be this good on stage.'), 'positive', 'a negated expectation leaves the praise after it')
  t.equal(label('The board refused to publish the minutes of the meeting.'), 'negative', 'a failure with nothing to negate is a fault itself')
  t.equal(label('The council will cut funding for the youth centres.'), 'negative', 'a good lowered')
  t.equal(label('Jobs grew in every ward last year.'), 'positive', 'a good raised')
  t.equal(label('The timing of the vote was unfortunate.'), 'negative', 'a word AFINN lacks, scored by VADER\'s lexicon')
  t.equal(label('Since the spring the program has helped 4,000 families.'), 'positive', 'a word the lexicons list only in its base form ("helped" as "help")')
  t.equal(label('Parents say the closures were announced with no warning.'), 'negative', 'an expected thing denied is a fault whatever its own score')
  t.equal(label('There is no evidence the new strategy has reduced crime.'), 'negative', 'a denial empties the good news after it')
  t.equal(label('Public health experts say the cuts will put lives at risk.'), 'negative', 'no burden lowered across a modal verb')
  t.equal(label('Supporters said the approach has reduced arrests and injuries.'), 'positive', 'burdens joined by "and" are lowered together')
  t.equal(label('A hearing on the water rate increase is set for May 3.'), 'neutral', 'a raise with nothing raised judges nothing')
  t.equal(label('The state legislature will take up the bill in January.'), 'neutral', 'a bill is legislation, not a burden')
  t.equal(label('The budget has its flaws; still, it protects every school.'), 'positive', '"; still," opens the main clause')
  t.equal(label('Residents praised the design, but the new towers are too tall.'), 'negative', 'excess is a complaint')
  t.equal(label('Grace Okafor spoke for an hour.'), 'neutral', 'a capitalised word opening a sentence before another is a name')
  t.equal(label('While the new stadium is impressive, it has left the clubs with nothing.'), 'negative', 'an opening "while" clause is a concession')
  t.equal(label('The mayor declined to comment on the jobs figures.'), 'neutral', '"declined to comment" is no decline of anything')
  const mood = engine.sentiment('The plan is unrealistic.')
  t.same([mood.score, mood.polarity], [-2, Math.round(-2 / Math.sqrt(19) * 1000) / 1000], 'a campaign word AFINN lacks, and polarity = s / √(s² + 15)')
})

t.test('sentence sentiment on the held-out part of the opinion set (bench/opinion.ts) stays at 80% or more', async t => {
  const engine = await localEngine()
  const sentences = JSON.parse(readFileSync(join(import.meta.dirname, '../../../bench/fixtures/opinion/sentences.json'), 'utf8')) as Array<{ text: string, label: string, split: string }>
  const heldOut = sentences.filter(s => s.split === 'held-out')
  const right = heldOut.filter(s => engine.sentiment(s.text).label === s.label).length
  t.ok(heldOut.length >= 70, `${heldOut.length} held-out sentences`)
  t.ok(right / heldOut.length >= 0.8, `held-out sentiment: ${right}/${heldOut.length}`)
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
