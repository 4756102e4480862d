// The media monitor on fixture articles (one event covered with opposite slant by two outlets, an
// unrelated article, critical coverage in neutral words): tone, entities and outlets compared; then
// analyze-article and compare-coverage through the API.
import t from 'tap'
import { ServerFunctionError } from '../../../../plugins/campaign/client.js'
import { localEngine } from '../../../../plugins/campaign/language/local-engine.js'
import { analyzeArticle, compareOutlets, opinionBalance, storedTerms, toneOf, topicRelevance } from '../../../../plugins/campaign/modules/media-monitor/media-coverage.js'
import { campaignApp, statusOf } from '../../../support/campaign.js'

/** The same event (a bridge opening) covered with opposite slant by two outlets, and one unrelated article. */
const ARTICLES = [
  { outlet: 'Harbor Herald', title: 'Mayor Ana Silva opens the new Riverside bridge', published_at: '2026-04-04T09:00:00Z',
    text: 'Mayor Ana Silva opened the new Riverside bridge on Saturday. Residents celebrated the beautiful crossing and praised the smooth traffic. ' +
      'The bridge is a great success and a proud moment for the city. Business owners said the bridge will help local shops thrive.' },
  { outlet: 'Harbor Herald', title: 'Commuters love the Riverside bridge', published_at: '2026-04-05T09:00:00Z',
    text: 'Commuters love the Riverside bridge. Silva thanked the hard-working crews for an excellent job. Families enjoyed the festive opening and the wonderful river views.' },
  { outlet: 'Metro Watch', title: 'Riverside bridge opens late and over budget', published_at: '2026-04-04T10:00:00Z',
    text: 'Mayor Ana Silva opened the Riverside bridge on Saturday, two years late. Critics blasted the costly delays and the wasteful overruns. ' +
      'Residents complained about chaotic traffic and angry drivers. The bridge is a failure of planning, opponents said.' },
  { outlet: 'Metro Watch', title: 'Silva bridge fiasco angers taxpayers', published_at: '2026-04-05T10:00:00Z',
    text: 'Taxpayers are furious about the Riverside bridge. Auditors found bad contracts and serious waste. Neighbours fear the noise will ruin the area.' }
]

const UNRELATED = { outlet: 'Metro Watch', title: 'Library extends its opening hours', published_at: '2026-04-06T10:00:00Z', text: 'The central library will stay open until nine on weekdays.' }

/** Critical coverage of a plan in mostly neutral words: a missing detail, critics reported, a burden raised, a contrast. */
const CRITICAL_PLAN = { title: 'Lopez transit plan lacks funding detail',
  text: 'Councillor Maria Lopez presented her transit plan on Tuesday, but the document lacks funding detail. Critics say the timeline is unrealistic. ' +
    'The Taxpayers League called the plan a fantasy that will raise taxes for every household. Lopez said the plan would be costed over the summer.' }

t.test('media monitor: critical coverage in neutral words reads as critical', async t => {
  const engine = await localEngine()
  const analysis = analyzeArticle(engine, CRITICAL_PLAN.title, CRITICAL_PLAN.text)
  t.equal(analysis.tone, 'critical')
  t.equal(analysis.sentiment.label, 'negative')
  const labels = engine.sentences(CRITICAL_PLAN.text).map(s => engine.sentiment(s).label)
  t.same(labels, ['negative', 'negative', 'negative', 'positive'], 'contrast with a missing detail, reported criticism, a tax raised; the reply alone is positive')
  t.match(analysis.entity_sentiment.find(e => e.entity === 'Maria Lopez'), { label: 'negative' }, 'the sentences naming Lopez are negative on balance')
  const answered = 'Councillor Maria Lopez presented her transit plan on Tuesday. Supporters say the plan is realistic and fully costed. ' +
    'Riders praised the new night buses, and the plan will cut fares for students.'
  t.equal(analyzeArticle(engine, 'Lopez presents her transit plan', answered).tone, 'favourable', 'the same plan praised reads as favourable')
})

t.test('media monitor: tone from the balance of opinionated sentences', async t => {
  t.equal(opinionBalance([0.75, 0, 0, 0, -0.25]), 0.5, 'sentences without opinion weigh nothing')
  t.equal(opinionBalance([0, 0]), 0, 'no opinion, no balance')
  t.equal(toneOf(opinionBalance([0.5, 0, 0, 0, 0]), 0.7), 'favourable', 'one opinion among facts decides, past the factual density')
  t.equal(toneOf(opinionBalance([0.5, -0.4, 0.2]), 1), 'mixed', 'neither side weighs twice the other')
  t.equal(toneOf(opinionBalance([-0.5, -0.4, 0.2]), 1), 'critical')
  t.equal(toneOf(1, 0.5), 'factual', 'below the opinion density of an opinion piece')
  t.equal(toneOf(-0.8, 1.5, true), 'mixed', 'an article that turns from one side to the other gives both weight')
  t.equal(toneOf(-0.8, 0.5, true), 'factual', 'a turn in an article of facts leaves it factual')
  const turning = 'Residents in the east praised the new bins and the weekly collection. In the two western wards, however, residents complained of missed pickups and confusing rules. The contractor blamed staff shortages.'
  t.equal(analyzeArticle(await localEngine(), 'Recycling: praise and complaints', turning).tone, 'mixed', 'praise, then ", however," criticism: mixed, not critical')
})

t.test('media monitor: an article analysed, and two outlets with opposite slant compared', async t => {
  const engine = await localEngine()
  const first = analyzeArticle(engine, ARTICLES[0].title, ARTICLES[0].text)
  t.match(first, { language: 'en', word_count: 43, tone: 'favourable', sentiment: { label: 'positive' } })
  t.equal(first.summary.length, 3, 'three summary sentences')
  t.same(first.entities.people, ['Ana Silva'])
  const critical = analyzeArticle(engine, ARTICLES[3].title, ARTICLES[3].text)
  t.equal(critical.tone, 'critical')
  t.match(critical.entity_sentiment, [{ entity: 'Riverside bridge', mentions: 1, label: 'negative' }], 'the sentence naming the bridge is negative')
  const praise = analyzeArticle(engine, ARTICLES[1].title, ARTICLES[1].text)
  t.match(praise.entity_sentiment.find(e => e.entity === 'Silva'), { label: 'positive' }, 'Silva is thanked: positive')
  t.equal(analyzeArticle(engine, UNRELATED.title, UNRELATED.text).tone, 'factual', 'no sentence carries sentiment')

  const stored = ARTICLES.map(a => {
    const analysis = analyzeArticle(engine, a.title, a.text)
    return { outlet: a.outlet, polarity: analysis.sentiment.mean_sentence_polarity, entities: analysis.entities.people, terms: storedTerms(engine, a.title, a.text) }
  })
  const { outlets, similarity } = compareOutlets(stored)
  const herald = outlets.find(o => o.outlet === 'Harbor Herald')
  const watch = outlets.find(o => o.outlet === 'Metro Watch')
  t.ok(herald !== undefined && watch !== undefined)
  if (herald === undefined || watch === undefined) return
  t.ok(herald.mean_sentiment > 0.3 && watch.mean_sentiment < -0.3, `opposite mean sentiment: ${herald.mean_sentiment} vs ${watch.mean_sentiment}`)
  t.same([herald.label, watch.label, herald.article_count], ['positive', 'negative', 2])
  const heraldWords = herald.distinctive_keywords.map(k => k.term)
  const watchWords = watch.distinctive_keywords.map(k => k.term)
  t.ok(heraldWords.includes('commuters') && heraldWords.includes('celebrated'), `herald: ${heraldWords.join(', ')}`)
  t.ok(watchWords.includes('taxpayers') && watchWords.includes('late'), `watch: ${watchWords.join(', ')}`)
  t.notOk([...heraldWords, ...watchWords].some(w => w === 'bridge' || w === 'riverside'), 'words both use are not distinctive')
  t.notOk(heraldWords.some(w => watchWords.includes(w)), 'no keyword is distinctive to both')
  const late = watch.distinctive_keywords.find(k => k.term === 'late')
  t.equal(late?.distinctiveness, late === undefined ? -1 : Math.round((late.share - late.elsewhere) * 1e4) / 1e4, 'share in outlet − share elsewhere')
  t.equal(late?.elsewhere, 0)
  t.match(herald.entities, [{ entity: 'Ana Silva', articles: 1, share: 0.5 }])
  t.equal(similarity.length, 1)
  t.ok(similarity[0].similarity > 0.2 && similarity[0].similarity < 0.9, `the same story told differently: ${similarity[0].similarity}`)
  t.equal(topicRelevance(engine.terms('Riverside bridge'), stored[0].terms), 1)
  t.equal(topicRelevance(engine.terms('Riverside library'), stored[0].terms), 0.5)
  t.equal(topicRelevance(engine.terms('library hours'), stored[0].terms), 0)
})

t.test('through the API', async t => {
  const { login, call } = await campaignApp(t)
  const readonly = await login('readonly')

  await t.test('media monitor: articles stored, coverage compared by outlet, paginated', async t => {
    const first = await call<{ article_id: string, tone: string, engine: string, word_count: number }>('analyze-article', { ...ARTICLES[0], url: 'https://herald.test/bridge' })
    t.match(first, { tone: 'favourable', word_count: 43, engine: /^local/ })
    t.notOk('terms' in first, 'the stored term counts are not returned')
    for (const article of [...ARTICLES.slice(1), UNRELATED]) await call('analyze-article', article)
    interface Coverage { matched: number, outlets: Array<{ outlet: string, mean_sentiment: number, distinctive_keywords: Array<{ term: string }> }>, articles: { items: Array<{ title: string }>, next_cursor: string | null }, engine: string }
    const coverage = await call<Coverage>('compare-coverage', { topic: 'Riverside bridge' }, readonly)
    t.equal(coverage.matched, 4, 'the library article is another topic')
    t.same(coverage.outlets.map(o => [o.outlet, Math.sign(o.mean_sentiment)]), [['Harbor Herald', 1], ['Metro Watch', -1]])
    t.ok(coverage.outlets[1].distinctive_keywords.some(k => k.term === 'taxpayers'))
    t.match(coverage.engine, /^local/)
    const page1 = await call<Coverage>('compare-coverage', { topic: 'Riverside bridge', limit: 3 })
    t.same(page1.articles.items.map(a => a.title), ['Silva bridge fiasco angers taxpayers', 'Commuters love the Riverside bridge', 'Riverside bridge opens late and over budget'], 'newest first')
    t.type(page1.articles.next_cursor, 'string')
    const page2 = await call<Coverage>('compare-coverage', { topic: 'Riverside bridge', limit: 3, cursor: page1.articles.next_cursor as string })
    t.same(page2.articles.items.map(a => a.title), ['Mayor Ana Silva opens the new Riverside bridge'])
    t.equal(page2.articles.next_cursor, null)
    const herald = await call<Coverage>('compare-coverage', { outlets: ['harbor herald'], from: '2026-04-05', to: '2026-04-30' })
    t.same(herald.articles.items.map(a => a.title), ['Commuters love the Riverside bridge'], 'outlet (any case) and time range')
    await t.rejects(call('analyze-article', { ...ARTICLES[0], published_at: 'last week' }), new ServerFunctionError(400, 'invalid arguments: /published_at: expected an ISO 8601 date or UTC time, got "last week"', 'BERTH_BAD_REQUEST'))
    await t.rejects(call('compare-coverage', { from: '2026-05-01', to: '2026-04-01' }), new ServerFunctionError(400, 'invalid arguments: /to: comes before from', 'BERTH_BAD_REQUEST'))
    t.equal(await statusOf(call('analyze-article', { ...ARTICLES[0] }, readonly)), 403, 'readonly does not store articles')
  })
})
