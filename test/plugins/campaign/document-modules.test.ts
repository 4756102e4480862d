// The document modules (media monitor, disinfo warning, regulatory monitor): their methods on fixture
// texts, then each function through the API with a signed-in user, and counter-messaging through a
// stand-in for an OpenAI-compatible provider (a small local server: no model can be downloaded here).
import t from 'tap'
import devIdp from '../../../plugins/dev-idp/index.js'
import campaign from '../../../plugins/campaign/index.js'
import { callServerFunction, ServerFunctionError } from '../../../plugins/campaign/client.js'
import { localEngine } from '../../../plugins/campaign/language/local-engine.js'
import { Bm25Index } from '../../../plugins/campaign/text/bm25.js'
import { loadPrompt } from '../../../plugins/campaign/language/prompts.js'
import { addressingPassages, answeringPassages, composeExtractive, counterPrompt, readGenerated } from '../../../plugins/campaign/grounding/counter-message.js'
import type { KbLike } from '../../../plugins/campaign/grounding/grounding.js'
import { foldTerm, negatedTerms } from '../../../plugins/campaign/text/claims.js'
import { analyzeDisinfo, shoutedWords, statisticsIn, WEIGHTS } from '../../../plugins/campaign/modules/disinfo-warning/disinfo-signals.js'
import { analyzeArticle, compareOutlets, opinionBalance, storedTerms, toneOf, topicRelevance } from '../../../plugins/campaign/modules/media-monitor/media-coverage.js'
import { analyzeRegulation, classifyClause, deadlineOf, splitSections } from '../../../plugins/campaign/modules/regulatory-monitor/regulation-parse.js'
import { campaignApp, moduleUrl, scriptedLogin, statusOf, withDevIdp } from '../../support/campaign.js'
import { startChatStandIn } from '../../support/chat-standin.js'
import { testKernel } from '../../support/kernel.js'

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

/** A post with every planted signal: urgency phrases, shouting, exclamations, an unsourced figure, a claim the knowledge base denies. */
const POST = "SHARE BEFORE IT IS DELETED!!! They don't want you to know the truth. Voting machines were hacked in every county! " +
  '87% of ballots were fake! Wake up, everyone must see this NOW!'
const CALM = 'The county audit found that the voting machines worked as designed, according to the Elections Board.'
const AUDIT = 'Voting machines were not hacked in any county, according to the 2024 state audit by the Elections Board.\n\n' +
  'Mail ballots are safe and secure. Cases of fraud are extremely rare.\n\nThe new park opens in June.'

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

function kbOf (passages: string[], title = 'State audit'): KbLike {
  const index = new Bm25Index()
  passages.forEach((p, i) => { index.add(String(i), p) })
  return { query: (q, n) => index.search(q, n).map(r => ({ document_id: 'doc', title, source: 'audit.pdf', passage: Number(r.id), text: passages[Number(r.id)] })) }
}

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

t.test('disinfo warning: planted signals found with their evidence, a calm text low', async t => {
  const engine = await localEngine()
  const kb = kbOf(AUDIT.split('\n\n'))
  t.equal(Object.values(WEIGHTS).reduce((a, b) => a + b, 0).toFixed(6), '1.000000', 'the weights sum to 1')
  const risky = analyzeDisinfo(engine, kb, POST)
  const by = Object.fromEntries(risky.signals.map(s => [s.signal, s]))
  t.equal(risky.level, 'high', `risk ${risky.risk}`)
  t.same(by.urgency_phrases.evidence, ['SHARE BEFORE IT IS DELETED', "They don't want you to know", 'Wake up'])
  t.same(by.all_caps.evidence, ['SHARE', 'BEFORE', 'DELETED'], 'IT and IS are too short, NOW stands alone')
  t.same(by.unsourced_statistics.evidence, ['87% of ballots were fake!'])
  t.equal(risky.contradictions.length, 1)
  t.match(risky.contradictions[0], { claim: 'Voting machines were hacked in every county!', reason: 'negation mismatch', title: 'State audit', sentence: /were not hacked/ })
  t.equal(risky.risk, Math.round(risky.signals.reduce((sum, s) => sum + s.weight * s.value, 0) * 1000) / 1000, 'risk = Σ weight × value')
  t.same(risky.claims, ['Voting machines were hacked in every county!', '87% of ballots were fake!'], 'the claims to answer, pressure aside')

  const calm = analyzeDisinfo(engine, kb, CALM)
  t.equal(calm.level, 'low')
  t.equal(calm.risk, 0, 'agreeing with the audit is no contradiction: "hacked" is not in the claim')
  const sourced = analyzeDisinfo(engine, kb, 'Turnout rose to 67% in 2024, according to the state census.')
  t.equal(sourced.signals.find(s => s.signal === 'unsourced_statistics')?.value, 0, 'a figure with its source')
  const opposite = analyzeDisinfo(engine, kb, 'Mail ballots are dangerous and insecure.')
  t.match(opposite.contradictions, [{ reason: 'opposite polarity' }], 'dangerous vs safe and secure')

  t.same([...negatedTerms(engine, "They didn't win the vote")], ['win'])
  t.ok(negatedTerms(engine, 'The claim that ballots were fake is false').has('ballots'), 'a denial negates its whole sentence')
  t.same(shoutedWords('The FBI said NOTHING HAPPENED today, and NASA agreed'), ['NOTHING', 'HAPPENED'], 'lone acronyms are not shouting')
  t.same(statisticsIn('In 2024, 3 in 10 voters paid $1,500 or 45 percent more.'), ['3 in 10', '$1,500', '45 percent'])
})

t.test('counter-messages: cited passages, extractive composition, the prompt template', async t => {
  const engine = await localEngine()
  const kb = kbOf(AUDIT.split('\n\n'))
  const sources = answeringPassages(engine, kb, ['Voting machines were hacked in every county!'])
  t.same(sources.map(s => [s.cite, s.passage, s.contradiction]), [[1, 0, 'negation mismatch']], 'only the audit passage answers the claim, and contradicts it')
  const { short, long } = composeExtractive('Voting machines were hacked in every county!', sources, 'firm')
  t.equal(short, 'Let us be clear. The claim that “Voting machines were hacked in every county” is not supported: ' +
    'Voting machines were not hacked in any county, according to the 2024 state audit by the Elections Board. [1]')
  t.match(long, /\[1\] Sharing this claim spreads misinformation/)
  t.same(answeringPassages(engine, kb, ['The moon landing was staged in a studio.']), [], 'nothing relevant')

  const template = loadPrompt(moduleUrl('disinfo-warning'), 'counter-messaging')
  const messages = counterPrompt(template, 'Voting machines were hacked.', sources, 'warm')
  t.same(messages.map(m => m.role), ['system', 'user'])
  t.match(messages[0].content, /warm tone/)
  t.match(messages[1].content, /Claim: Voting machines were hacked\.\n\nSources:\n\[1\] State audit: Voting machines were not hacked/)
  t.notMatch(messages.map(m => m.content).join(''), /\{\{|<!--/, 'every placeholder filled, comments dropped')
  t.same(readGenerated('SHORT: No. [1]\nLONG: The audit found no hack. [1]'), { short: 'No. [1]', long: 'The audit found no hack. [1]' })
  t.same(readGenerated('Just one paragraph [1].'), { short: 'Just one paragraph [1].', long: 'Just one paragraph [1].' })
})

/** A platform in three passages: the candidate, the budget, transit. */
const PLATFORM = [
  'Maria Lopez is running for mayor of Riverside. Lopez served two terms on the city council.',
  'Budget priorities. No increase in property taxes for homeowners is planned. Road repairs are paid from the state grant.',
  'Transit. Student bus fares will be cut to one dollar in 2027. Night buses will run to the east side.'
]

t.test('disinfo warning: claims matched against the passages with negation in mind, only relevant passages cited', async t => {
  const engine = await localEngine()
  const kb = kbOf(PLATFORM, 'Platform')
  t.same(['raise', 'hikes', 'taxes', 'fees', 'policies', 'bus', 'analysis'].map(foldTerm), ['increase', 'increase', 'tax', 'fee', 'policy', 'bus', 'analysis'])

  const tax = 'Lopez will RAISE PROPERTY TAXES by 40%'
  t.match(analyzeDisinfo(engine, kb, tax).contradictions, [{ claim: tax, reason: 'negation mismatch', title: 'Platform', passage_index: 1, sentence: 'No increase in property taxes for homeowners is planned.' }],
    'a raise the base says is not planned')
  const taxSources = answeringPassages(engine, kb, [tax])
  t.same(taxSources.map(s => [s.passage, s.sentence, s.contradiction]), [[1, 'No increase in property taxes for homeowners is planned.', 'negation mismatch']],
    'the passage that answers it, and not the one that only names Lopez')
  t.equal(composeExtractive(tax, taxSources, 'neutral').short, 'The claim that “Lopez will RAISE PROPERTY TAXES by 40%” is not supported: No increase in property taxes for homeowners is planned. [1]')

  const fares = 'Lopez will hike student bus fares again.'
  t.match(analyzeDisinfo(engine, kb, fares).contradictions, [{ reason: 'opposite direction', sentence: 'Student bus fares will be cut to one dollar in 2027.' }], 'a cut claimed to be a hike')

  const supported = 'Lopez will not raise property taxes for homeowners.'
  t.same(analyzeDisinfo(engine, kb, supported).contradictions, [], 'a claim the base supports is no contradiction')
  const supportSources = answeringPassages(engine, kb, [supported])
  t.same(supportSources.map(s => [s.passage, s.contradiction]), [[1, undefined]], 'the passage on it is cited, as no contradiction')
  t.equal(composeExtractive(supported, supportSources, 'neutral').short,
    'On the claim that “Lopez will not raise property taxes for homeowners”, the record says: No increase in property taxes for homeowners is planned. [1]')

  const unrelated = 'The new stadium will cost the city a fortune in hidden fees.'
  t.ok(kb.query(unrelated, 5).length > 0, 'the search finds passages sharing a word')
  t.same(analyzeDisinfo(engine, kb, unrelated).contradictions, [])
  t.same(answeringPassages(engine, kb, [unrelated]), [], 'an unrelated claim cites nothing')
  t.ok(addressingPassages(engine, kb, [unrelated]).length > 0, 'though a passage sharing "city" addresses it by similarity alone')
})

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

t.test('the document modules through the API', async t => {
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
    await t.rejects(call('analyze-article', { ...ARTICLES[0], published_at: 'last week' }), new ServerFunctionError(400, 'invalid arguments: /published_at: expected an ISO 8601 date or UTC time, got "last week"'))
    await t.rejects(call('compare-coverage', { from: '2026-05-01', to: '2026-04-01' }), new ServerFunctionError(400, 'invalid arguments: /to: comes before from'))
    t.equal(await statusOf(call('analyze-article', { ...ARTICLES[0] }, readonly)), 403, 'readonly does not store articles')
  })

  await t.test('disinfo warning: a stored analysis, then a cited counter-message', async t => {
    await call('kb-ingest', { title: 'State audit', source: 'audit.pdf', text: AUDIT })
    const analysis = await call<{ analysis_id: string, level: string, risk: number, claims: string[], engine: string }>('analyze-disinfo', { text: POST, source: 'forwarded message' })
    t.match(analysis, { level: 'high', engine: /^local/, claims: ['Voting machines were hacked in every county!', '87% of ballots were fake!'] })
    interface Counter { addressed: boolean, contradicted: boolean, short: string, long: string, citations: Array<{ cite: number, title: string }>, citation_lines: string[], engine: string, note?: string }
    const counter = await call<Counter>('counter-messaging', { analysis_id: analysis.analysis_id, tone: 'neutral' })
    t.match(counter, { addressed: true, contradicted: true, engine: /^local/, short: /^The claim that “Voting machines were hacked in every county” is not supported: Voting machines were not hacked .* \[1\]$/ })
    t.same(counter.citation_lines, ['[1] State audit, passage 1', '[2] State audit, passage 2'], 'the audit answers the hack, the ballot passage the fake ballots')
    t.match(counter.long, /\[1\] .*safe and secure\. \[2\] Please check the sources before sharing\.$/)
    const nothing = await call<Counter>('counter-messaging', { text: 'The moon landing was staged in a film studio.' })
    t.match(nothing, { addressed: false, short: '', citations: [], note: /nothing relevant/ })
    await t.rejects(call('counter-messaging', { analysis_id: 'nope' }), new ServerFunctionError(404, 'no disinfo analysis "nope"'))
    await t.rejects(call('counter-messaging', {}), new ServerFunctionError(400, 'invalid arguments: /analysis_id: give either analysis_id or text, not both or neither'))
    t.equal(await statusOf(call('counter-messaging', { text: 'x', tone: 'angry' })), 400, 'an unknown tone')
    const long = 'Voting machines were hacked. '.repeat(3500)
    await t.rejects(call('analyze-disinfo', { text: long }), new ServerFunctionError(413, `text is ${long.length.toLocaleString('en-US')} characters; at most 100,000 are analysed at once`))
    t.equal(await statusOf(call('analyze-disinfo', { text: '' })), 400, 'empty text')
  })

  await t.test('regulatory monitor: the bill through the API', async t => {
    const result = await call<{ regulation_id: string, counts: Record<string, number>, deadlines: unknown[], penalties: unknown[], impact: { level: string }, jurisdiction: string, engine: string }>(
      'analyze-regulation', { title: 'Campaign Transparency Act', text: BILL, jurisdiction: 'State' })
    t.match(result, { counts: { obligation: 2, prohibition: 1, permission: 0 }, impact: { level: 'high' }, jurisdiction: 'State', engine: /^local/ })
    t.equal(result.deadlines.length, 1)
    t.equal(result.penalties.length, 1)
    t.equal(await statusOf(call('analyze-regulation', { title: 'Act', text: 'x', extra: true })), 400, 'unknown key')
  })
})

t.test('counter-messaging with a generative provider (a stand-in OpenAI-compatible server), and while it is down', async t => {
  const standIn = await startChatStandIn(t, () => 'SHORT: The audit found no hacked machines [1].\nLONG: The state audit checked every county and found no hacking [1].')
  const received = standIn.received
  const kernel = await testKernel(t, { plugins: [devIdp, campaign], config: withDevIdp({ generator_url: standIn.url, generator_model: 'stand-in' }) })
  const baseUrl = kernel.url('app')
  const staffUser = (kernel.service('campaign').devIdp?.users ?? []).find(u => u.role === 'staff') as { username: string, password: string }
  const { cookie } = await scriptedLogin(baseUrl, staffUser)
  const call = async <T> (name: string, args: object): Promise<T> => await callServerFunction<T>(name, args, { baseUrl, headers: { cookie } })
  await call('kb-ingest', { title: 'State audit', text: AUDIT })

  const answer = await call<{ short: string, long: string, citations: Array<{ cite: number, title: string }>, engine: string }>('counter-messaging', { text: 'Voting machines were hacked in every county.', tone: 'firm' })
  t.same(answer.short, 'The audit found no hacked machines [1].')
  t.same(answer.long, 'The state audit checked every county and found no hacking [1].')
  t.match(answer.citations, [{ cite: 1, title: 'State audit' }])
  t.equal(answer.engine, `generative (stand-in at ${standIn.host})`)
  t.equal(received.length, 1)
  const request = received[0]
  t.equal(request.url, '/v1/chat/completions')
  t.equal(request.body.model, 'stand-in')
  const prompt = request.body.messages.map(m => m.content).join('\n')
  t.match(prompt, 'Claim: Voting machines were hacked in every county.', 'the claim is sent')
  t.match(prompt, '[1] State audit: Voting machines were not hacked in any county', 'the cited passage is sent')
  t.match(prompt, 'firm tone')

  await standIn.stop()
  const down = await call<{ short: string, engine: string, fallback_note: string }>('counter-messaging', { text: 'Voting machines were hacked in every county.' })
  t.match(down, { short: /^The claim that “Voting machines were hacked in every county” is not supported: /, engine: /^local/, fallback_note: new RegExp(`^the generative provider at ${standIn.url.replace(/\./g, '\\.')} cannot be reached: .*; this answer is the local engine's\\.$`) },
    'the provider down: the extractive answer, and a note saying so')
})
