// Multilingual, question anticipation, policy diff and compliance: the methods on fixture texts (a
// glossary translation that is full, partial or none; planted questions of every kind; a policy whose
// changes in substance are known; a solicitation breaking known rules), then each function through the
// API with signed-in users (400, 413, 404 and 403 included), and the generative paths against a
// stand-in OpenAI-compatible server (then, once it is stopped, the local engine with a fallback note).
import t from 'tap'
import devIdp from '../../../plugins/dev-idp/index.js'
import campaign from '../../../plugins/campaign/index.js'
import { callServerFunction, ServerFunctionError } from '../../../plugins/campaign/client.js'
import type { DevUser } from '../../../plugins/dev-idp/users.js'
import type { LanguageEngine } from '../../../plugins/campaign/language/engine.js'
import { localEngine } from '../../../plugins/campaign/language/local-engine.js'
import type { Commitment } from '../../../plugins/campaign/modules/accountability/accountability.js'
import { anticipate, focusTerms, onFocus } from '../../../plugins/campaign/modules/question-anticipation/anticipation.js'
import { Bm25Index } from '../../../plugins/campaign/text/bm25.js'
import { diffPolicies, figuresOf, modalOf, wordDiff } from '../../../plugins/campaign/modules/policy-diff/clause-diff.js'
import { amountsInCents, checkCompliance, loadRules } from '../../../plugins/campaign/modules/compliance/compliance-rules.js'
import type { KbLike } from '../../../plugins/campaign/grounding/grounding.js'
import { Elections } from '../../../plugins/campaign/modules/fundraising/elections.js'
import type { Donation, Fundraising } from '../../../plugins/campaign/modules/fundraising/fundraising.js'
import { donorId } from '../../../plugins/campaign/modules/fundraising/fundraising.js'
import { Glossary } from '../../../plugins/campaign/modules/multilingual/glossary.js'
import { glossaryTranslation, languageName } from '../../../plugins/campaign/modules/multilingual/multilingual.js'
import { diffSummary } from '../../../plugins/campaign/modules/policy-diff/policy-diff.js'
import type { Post } from '../../../plugins/campaign/records/posts.js'
import { deadlineItems, gapItems, loadLogistics, logisticsItems, orderItems } from '../../../plugins/campaign/modules/question-anticipation/preparation.js'
import type { StoredRegulation } from '../../../plugins/campaign/modules/regulatory-monitor/regulatory-monitor.js'
import { SourceList } from '../../../plugins/campaign/grounding/source-list.js'
import { campaignApp, scriptedLogin, statusOf, withDevIdp } from '../../support/campaign.js'
import { startChatStandIn } from '../../support/chat-standin.js'
import { testKernel } from '../../support/kernel.js'
import { POLICY_A, POLICY_B } from '../../../plugins/campaign/ui/src/examples.js'

/** Posts before a town hall on housing: two people ask the same question, a negative narrative on rent, a split on the housing plan. */
const POSTS: Array<{ author: string, location: string, text: string, source: string, posted_at: string }> = [
  ['ana', 'Eastside', 'Why is rent going up every year in Eastside? Somebody has to act.'],
  ['ben', 'Eastside', 'Why does rent keep going up in Eastside?'],
  ['cal', 'Eastside', 'The rent is unaffordable and landlords are greedy. Eastside families are being evicted.'],
  ['dee', 'Northside', 'Rents are terrible, evictions everywhere, housing is a disaster.'],
  ['eve', 'Northside', 'The new housing plan is terrible, the developers get everything.'],
  ['fay', 'Eastside', 'I love the new housing plan, finally homes near transit!'],
  ['gus', 'Eastside', 'The housing plan is a great idea for families.'],
  ['hal', 'Northside', 'The housing plan is a disgrace and a betrayal.'],
  ['ivy', 'Westside', 'Lovely weather at the farmers market today.']
].map(([author, location, text], i) => ({ author, location, text, source: i % 2 === 1 ? 'x' : 'fb', posted_at: `2026-05-0${1 + (i % 5)}T10:00:00Z` }))

const HOUSING_PLAN = 'Housing plan: Maria Lopez will freeze rents for two years and build 500 affordable homes near transit in Eastside.\n\nThe new park opens in June.'
const PROMISE = 'Maria Lopez will build 500 affordable homes by March 2026.'


/** An e-mail asking for money that breaks five rules: no disclaimer, no opt-out, no address, a deductibility claim, a government endorsement, an ask over the limit. */
const BAD_EMAIL = 'Friends, our plan is endorsed by the Elections Board. Donate $5,000 today to keep the momentum going! Your gift is tax-deductible.'
const GOOD_AD = 'Vote for Maria Lopez on November 3. Paid for by Lopez for Council.'

function kbOf (passages: string[], title = 'Housing plan'): KbLike {
  const index = new Bm25Index()
  passages.forEach((p, i) => { index.add(String(i), p) })
  return { query: (q, n) => index.search(q, n).map(r => ({ document_id: 'plan', title, source: '', passage: Number(r.id), text: passages[Number(r.id)] })) }
}

function postsOf (engine: LanguageEngine): Post[] {
  return POSTS.map((p, i) => {
    const mood = engine.sentiment(p.text)
    return { post_id: `p${i}`, ...p, language: 'en', score: mood.score, polarity: mood.polarity, label: mood.label, terms: [...new Set(engine.terms(p.text))].slice(0, 40) }
  })
}

const commitment = (over: Partial<Commitment> = {}): Commitment => ({
  commitment_id: 'c1', actor: 'Maria Lopez', text: 'Maria Lopez will build 500 affordable homes by March 2026', verb: 'will', promise: 'build 500 affordable homes by March 2026',
  due_on: '2026-03-31', due_text: 'by March 2026', source: 'launch speech', said_on: '2025-06-01', status: 'open', evidence_count: 0, recorded_by: '', recorded_at: '', updated_at: '', ...over
})

/** A fundraising store holding `gifts` per e-mail address toward the 2026 primary (June 2; the general on November 3), with a limit of $3,500. */
function fundraisingOf (gifts: Record<string, number[]>): Fundraising {
  const byId = new Map(Object.entries(gifts).map(([email, amounts]) => [donorId(email), amounts.map((amount, i): Donation => ({
    donation_id: `d${i}`, donor_id: donorId(email), amount_cents: amount, refunded_cents: 0, received_on: `2026-02-0${i + 1}`, designation: null, election: '2026-primary', recorded_by: '', recorded_at: '', history: []
  }))]))
  return { limitCents: 350_000, elections: new Elections([{ name: '2026', primary: '2026-06-02', general: '2026-11-03' }]), donations: (id: string) => byId.get(id) ?? [] } as unknown as Fundraising
}

t.test('multilingual: the campaign glossary translates what it covers and says what it did not', async t => {
  const engine = await localEngine()
  const glossary = Glossary.load()
  const local = (text: string, source: string, target: string): ReturnType<typeof glossaryTranslation> => glossaryTranslation(glossary, text, source, target, engine.entities(text).people)

  const full = local('Vote for Maria Lopez on Election Day! Find your polling place.', 'en', 'es')
  t.match(full, { translated: 'full', coverage: 1, untranslated: [], note: /No translation model is configured; the campaign glossary covered the whole text \(3 phrases\)/ })
  t.equal(full.translation, 'Vote por Maria Lopez el día de las elecciones! Encuentre su centro de votación.', 'the name is kept, the phrases translated')

  const partial = local('Vote for Maria Lopez. She will fix the potholes on Elm Street.', 'en', 'es')
  t.match(partial, { translated: 'partial', untranslated: ['She will fix the potholes on Elm Street'], note: /only the campaign glossary was applied: 1 phrase translated, 1 run of words left as written/ })
  t.equal(partial.translation, 'Vote por Maria Lopez. ⟦She will fix the potholes on Elm Street⟧.', 'the uncovered words are marked, not pretended')
  t.equal(partial.coverage, 0.2, '2 of 10 words')

  t.equal(local('Gracias por su apoyo. Cada voto cuenta.', 'es', 'fr').translation, 'Merci pour votre soutien. Chaque voix compte.', 'from any glossary language to any other')
  t.match(local('The weather is lovely.', 'en', 'de'), { translated: 'none', translation: '', note: /covers none of this text: nothing was translated/ })
  t.match(local('Vote for Maria Lopez.', 'en', 'ja'), { translated: 'none', translation: '', note: /the campaign glossary has no Japanese phrases \(it covers English, Spanish, French, German\)/ })
  t.match(local('!!!', 'und', 'es'), { translated: 'none', note: /give source_language/ })
  t.equal(languageName('target_language', 'fr'), 'French')
  t.throws(() => languageName('target_language', 'xx'), { message: 'invalid arguments: /target_language: "xx" is not an ISO 639-1 language code' })
})

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

t.test('compliance: the rules find each planted problem, and a clean ad passes', async t => {
  const engine = await localEngine()
  const rules = loadRules()
  const fundraising = fundraisingOf({ 'dora@x.test': [250_000, 50_000] })
  const bad = checkCompliance(engine, rules, fundraising, { text: BAD_EMAIL, channel: 'email', day: '2026-05-10' })
  t.equal(bad.solicits, true)
  t.same(bad.findings.map(f => [f.rule_id, f.severity]), [
    ['DISCLAIMER', 'error'], ['EMAIL-OPT-OUT', 'error'], ['POSTAL-ADDRESS', 'error'], ['NOT-DEDUCTIBLE-NOTICE', 'error'],
    ['GOVERNMENT-ENDORSEMENT', 'error'], ['DEDUCTIBLE-CLAIM', 'error'], ['BEST-EFFORTS', 'warning'], ['ASK-OVER-LIMIT', 'warning']
  ])
  t.same(bad.findings.find(f => f.rule_id === 'GOVERNMENT-ENDORSEMENT')?.evidence, ['Friends, our plan is endorsed by the Elections Board.'])
  t.same(bad.findings.find(f => f.rule_id === 'ASK-OVER-LIMIT')?.evidence, ['$5,000 is more than the per-donor limit of $3,500.00 per election'])
  t.match(bad.not_applied, [{ rule_id: 'DISCLAIMER-SPONSOR', reason: 'no sponsor given' }, { rule_id: 'CONTRIBUTION-LIMIT', reason: 'no amount_cents or donor_email given' }])

  const good = checkCompliance(engine, rules, fundraising, { text: GOOD_AD, channel: 'ad', sponsor: 'Lopez for Council', day: '2026-05-10' })
  t.same(good.findings, [], 'disclaimer present and naming the sponsor; no request for money')
  t.ok(good.applied.includes('DISCLAIMER-SPONSOR'))
  const wrongSponsor = checkCompliance(engine, rules, fundraising, { text: GOOD_AD, channel: 'ad', sponsor: 'Friends of Maria', day: '2026-05-10' })
  t.same(wrongSponsor.findings.map(f => f.evidence[0]), ['the disclaimer “Paid for by Lopez for Council.” does not name Friends of Maria'])

  const over = checkCompliance(engine, rules, fundraising, { text: GOOD_AD, channel: 'ad', amount_cents: 60_000, donor_email: 'Dora@X.test', day: '2026-05-10' })
  t.same(over.findings.map(f => [f.rule_id, f.severity, f.evidence[0]]), [['CONTRIBUTION-LIMIT', 'error', 'over the limit by $100.00: $3,000.00 given toward the 2026 primary election + $600.00 = $3,600.00 of the $3,500.00 limit']])
  t.same(over.donor, { donor_id: donorId('dora@x.test'), election: '2026-primary', donations: 2, given_cents: 300_000 })
  t.equal(checkCompliance(engine, rules, fundraising, { text: GOOD_AD, channel: 'ad', amount_cents: 20_000, donor_email: 'dora@x.test', day: '2026-05-10' }).findings[0].severity, 'warning', '$3,200 of $3,500: near the limit')
  t.same(checkCompliance(engine, rules, fundraising, { text: GOOD_AD, channel: 'ad', amount_cents: 60_000, donor_email: 'dora@x.test', day: '2026-06-03' }).findings, [], 'the day after the primary, a gift counts toward the general: another limit')
  t.same(checkCompliance(engine, rules, fundraising, { text: GOOD_AD, channel: 'ad', amount_cents: 100, day: '2026-11-04' }).not_applied.find(r => r.rule_id === 'CONTRIBUTION-LIMIT'),
    { rule_id: 'CONTRIBUTION-LIMIT', reason: 'no election cycle is configured on or after 2026-11-04' }, 'after the last configured cycle')
  t.same(checkCompliance(engine, rules, fundraising, { text: 'Our gifts are not tax-deductible. Chip in today.', channel: 'post', day: '2026-05-10' }).findings.map(f => f.rule_id), ['DISCLAIMER', 'BEST-EFFORTS'], 'a denial is no deductibility claim')
  t.same(amountsInCents('Give $25, $1,000 or $2 million'), [{ text: '$25', cents: 2500 }, { text: '$1,000', cents: 100_000 }, { text: '$2 million', cents: 200_000_000 }])
})

/** A calendar day `days` from today, and the same as due-dates.ts reads it ("December 3, 2026"). */
function dayFromToday (days: number): { iso: string, written: string } {
  const at = new Date(Date.now() + days * 86_400_000)
  return { iso: at.toISOString().slice(0, 10), written: at.toLocaleDateString('en-US', { month: 'long', day: 'numeric', year: 'numeric', timeZone: 'UTC' }) }
}

t.test('the four modules through the API', async t => {
  const { login: cookie, call } = await campaignApp(t)
  const [volunteer, readonly] = [await cookie('volunteer'), await cookie('readonly')]

  await t.test('translate-content: volunteers translate with the glossary; 400 for an unknown language, 413 for a long text', async t => {
    interface Translated { translation: string, translated: string, method: string, source_language: string, detected: { language: string } | null, note: string, sources: string[], resource_id: string, engine: string }
    const result = await call<Translated>('translate-content', { text: 'Thank you for your support. Every vote counts!', target_language: 'fr' }, volunteer)
    t.match(result, { translation: 'Merci pour votre soutien. Chaque voix compte!', translated: 'full', method: 'glossary', source_language: 'en', detected: { language: 'en' }, engine: /^local/, resource_id: /^[0-9a-f]{16}$/ })
    t.same(result.sources, ['campaign glossary (plugins/campaign/data/campaign-glossary.toml)', 'glossary: Thank you for your support → Merci pour votre soutien', 'glossary: Every vote counts → Chaque voix compte'])
    const same = await call<Translated>('translate-content', { text: 'Hola', target_language: 'es', source_language: 'es' })
    t.match(same, { translation: 'Hola', method: 'unchanged', note: 'The text is already in Spanish: nothing to translate.' })
    await t.rejects(call('translate-content', { text: 'Hi', target_language: 'xx' }), new ServerFunctionError(400, 'invalid arguments: /target_language: "xx" is not an ISO 639-1 language code'))
    t.equal(await statusOf(call('translate-content', { text: 'Hi', target_language: 'spanish' })), 400, 'not a two-letter code')
    const long = 'Vote. '.repeat(3400)
    await t.rejects(call('translate-content', { text: long, target_language: 'es' }), new ServerFunctionError(413, `text is ${long.length.toLocaleString('en-US')} characters; at most 20,000 are analysed at once`))
    t.equal(await statusOf(call('translate-content', { text: 'Hi', target_language: 'es' }, readonly)), 403, 'readonly does not write the campaign\'s words')
  })

  await call('ingest-posts', { posts: POSTS })
  await call('kb-ingest', { title: 'Housing plan', text: HOUSING_PLAN })
  await call('extract-commitments', { text: PROMISE, said_on: '2025-06-01', source: 'launch speech' })
  await call('analyze-regulation', { title: 'Reporting Act', jurisdiction: 'State', text: 'SECTION 2. Reports.\nEach committee shall file a pre-election report no later than May 20, 2026.' })

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
    await t.rejects(call('anticipate-questions', { from: '2026-05-09', to: '2026-05-01' }), new ServerFunctionError(400, 'invalid arguments: /to: comes before from'))

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
    await t.rejects(call('preparation-checklist', { event: 'Town hall', topics: ['  '] }), new ServerFunctionError(400, 'invalid arguments: /topics/0: must not be blank'))
  })

  await t.test('compare-policies: texts or knowledge-base documents; 404 for an unknown one', async t => {
    interface Compared { counts: Record<string, number>, clauses: Array<{ status: string }>, summary: string, summary_method: string, sources: string[], resource_id: string, engine: string }
    const compared = await call<Compared>('compare-policies', { a: { title: 'Platform 2025', text: POLICY_A }, b: { title: 'Platform 2026', text: POLICY_B } }, readonly)
    t.match(compared, { counts: { changed: 3, added: 1, removed: 1, unchanged: 1, substantive: 3 }, summary_method: 'rules', sources: ['[A] Platform 2025', '[B] Platform 2026'], engine: /^local/ })
    const a = await call<{ document_id: string }>('kb-ingest', { title: 'Platform 2025', text: POLICY_A })
    const b = await call<{ document_id: string }>('kb-ingest', { title: 'Platform 2026', text: POLICY_B })
    const fromKb = await call<Compared>('compare-policies', { a: { document_id: a.document_id }, b: { document_id: b.document_id } })
    t.same(fromKb.sources, [`[A] Platform 2025 (knowledge-base document ${a.document_id})`, `[B] Platform 2026 (knowledge-base document ${b.document_id})`])
    t.equal(fromKb.counts.substantive, 3, 'the same changes from the stored passages')
    await t.rejects(call('compare-policies', { a: { document_id: 'nope' }, b: { text: POLICY_B } }), new ServerFunctionError(404, 'no knowledge-base document "nope"'))
    await t.rejects(call('compare-policies', { a: { text: POLICY_A, document_id: a.document_id }, b: { text: POLICY_B } }), new ServerFunctionError(400, 'invalid arguments: /a/text: give either text or document_id, not both or neither'))
    const long = 'Volunteers may canvass. '.repeat(4200)
    await t.rejects(call('compare-policies', { a: { text: POLICY_A }, b: { text: long } }), new ServerFunctionError(413, `b/text is ${long.length.toLocaleString('en-US')} characters; at most 100,000 are analysed at once`))
  })

  await t.test('compliance-check stores each check; generate-report reports the period with its sources', async t => {
    const year = new Date().toISOString().slice(0, 4)
    await call('record-donation', { donor_name: 'Dora Donor', donor_email: 'dora@x.test', amount_cents: 330_000, donor_address: '12 Elm Street, Springfield, IL 62701', donor_occupation: 'Teacher', donor_employer: 'Springfield Schools' })
    await call('record-donation', { donor_name: 'Sam Small', donor_email: 'sam@x.test', amount_cents: 2_500 })
    const soon = dayFromToday(10)
    await call('analyze-regulation', { title: 'Filing Rule', text: `SECTION 1. Filing.\nEach committee shall file its year-end report no later than ${soon.written}.` })

    interface Checked { check_id: string, passed: boolean, counts: Record<string, number>, findings: Array<{ rule_id: string }>, sources: string[], resource_id: string, engine: string }
    const bad = await call<Checked>('compliance-check', { text: BAD_EMAIL, channel: 'email' })
    t.match(bad, { passed: false, counts: { error: 6, warning: 2, info: 0 }, engine: /^local/ })
    t.equal(bad.resource_id, bad.check_id)
    const limit = await call<Checked>('compliance-check', { text: GOOD_AD, channel: 'ad', sponsor: 'Lopez for Council', amount_cents: 50_000, donor_email: 'dora@x.test' })
    t.same(limit.findings.map(f => f.rule_id), ['CONTRIBUTION-LIMIT'], 'the fundraising store\'s $3,300 + $500 is over the limit')
    t.match(limit.sources[1], /^\[2\] fundraising: donor [0-9a-f]{16}, 1 gift toward the \d{4} general election, \$3,300\.00; limit \$3,500\.00$/)
    const good = await call<Checked>('compliance-check', { text: GOOD_AD, channel: 'ad', sponsor: 'Lopez for Council' })
    t.match(good, { passed: true, findings: [] })
    t.equal(await statusOf(call('compliance-check', { text: GOOD_AD, channel: 'ad' }, readonly)), 403, 'a check is stored: staff only')
    t.equal(await statusOf(call('compliance-check', { text: GOOD_AD, channel: 'billboard' })), 400, 'an unknown channel')

    interface Report {
      report_id: string, resource_id: string, summary: string, summary_method: string, sources: string[], engine: string
      donations: { donations: number, total_cents: number, near_or_over_limit: Array<{ name: string, standing: string }>, itemized_donors: Array<{ name: string }>, sources: string[] }
      checks: { checks: number, passed: number, failed: number, by_rule: Array<{ rule_id: string, findings: number }>, sources: string[] }
      deadlines: { deadlines: Array<{ date: string, when: string, regulation: string }>, sources: string[] }
    }
    const report = await call<Report>('generate-report', { period_from: `${year}-01-01`, period_to: new Date().toISOString().slice(0, 10) })
    t.match(report.donations, { donations: 2, total_cents: 332_500, near_or_over_limit: [{ name: 'Dora Donor', standing: 'near' }], itemized_donors: [{ name: 'Dora Donor' }] })
    t.match(report.checks, { checks: 3, passed: 1, failed: 2 })
    t.equal(report.checks.by_rule.find(r => r.rule_id === 'DISCLAIMER')?.findings, 1)
    t.same(report.deadlines.deadlines.filter(d => d.regulation === 'Filing Rule').map(d => [d.date, d.when]), [[soon.iso, 'upcoming']], 'a deadline in the 30 days after the period')
    t.ok([report.donations, report.checks, report.deadlines].every(section => section.sources.length > 0 && section.sources.every(line => report.sources.includes(line))), 'each section cites its sources')
    t.match(report, { summary_method: 'rules', summary: /^From \d{4}-01-01 to .*: 2 donations totalling \$3,325\.00 from 2 donors; 1 near or over the \$3,500\.00 limit/, engine: /^local/ })
    t.equal(report.resource_id, report.report_id)
    await t.rejects(call('generate-report', { period_from: `${year}-05-01`, period_to: `${year}-04-01` }), new ServerFunctionError(400, 'invalid arguments: /period_to: comes before period_from'))
    t.equal(await statusOf(call('generate-report', { period_from: `${year}-01-01`, period_to: `${year}-02-01` }, readonly)), 403)
    await t.rejects(call('generate-report', { period_from: `${year}-02-30`, period_to: `${year}-03-01` }), new ServerFunctionError(400, `invalid arguments: /period_from: "${year}-02-30" is not a calendar day`))
  })
})

t.test('the generative paths against a stand-in OpenAI-compatible server, and the local engine with a note once it is down', async t => {
  const standIn = await startChatStandIn(t, request => {
    const prompt = request.body.messages.map(m => m.content).join('\n')
    if (prompt.includes('Translate this text')) return 'Merci pour votre soutien. Les nids-de-poule seront réparés.'
    if (prompt.includes('suggested answer')) return [...prompt.matchAll(/^Q(\d+): /gm)].map(m => `A${m[1]}: An answer from the cited plan [${/\[(\d+)\] Housing plan/.exec(prompt)?.[1] ?? '0'}].`).join('\n')
    if (prompt.includes('policy text changed')) return '[B] makes disclosure mandatory and raises the threshold to $500.'
    return 'Dora Donor is near the limit.'
  })
  const kernel = await testKernel(t, { plugins: [devIdp, campaign], config: withDevIdp({ generator_url: standIn.url, generator_model: 'stand-in' }) })
  const baseUrl = kernel.url('app')
  const user = (kernel.service('campaign').devIdp?.users ?? []).find(u => u.role === 'staff') as DevUser
  const { cookie } = await scriptedLogin(baseUrl, user)
  const call = async <T> (name: string, args: object): Promise<T> => await callServerFunction<T>(name, args, { baseUrl, headers: { cookie } })
  const engine = `generative (stand-in at ${standIn.host})`

  const translated = await call<{ translation: string, translated: string, method: string, glossary_applied: unknown[], note: string, engine: string }>('translate-content', { text: 'Thank you for your support. The potholes will be fixed.', target_language: 'fr' })
  t.match(translated, { translation: 'Merci pour votre soutien. Les nids-de-poule seront réparés.', translated: 'full', method: 'generative', engine, note: /^Machine translation by generative \(stand-in/ })
  const sent = standIn.received[0].body.messages.map(m => m.content).join('\n')
  t.match(sent, /Translate this text from English into French\.[\s\S]*Thank you for your support → Merci pour votre soutien[\s\S]*The potholes will be fixed\./, 'the languages, the glossary terms and the text are sent')

  await call('ingest-posts', { posts: POSTS })
  await call('kb-ingest', { title: 'Housing plan', text: HOUSING_PLAN })
  interface Anticipated { questions: Array<{ answer: { found: boolean, method: string, text: string, cites: number[] } }>, engine: string }
  const anticipated = await call<Anticipated>('anticipate-questions', { topic: 'housing in Eastside', date: '2026-05-10', from: '2026-04-01', to: '2026-05-09T23:59:59Z' })
  t.equal(anticipated.engine, engine)
  const answered = anticipated.questions.filter(q => q.answer.found)
  t.ok(answered.length > 0 && answered.every(q => q.answer.method === 'generative' && /^An answer from the cited plan \[\d+\]\.$/.test(q.answer.text) && q.answer.cites.length === 1), 'each found answer drafted by the provider, citing the passage')
  t.ok(anticipated.questions.filter(q => !q.answer.found).every(q => q.answer.text === 'No prepared answer in the knowledge base.'), 'nothing drafted without a passage')
  t.match(standIn.received[1].body.messages[1].content, /Q1: .*\nWhy it is likely: .*\nSources:\n\[\d+\] Housing plan, passage 1: Housing plan: Maria Lopez will freeze rents/)

  const compared = await call<{ summary: string, summary_method: string, counts: { substantive: number }, engine: string }>('compare-policies', { a: { text: POLICY_A }, b: { text: POLICY_B } })
  t.match(compared, { summary: '[B] makes disclosure mandatory and raises the threshold to $500.', summary_method: 'generative', counts: { substantive: 3 }, engine })
  t.match(standIn.received[2].body.messages[1].content, /changed \(SECTION 1\. Contributions\.\): .* — in substance: “may” → “must” \(strengthened\); \$200 → \$500/)

  const year = new Date().toISOString().slice(0, 4)
  const report = await call<{ summary: string, summary_method: string, engine: string }>('generate-report', { period_from: `${year}-01-01`, period_to: `${year}-12-31` })
  t.match(report, { summary: 'Dora Donor is near the limit.', summary_method: 'generative', engine })

  await standIn.stop()
  const down = await call<{ method: string, engine: string, fallback_note: string }>('translate-content', { text: 'Thank you for your support.', target_language: 'es' })
  t.match(down, { method: 'glossary', engine: /^local/, fallback_note: new RegExp(`^the generative provider at http://${standIn.host.replace(/\./g, '\\.')}/v1 cannot be reached: .*; this answer is the local engine's\\.$`) }, 'the provider down: the glossary translation, with a note')
  t.match(await call('compare-policies', { a: { text: POLICY_A }, b: { text: POLICY_B } }), { summary_method: 'rules', fallback_note: /cannot be reached/ }, 'no silent fallback to the rules: a visible one')
})
