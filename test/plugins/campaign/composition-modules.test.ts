// The writing modules (campaign copy, canvassing, candidate briefings, opposition research): their
// methods on fixture texts, then each function through the API with signed-in users, and the generative
// path of campaign copy and briefings through a stand-in OpenAI-compatible server (then stopped: the local engine's copy, with a note).
import t from 'tap'
import devIdp from '../../../plugins/dev-idp/index.js'
import campaign from '../../../plugins/campaign/index.js'
import { callServerFunction, ServerFunctionError } from '../../../plugins/campaign/client.js'
import { localEngine } from '../../../plugins/campaign/language/local-engine.js'
import { loadTemplates } from '../../../plugins/campaign/language/templates.js'
import type { Commitment } from '../../../plugins/campaign/modules/accountability/accountability.js'
import { briefingSections, summaryLines } from '../../../plugins/campaign/modules/candidate-briefings/briefing-book.js'
import { Bm25Index } from '../../../plugins/campaign/text/bm25.js'
import { composeScript, scriptIssues, scriptText, ScriptTemplates } from '../../../plugins/campaign/modules/canvassing/canvass-script.js'
import { CHANNELS, composeCopy, CopyTemplates, hashtagOf, headlinePhrase, SHAPES, titleCase, type Channel } from '../../../plugins/campaign/modules/campaign-copy/copy-composer.js'
import type { KbLike } from '../../../plugins/campaign/grounding/grounding.js'
import { Citations, clip, groundedSentences, resourceHash } from '../../../plugins/campaign/grounding/grounding.js'
import { analyseStatements, type Statement } from '../../../plugins/campaign/modules/opposition-research/opponent-statements.js'
import type { Post } from '../../../plugins/campaign/records/posts.js'
import { campaignApp, moduleUrl, scriptedLogin, statusOf, withDevIdp } from '../../support/campaign.js'
import { startChatStandIn } from '../../support/chat-standin.js'
import { testKernel } from '../../support/kernel.js'

const TRANSIT = 'Our transit plan doubles bus service on every major route by 2027. Buses will run every ten minutes at peak hours. ' +
  'The plan is funded by the state transit grant.\n\n' +
  'Public transit fares will be free for students and seniors. Free fares save a family up to $900 a year.\n\n' +
  'The new park on Elm Street opens in June with a playground.'
const HOUSING = 'We will build 2,000 affordable homes near transit stations by 2028. Rent increases will be capped at 3 percent a year for existing tenants.\n\n' +
  'The housing trust fund will help first-time buyers with down payments.'
const TOLL = 'The bridge toll pays for the repairs of the Riverside bridge. Maria Lopez proposed a discount on the bridge toll for daily commuters.'

/** Eastside's posts raise housing (three, angry) and buses (one); Westside's are about something else. */
const PLACE_POSTS = [
  { text: 'Rent in Eastside is unaffordable and landlords keep raising it.', location: 'Eastside' },
  { text: 'My rent went up again, this is outrageous.', location: 'Eastside' },
  { text: 'The buses on Main Street are always late.', location: 'Eastside' },
  { text: 'Eastside needs more affordable housing now, the rents are a disgrace.', location: '' },
  { text: 'Westside parks are lovely this spring.', location: 'Westside' }
]

/** Statements of one opponent: a reversal on the bridge toll, a negated promise on property taxes, and one on parks. */
const STATEMENTS = [
  { text: 'I strongly support the bridge toll; it is a fair way to pay for repairs.', said_on: '2025-03-01', source: 'Herald interview' },
  { text: 'The bridge toll is a terrible burden on working families, and I oppose it.', said_on: '2026-01-10', source: 'town hall' },
  { text: 'I will never raise property taxes.', said_on: '2025-05-01', source: 'debate' },
  { text: 'We must raise property taxes to fund our schools.', said_on: '2026-02-01', source: 'press release' },
  { text: 'Our parks are wonderful and deserve more trees.', said_on: '2025-06-01', source: 'newsletter' }
]

function kbOf (documents: Array<{ title: string, text: string }>): KbLike {
  const index = new Bm25Index()
  const passages = documents.flatMap(d => d.text.split('\n\n').map((text, passage) => ({ document_id: d.title.toLowerCase().replace(/\s+/g, '-'), title: d.title, source: '', passage, text })))
  passages.forEach((p, i) => { index.add(String(i), p.text) })
  return { query: (q, n) => index.search(q, n).map(r => passages[Number(r.id)]) }
}

const KB = kbOf([{ title: 'Transit plan', text: TRANSIT }, { title: 'Housing plan', text: HOUSING }, { title: 'Bridge toll', text: TOLL }])

t.test('campaign copy: each channel in its shape and limit, quoting cited sentences', async t => {
  const engine = await localEngine()
  const templates = loadTemplates(moduleUrl('campaign-copy'), 'campaign-copy', CopyTemplates)
  const compose = (channel: Channel, topic: string, length: 'short' | 'medium' | 'long' = 'medium', tone: 'neutral' | 'warm' | 'urgent' | 'hopeful' = 'neutral'): ReturnType<typeof composeCopy> & { lines: string[] } => {
    const citations = new Citations()
    const request = { topic, channel, tone, length }
    const candidates = groundedSentences(engine, KB, topic, { passages: 5, perPassage: 2, total: 2 * SHAPES[channel].sentences[length] }, citations)
    return { ...composeCopy(templates, request, headlinePhrase(engine, topic, candidates), candidates, cites => citations.linesOf(cites)), lines: citations.lines }
  }
  for (const channel of CHANNELS) {
    const copy = compose(channel, 'public transit')
    t.ok(copy.text.length <= SHAPES[channel].limit, `${channel}: ${copy.text.length} ≤ ${SHAPES[channel].limit}`)
    t.ok(copy.sentences.length >= 1 && copy.sentences.length <= SHAPES[channel].sentences.medium, `${channel}: ${copy.sentences.length} sentence(s)`)
    for (const s of copy.sentences) t.ok(copy.text.includes(`${s.text} [${s.cite}]`), `${channel}: the quoted sentence carries its marker`)
    t.ok(copy.text.includes(copy.call_to_action), `${channel}: the call to action`)
    t.equal(copy.headline === '', SHAPES[channel].headline === 0, `${channel}: a headline only where the channel has one`)
  }
  const sms = compose('sms', 'public transit')
  t.equal(sms.text, 'Public transit fares will be free for students and seniors. [1] Reply YES to get involved. STOP to opt out.', 'the closest sentence, then the call to action')
  t.same(sms.lines, ['[1] Transit plan, passage 2', '[2] Transit plan, passage 1', '[3] Housing plan, passage 1'], 'candidate passages cited closest first (homes near transit stations last)')
  const email = compose('email', 'public transit', 'long', 'warm')
  t.equal(email.headline, 'Public Transit Fares: what it means for you', 'the key phrase of the quoted sentences, in the tone\'s headline')
  t.match(email.text, /^Dear friends,\n\nWe know how much this matters to you and your family\. Public transit fares will be free for students and seniors\. \[1\]/)
  t.match(email.text, /transit grant\. \[2\] We will build 2,000 affordable homes near transit stations by 2028\. \[3\]\n\n/, 'a long email quotes four sentences')
  t.match(email.text, /\n\nSources: \[1\] Transit plan, passage 2; \[2\] Transit plan, passage 1; \[3\] Housing plan, passage 1$/, 'an email lists its sources')
  const flyer = compose('flyer', 'bus service', 'short', 'urgent')
  t.match(flyer.text, /^• Our transit plan doubles bus service on every major route by 2027\. \[1\]\n/, 'a flyer has bullets')
  t.notMatch(compose('speech', 'public transit').text, /Sources:/, 'a speech keeps markers but no sources line')
  const social = compose('social', 'public transit', 'medium', 'urgent')
  t.match(social.text, /Share this now\. #PublicTransitFares$/, 'the hashtag of the key phrase')

  // A sentence longer than an SMS is cut to fit.
  const longKb = kbOf([{ title: 'Long', text: 'Public transit in our city will get new electric buses, faster trains, safer stations, brighter lighting, more frequent night service, free transfers between lines and accessible platforms for every rider who depends on public transit.' }])
  const citations = new Citations()
  const candidates = groundedSentences(engine, longKb, 'public transit', { passages: 1, perPassage: 1, total: 1 }, citations)
  const cut = composeCopy(templates, { topic: 'public transit', channel: 'sms', tone: 'neutral', length: 'short' }, 'Public Transit', candidates, () => [])
  t.ok(cut.clipped && cut.text.length <= 160, `clipped to ${cut.text.length}`)
  t.match(cut.text, /… \[1\] Reply YES/)
  t.same(groundedSentences(engine, KB, 'moon landing', { passages: 3, perPassage: 2, total: 4 }, new Citations()), [], 'nothing on the topic')

  t.equal(titleCase('cost of living crisis'), 'Cost of Living Crisis')
  t.equal(hashtagOf('Free Bus Fares!'), '#FreeBusFares')
  t.equal(clip('one two three four', 12), 'one two…')
  t.equal(resourceHash('x', { a: 1 }), resourceHash('x', { a: 1 }), 'a stable id')
})

t.test('canvassing: the most urgent local issues, cited talking points, objections and the close', async t => {
  const engine = await localEngine()
  const templates = loadTemplates(moduleUrl('canvassing'), 'canvassing', ScriptTemplates)
  const eastside = PLACE_POSTS.filter(p => p.location === 'Eastside' || p.text.includes('Eastside'))
  const issues = scriptIssues(engine, [], eastside)
  t.same(issues.map(i => [i.issue, i.from, i.local?.mentions]), [['housing', 'local', 3], ['transportation', 'local', 1]], 'housing raised three times, buses once')
  t.ok((issues[0].local?.polarity ?? 0) < 0, 'housing is raised in anger')
  const citations = new Citations()
  const script = composeScript(engine, KB, templates, citations, { mode: 'door', volunteer: 'Vera', location: 'Eastside' }, issues)
  t.equal(script.greeting, "Hi, my name is Vera, and I'm a volunteer with the campaign in Eastside. Do you have a minute to talk about what matters to you?")
  t.match(script.issues[0], { intro: 'Neighbours in Eastside keep telling us about housing.', question: 'How has housing affected you and your family?' })
  t.same(issues[0].query, 'rent rent housing landlords', 'what people there say, as often as they say it')
  t.match(script.issues[0].talking_points, [{ cite: 1, text: 'Rent increases will be capped at 3 percent a year for existing tenants.' }], 'the housing plan answers rents')
  t.match(script.issues[1].talking_points[0], { text: /bus/i }, 'the transit plan answers the buses')
  t.equal(script.objections.length, 6)
  t.match(script.objections.find(o => o.objection === 'All politicians are the same.')?.response, /something concrete the campaign stands for: Rent increases will be capped .* \[1\]$/)
  const text = scriptText(script, citations.lines)
  t.match(text, /1\. housing\nNeighbours in Eastside keep telling us about housing\.\nHeard here: “.+”\n• Rent increases .* \[1\]\nAsk: How has housing affected you/)
  t.match(text, /Close: Can we count on your vote on election day\?.*\n\nSources: \[1\] Housing plan, passage 1/)

  const given = scriptIssues(engine, ['rent control', 'moon landings'], eastside)
  t.match(given, [{ issue: 'rent control', from: 'given', local: { mentions: 3 } }, { issue: 'moon landings', local: null }], '"rent control" is housing, which Eastside raises; the moon is no local issue')
  const unknown = composeScript(engine, KB, templates, new Citations(), { mode: 'phone', volunteer: 'Vera' }, [given[1]])
  t.match(unknown.issues[0], { talking_points: [], note: /nothing on moon landings/ })
  t.match(unknown.objections.find(o => o.objection === 'All politicians are the same.')?.response, /listening first/, 'the answer without a talking point')
  t.match(unknown.greeting, /^Hi, this is Vera, calling as a volunteer with the campaign\. /)
})

const hoursAgo = (h: number): string => new Date(Date.now() - h * 3_600_000).toISOString()

function post (i: number, text: string, polarity: number, source: string, terms: string[]): Post {
  return { post_id: `p${i}`, text, source, author: '', location: '', posted_at: hoursAgo(48 - i), language: 'en', score: Math.sign(polarity) * 3, polarity, label: polarity > 0 ? 'positive' : polarity < 0 ? 'negative' : 'neutral', terms }
}

t.test('candidate briefings: every section with its sources, and the likely questions in order', async t => {
  const engine = await localEngine()
  const posts = [
    post(1, 'The bridge toll hike is robbery for commuters.', -0.6, 'x', ['bridge', 'toll', 'hike', 'robbery', 'commuters']),
    post(2, 'Commuters hate the bridge toll hike.', -0.5, 'y', ['commuters', 'hate', 'bridge', 'toll', 'hike']),
    post(3, 'Another bridge toll hike, commuters pay again.', -0.4, 'x', ['another', 'bridge', 'toll', 'hike', 'commuters', 'pay']),
    post(4, 'Glad the bridge toll funds repairs.', 0.5, 'z', ['glad', 'bridge', 'toll', 'funds', 'repairs'])
  ]
  const commitment: Commitment = {
    commitment_id: 'c1', actor: 'Maria Lopez', text: 'We will cut the bridge toll by March 1, 2025', verb: 'will', promise: 'cut the bridge toll', due_on: '2025-03-01', due_text: 'by March 1, 2025',
    source: '', said_on: '2024-12-01', status: 'open', evidence_count: 0, recorded_by: '', recorded_at: '2024-12-01T00:00:00Z', updated_at: '2024-12-01T00:00:00Z'
  }
  const article = {
    article_id: 'a1', title: 'Bridge toll hike angers commuters', outlet: 'Metro Watch', url: '', published_at: '2026-11-01T00:00:00Z', tone: 'critical' as const,
    summary: [{ index: 0, text: 'Commuters are furious about the toll.', score: 1 }], entity_sentiment: [], sentiment: { mean_sentence_polarity: -0.5 }, entities: { people: [], organizations: [], places: [] }
  }
  const citations = new Citations()
  const data = {
    subject: 'bridge toll', date: '2026-12-01', days: 30, terms: ['bridge', 'toll'], posts,
    coverage: { matched: 1, newest: [article as never] }, commitments: [commitment], today: '2026-11-23'
  }
  const s = briefingSections(engine, KB, citations, data)
  t.match(s.background.sentences, [{ cite: 1, text: 'The bridge toll pays for the repairs of the Riverside bridge.' }, { cite: 1, text: /discount on the bridge toll/ }])
  t.same(s.background.sources, ['[1] Bridge toll, passage 1'])
  t.match(s.sentiment, { posts: 4, negative: 3, positive: 1, label: 'negative', most_negative: { post_id: 'p1' }, most_positive: { post_id: 'p4' } })
  t.same(s.sentiment.by_source.map(x => [x.source, x.count]), [['x', 2], ['y', 1], ['z', 1]])
  t.match(s.narratives.items[0], { terms: ['commuters', 'hike'], post_count: 3 }, 'the subject\'s own words are not the story: the hike is')
  t.match(s.media, { matched: 1, tones: { critical: 1 }, sources: ['article a1: “Bridge toll hike angers commuters”, Metro Watch, 2026-11-01'] })
  t.match(s.commitments, { open: 1, overdue: 1, items: [{ commitment_id: 'c1', overdue: true, due_by_date: true }], sources: ['commitment c1 (Maria Lopez, 2024-12-01)'] })
  t.same(s.likely_questions.items.map(q => q.basis), ['commitment c1', 'article a1', `narrative ${s.narratives.items[0].narrative_id}`, 'post p1 (x, ' + posts[0].posted_at.slice(0, 10) + ')', 'knowledge base'],
    'overdue commitment, critical article, critical narrative, critical posts, then the position')
  t.equal(s.likely_questions.items[0].question, '“We will cut the bridge toll by March 1, 2025” was due on 2025-03-01. Why is it late, and when will it be done?')
  t.ok(s.likely_questions.items.every(q => q.answer_points.length > 0), 'each question has answer points from the knowledge base')
  t.equal(s.likely_questions.items.at(-1)?.question, 'What is your position on bridge toll?')
  const lines = summaryLines(data, s)
  t.match(lines.join('\n'), /Posts of the last 30 days: 4 \(3 negative, 1 positive; mean polarity -0\.25, negative\)\.\nNarratives: commuters · hike \(3 posts\)\.\nMedia: 1 article\(s\), 1 critical/)
  t.match(lines.join('\n'), /Commitments: 1 open \(1 overdue\), 0 broken\./)
})

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

t.test('the writing modules through the API', async t => {
  const { login, call } = await campaignApp(t)
  const [readonly, volunteer] = [await login('readonly'), await login('volunteer')]
  await call('kb-ingest', { title: 'Transit plan', text: TRANSIT, source: 'platform.pdf' })
  await call('kb-ingest', { title: 'Housing plan', text: HOUSING })
  await call('kb-ingest', { title: 'Bridge toll', text: TOLL })
  const feedback = async (module: string, resource: string): Promise<void> => {
    t.match(await call('record-feedback', { module_id: module, resource_id: resource, is_positive: true, is_active: true }), { recorded: true }, `feedback on ${module}`)
  }

  await t.test('campaign copy: written, stored, listed; nothing invented without sources', async t => {
    interface Copy { copy_id: string | null, resource_id: string, text: string, headline: string, grounded: boolean, method: string, citation_lines: string[], sources: Array<{ title: string }>, characters: number, engine: string, note?: string }
    const sms = await call<Copy>('generate-copy', { topic: 'public transit', channel: 'sms' })
    t.match(sms, { grounded: true, method: 'extractive', engine: /^local/, citation_lines: ['[1] Transit plan, passage 2'], text: /^Public transit fares will be free for students and seniors\. \[1\] Reply YES/ })
    t.equal(sms.characters, sms.text.length)
    t.equal(sms.resource_id, sms.copy_id)
    const email = await call<Copy>('generate-copy', { topic: 'affordable homes', channel: 'email', audience: 'young families', tone: 'hopeful', length: 'short' })
    t.match(email, { headline: /: a better future starts here$/, text: /^Dear young families,\n\nTogether, we can make this happen\. We will build 2,000 affordable homes/ })
    await call('kb-ingest', { title: 'Wage plan', text: 'We will raise the minimum wage to $17.25 per hour, 3.4 percent above inflation.' })
    const wage = await call<Copy>('generate-copy', { topic: 'minimum wage', channel: 'social' })
    t.match(wage.text, /the minimum wage to \$17\.25 per hour, 3\.4 percent above inflation\. \[1\]/, 'copy quotes figures whole')
    const nothing = await call<Copy>('generate-copy', { topic: 'moon landing', channel: 'social' })
    t.match(nothing, { grounded: false, copy_id: null, text: '', sources: [], note: /^Nothing in the knowledge base on “moon landing”/ })
    t.type(nothing.resource_id, 'string')
    interface History { total: number, items: Array<{ copy_id: string, channel: string, topic: string }>, next_cursor: string | null, engine: string }
    const history = await call<History>('list-copy-history', { limit: 1 }, readonly)
    t.same([history.total, history.items.map(i => i.topic)], [3, ['minimum wage']], 'newest first; the empty answer is not stored')
    const next = await call<History>('list-copy-history', { limit: 2, cursor: history.next_cursor as string }, readonly)
    t.same(next.items.map(i => i.copy_id), [email.copy_id, sms.copy_id])
    t.same((await call<History>('list-copy-history', { channel: 'sms' })).items.map(i => i.channel), ['sms'])
    await feedback('campaign-copy', sms.resource_id)
    t.equal(await statusOf(call('generate-copy', { topic: 'transit', channel: 'fax' })), 400, 'an unknown channel')
    await t.rejects(call('generate-copy', { topic: 'the of and', channel: 'sms' }), new ServerFunctionError(400, 'invalid arguments: /topic: holds no content words'))
    t.equal(await statusOf(call('generate-copy', { topic: 'transit', channel: 'sms' }, readonly)), 403, 'readonly does not write copy')
  })

  await t.test('canvassing: a volunteer gets a script on the local issues of a place', async t => {
    await call('ingest-posts', { posts: PLACE_POSTS.map((p, i) => ({ ...p, source: 'facebook', author: `n${i}`, posted_at: hoursAgo(i + 1) })) })
    interface Script { resource_id: string, issues: Array<{ issue: string, from: string, talking_points: Array<{ text: string, cite: number }> }>, script: string, citation_lines: string[], posts_read: number, engine: string, method: string, note?: string }
    const script = await call<Script>('generate-script', { location: 'Eastside', audience: 'renters' }, volunteer)
    t.match(script, { posts_read: 4, method: 'extractive', engine: /^local/, issues: [{ issue: 'housing', from: 'local' }, { issue: 'transportation' }] })
    t.match(script.script, /^Hi, my name is .+, and I'm a volunteer with the campaign in Eastside\. .* We're talking with renters today\.\n\n1\. housing/)
    t.match(script.citation_lines, ['[1] Housing plan, passage 1'])
    const again = await call<Script>('generate-script', { location: 'eastside', audience: 'renters' }, volunteer)
    t.equal(again.resource_id, script.resource_id, 'the same script, the same id')
    await feedback('canvassing', script.resource_id)
    const given = await call<Script>('generate-script', { topic: 'free transit fares', mode: 'phone' })
    t.match(given, { issues: [{ issue: 'free transit fares', from: 'given', talking_points: [{ text: /fares will be free/ }] }], posts_read: 0 })
    const empty = await call<Script>('generate-script', { location: 'Atlantis' })
    t.match(empty, { issues: [], note: /No post from Atlantis raises an issue/ })
    await t.rejects(call('generate-script', { audience: 'renters' }), new ServerFunctionError(400, 'invalid arguments: /issues: give the issues (or a topic) to talk about, or a location to take its local issues from'))
    t.equal(await statusOf(call('generate-script', { topic: 'transit' }, readonly)), 403, 'a script is for those who canvass')
  })

  await t.test('candidate briefings: assembled from the knowledge base, posts, articles and commitments; stored', async t => {
    await call('ingest-posts', {
      posts: [
        { text: 'The bridge toll hike is robbery for commuters.', source: 'x', author: 'a1', posted_at: hoursAgo(30) },
        { text: 'Commuters hate the bridge toll hike.', source: 'y', author: 'a2', posted_at: hoursAgo(20) },
        { text: 'Another bridge toll hike, commuters pay again. Terrible.', source: 'x', author: 'a3', posted_at: hoursAgo(10) }
      ]
    })
    await call('analyze-article', { title: 'Bridge toll hike angers commuters', outlet: 'Metro Watch', published_at: '2026-11-01T08:00:00Z', text: 'Commuters are furious about the bridge toll hike. Critics called it a terrible betrayal and a waste.' })
    await call('extract-commitments', { text: 'We will cut the bridge toll by March 1, 2025.', actor: 'Maria Lopez', said_on: '2024-12-01' })
    interface Briefing {
      briefing_id: string, resource_id: string, summary: string, summary_method: string, engine: string, citation_lines: string[], attendees: Array<{ name: string, notes: Array<{ text: string, source: string }> }>
      sections: { background: { sources: string[] }, sentiment: { posts: number, label: string }, media: { matched: number }, commitments: { overdue: number }, likely_questions: { items: Array<{ question: string, basis: string }> } }
    }
    const briefing = await call<Briefing>('generate-briefing', { subject: 'bridge toll', date: '2026-12-01', attendees: ['Maria Lopez'] })
    t.match(briefing, { summary_method: 'extractive', engine: /^local/, sections: { background: { sources: ['[1] Bridge toll, passage 1'] }, sentiment: { posts: 3, label: 'negative' }, media: { matched: 1 }, commitments: { overdue: 1 } } })
    t.match(briefing.sections.likely_questions.items[0].question, /^“We will cut the bridge toll by March 1, 2025” was due on 2025-03-01/)
    t.match(briefing.attendees, [{ name: 'Maria Lopez', notes: [{ text: /^Committed: “We will cut the bridge toll/ }, { text: /Maria Lopez proposed a discount .* \[1\]$/ }] }])
    t.match(briefing.summary, /^bridge toll, 2026-12-01\. Knowledge base: 1 passage\(s\) cited\./)
    t.equal(briefing.resource_id, briefing.briefing_id)
    await feedback('candidate-briefings', briefing.resource_id)
    const unknown = await call<Briefing & { note?: string }>('generate-briefing', { subject: 'moon landing' })
    t.match(unknown, { note: /knows nothing about “moon landing”/, sections: { media: { matched: 0 } } })
    await t.rejects(call('generate-briefing', { subject: 'bridge toll', date: 'next Friday' }), new ServerFunctionError(400, 'invalid arguments: /date: expected an ISO 8601 date or UTC time, got "next Friday"'))
  })

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
    await t.rejects(call('detect-contradictions', { opponent: 'Nobody Known' }), new ServerFunctionError(404, 'no statements of opponent "Nobody Known": add them with generate-opposition-briefing'))
    const long = 'The toll is bad. '.repeat(6000)
    await t.rejects(call('generate-opposition-briefing', { opponent: 'Dan Reyes', statements: [{ text: long }] }), new ServerFunctionError(413, `statements/0/text is ${long.length.toLocaleString('en-US')} characters; at most 100,000 are analysed at once`))
    await t.rejects(call('generate-opposition-briefing', { opponent: 'Dan Reyes', statements: [{ text: 'x', said_on: 'spring' }] }), new ServerFunctionError(400, 'invalid arguments: /statements/0/said_on: expected an ISO 8601 date or UTC time, got "spring"'))
    t.equal(await statusOf(call('generate-opposition-briefing', { opponent: 'Dan Reyes' }, readonly)), 403, 'readonly adds no statements')
  })
})

t.test('campaign copy and briefings with a generative provider (a stand-in OpenAI-compatible server), and while it is down', async t => {
  const standIn = await startChatStandIn(t, request => request.body.messages[1].content.includes('Channel: an SMS')
    ? `HEADLINE: none\nTEXT: Free transit fares for students and seniors [1]. ${'Ride with us. '.repeat(20)}`
    : 'The bridge toll is contested [1].')
  const kernel = await testKernel(t, { plugins: [devIdp, campaign], config: withDevIdp({ generator_url: standIn.url, generator_model: 'stand-in' }) })
  const baseUrl = kernel.url('app')
  const staff = (kernel.service('campaign').devIdp?.users ?? []).find(u => u.role === 'staff') as { username: string, password: string }
  const { cookie } = await scriptedLogin(baseUrl, staff)
  const call = async <T> (name: string, args: object): Promise<T> => await callServerFunction<T>(name, args, { baseUrl, headers: { cookie } })
  await call('kb-ingest', { title: 'Transit plan', text: TRANSIT })
  await call('kb-ingest', { title: 'Bridge toll', text: TOLL })

  const copy = await call<{ text: string, headline: string, clipped: boolean, method: string, engine: string, citation_lines: string[] }>('generate-copy', { topic: 'public transit', channel: 'sms', tone: 'urgent' })
  t.match(copy, { method: 'generative', engine: `generative (stand-in at ${standIn.host})`, headline: '', clipped: true, text: /^Free transit fares for students and seniors \[1\]\. Ride with us\./ })
  t.ok(copy.text.length <= 160, 'the answer is cut to the SMS limit')
  t.same(copy.citation_lines, ['[1] Transit plan, passage 2', '[2] Transit plan, passage 1'], 'the passages sent')
  const prompt = standIn.received[0].body.messages.map(m => m.content).join('\n')
  t.match(prompt, 'Channel: an SMS text message: at most 160 characters')
  t.match(prompt, '[1] Transit plan: Public transit fares will be free for students and seniors.', 'the cited passage is sent')
  t.match(prompt, 'End with this call to action: Reply YES to act today. STOP to opt out.')
  t.notMatch(prompt, /\{\{|<!--/, 'every placeholder filled')

  const nothing = await call<{ method: string, engine: string }>('generate-copy', { topic: 'moon landing', channel: 'sms' })
  t.match(nothing, { method: 'none', engine: /^local/ }, 'nothing is sent without sources')
  t.equal(standIn.received.length, 1)

  const briefing = await call<{ summary: string, summary_method: string, engine: string }>('generate-briefing', { subject: 'bridge toll' })
  t.match(briefing, { summary: 'The bridge toll is contested [1].', summary_method: 'generative', engine: /^generative/ })
  t.match(standIn.received[1].body.messages[1].content, /Background from the knowledge base:\nThe bridge toll pays for the repairs of the Riverside bridge\. \[1\]/)

  await standIn.stop()
  const down = await call<{ method: string, engine: string, fallback_note: string }>('generate-copy', { topic: 'public transit', channel: 'email' })
  t.match(down, { method: 'extractive', engine: /^local/, fallback_note: new RegExp(`^the generative provider at ${standIn.url.replace(/\./g, '\\.')} cannot be reached: .*; this answer is the local engine's\\.$`) }, 'the provider down: the local engine writes it, and says so')
  const history = await call<{ total: number }>('list-copy-history', {})
  t.equal(history.total, 2, 'the local copy is stored')
})
