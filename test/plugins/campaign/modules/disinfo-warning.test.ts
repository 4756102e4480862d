// The disinfo warning on a post with every planted signal and a calm text: signals with their evidence,
// claims matched against knowledge-base passages with negation in mind, cited counter-messages; then
// through the API, and counter-messaging through a stand-in for an OpenAI-compatible provider (a small
// local server: no model can be downloaded here).
import t from 'tap'
import { ServerFunctionError } from '../../../../plugins/campaign/client.js'
import { localEngine } from '../../../../plugins/campaign/language/local-engine.js'
import { Bm25Index } from '../../../../plugins/campaign/text/bm25.js'
import { loadPrompt } from '../../../../plugins/campaign/language/prompts.js'
import { addressingPassages, answeringPassages, composeExtractive, counterPrompt, readGenerated } from '../../../../plugins/campaign/grounding/counter-message.js'
import type { KbLike } from '../../../../plugins/campaign/grounding/grounding.js'
import { foldTerm, negatedTerms } from '../../../../plugins/campaign/text/claims.js'
import { analyzeDisinfo, shoutedWords, statisticsIn, WEIGHTS } from '../../../../plugins/campaign/modules/disinfo-warning/disinfo-signals.js'
import { campaignApp, moduleUrl, statusOf } from '../../../support/campaign.js'
import { startChatStandIn } from '../../../support/chat-standin.js'

/** A post with every planted signal: urgency phrases, shouting, exclamations, an unsourced figure, a claim the knowledge base denies. */
const POST = "SHARE BEFORE IT IS DELETED!!! They don't want you to know the truth. Voting machines were hacked in every county! " +
  '87% of ballots were fake! Wake up, everyone must see this NOW!'

const CALM = 'The county audit found that the voting machines worked as designed, according to the Elections Board.'

const AUDIT = 'Voting machines were not hacked in any county, according to the 2024 state audit by the Elections Board.\n\n' +
  'Mail ballots are safe and secure. Cases of fraud are extremely rare.\n\nThe new park opens in June.'

function kbOf (passages: string[], title = 'State audit'): KbLike {
  const index = new Bm25Index()
  passages.forEach((p, i) => { index.add(String(i), p) })
  return { query: (q, n) => index.search(q, n).map(r => ({ document_id: 'doc', title, source: 'audit.pdf', passage: Number(r.id), text: passages[Number(r.id)] })) }
}

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

t.test('counter-messaging with a generative provider (a stand-in OpenAI-compatible server), and while it is down', async t => {
  const standIn = await startChatStandIn(t, () => 'SHORT: The audit found no hacked machines [1].\nLONG: The state audit checked every county and found no hacking [1].')
  const received = standIn.received
  const { call } = await campaignApp(t, { generator_url: standIn.url, generator_model: 'stand-in' })
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

t.test('through the API', async t => {
  const { call } = await campaignApp(t)

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
    await t.rejects(call('counter-messaging', { analysis_id: 'nope' }), new ServerFunctionError(404, 'no disinfo analysis "nope"', 'BERTH_NOT_FOUND'))
    await t.rejects(call('counter-messaging', {}), new ServerFunctionError(400, 'invalid arguments: /analysis_id: give either analysis_id or text, not both or neither', 'BERTH_BAD_REQUEST'))
    t.equal(await statusOf(call('counter-messaging', { text: 'x', tone: 'angry' })), 400, 'an unknown tone')
    const long = 'Voting machines were hacked. '.repeat(3500)
    await t.rejects(call('analyze-disinfo', { text: long }), new ServerFunctionError(413, `text is ${long.length.toLocaleString('en-US')} characters; at most 100,000 are analysed at once`, 'BERTH_PAYLOAD_TOO_LARGE'))
    t.equal(await statusOf(call('analyze-disinfo', { text: '' })), 400, 'empty text')
  })
})
