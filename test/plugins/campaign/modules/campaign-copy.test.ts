// Campaign copy: each channel in its shape and limit, quoting cited sentences, an SMS promising STOP
// only while replies are received; then generate-copy and list-copy-history through the API, nothing
// invented without sources.
import t from 'tap'
import { ServerFunctionError } from '../../../../plugins/campaign/client.js'
import { localEngine } from '../../../../plugins/campaign/language/local-engine.js'
import { loadTemplates } from '../../../../plugins/campaign/language/templates.js'
import { CHANNELS, composeCopy, CopyTemplates, hashtagOf, headlinePhrase, SHAPES, titleCase, withoutOptOutPromise, type Channel } from '../../../../plugins/campaign/modules/campaign-copy/copy-composer.js'
import { Citations, clip, groundedSentences, resourceHash } from '../../../../plugins/campaign/grounding/grounding.js'
import { moduleUrl, statusOf } from '../../../support/campaign.js'
import { KB, kbOf, writingApp } from '../fixtures/composition.js'

t.test('campaign copy: each channel in its shape and limit, quoting cited sentences', async t => {
  const engine = await localEngine()
  const templates = loadTemplates(moduleUrl('campaign-copy'), 'campaign-copy', CopyTemplates)
  const compose = (channel: Channel, topic: string, length: 'short' | 'medium' | 'long' = 'medium', tone: 'neutral' | 'warm' | 'urgent' | 'hopeful' = 'neutral', optOut = false): ReturnType<typeof composeCopy> & { lines: string[] } => {
    const citations = new Citations()
    const request = { topic, channel, tone, length }
    const candidates = groundedSentences(engine, KB, topic, { passages: 5, perPassage: 2, total: 2 * SHAPES[channel].sentences[length] }, citations)
    return { ...composeCopy(templates, request, headlinePhrase(engine, topic, candidates), candidates, cites => citations.linesOf(cites), optOut), lines: citations.lines }
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
  t.equal(sms.text, 'Public transit fares will be free for students and seniors. [1] Reply YES to get involved.', 'the closest sentence, then the call to action: no STOP while replies are not received')
  t.equal(compose('sms', 'public transit', 'medium', 'neutral', true).text, 'Public transit fares will be free for students and seniors. [1] Reply YES to get involved. STOP to opt out.', 'how to opt out once replies are received')
  for (const channel of CHANNELS.filter(c => c !== 'sms')) t.equal(compose(channel, 'public transit', 'medium', 'neutral', true).text, compose(channel, 'public transit').text, `${channel}: no opt-out line`)
  t.equal(withoutOptOutPromise('Free fares [1]. Reply STOP to opt out. Stop the cuts! Text stop to end. You can opt-out any time. Unsubscribe here. Vote Tuesday.'), 'Free fares [1]. Stop the cuts! Vote Tuesday.', 'every sentence promising an opt-out by reply is dropped, a sentence saying "stop" kept')
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

t.test('through the API', async t => {
  const { call, readonly, feedback } = await writingApp(t)

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
    await t.rejects(call('generate-copy', { topic: 'the of and', channel: 'sms' }), new ServerFunctionError(400, 'invalid arguments: /topic: holds no content words', 'BERTH_BAD_REQUEST'))
    t.equal(await statusOf(call('generate-copy', { topic: 'transit', channel: 'sms' }, readonly)), 403, 'readonly does not write copy')
  })
})
