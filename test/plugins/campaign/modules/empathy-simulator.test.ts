// The empathy simulator: personas react by their concerns, what they pay and gain, with objections;
// then simulate-reaction through the API, with default and given personas.
import t from 'tap'
import { localEngine } from '../../../../plugins/campaign/language/local-engine.js'
import { effectsIn, simulateReaction } from '../../../../plugins/campaign/modules/empathy-simulator/persona-reaction.js'
import { loadPersonaBook } from '../../../../plugins/campaign/modules/empathy-simulator/personas.js'
import { ServerFunctionError } from '../../../../plugins/campaign/client.js'
import { campaignApp, statusOf } from '../../../support/campaign.js'
import { PLATFORM_TITLE, storePlatform } from '../fixtures/conversation.js'

t.test('empathy: personas react by their concerns, what they pay and gain, with objections', async t => {
  const engine = await localEngine()
  const book = loadPersonaBook()
  t.same(book.personas.map(p => p.id), ['retired-homeowner', 'young-renter', 'small-business-owner', 'parent', 'union-worker'])
  const persona = (id: string) => book.personas.find(p => p.id === id) as typeof book.personas[number]

  t.match(effectsIn('We will raise the minimum wage and cut property taxes.', persona('small-business-owner')),
    [{ cue: 'minimum wage', direction: 'up', effect: -1 }, { cue: 'property tax', said: 'property taxes', direction: 'down', effect: 1 }], 'what one pays: raised angers, cut pleases')
  t.match(effectsIn('We will not raise property taxes.', persona('retired-homeowner')), [{ direction: 'down', effect: 1 }], 'a negation flips the raise')
  t.same(effectsIn('We will build 5,000 affordable homes near transit and freeze rents.', persona('young-renter')).map(e => [e.cue, e.direction]), [['affordable homes', 'up'], ['rent', 'down']],
    'in text order; "build" is too far back for transit, and a look-ahead stops at "and"')

  const message = 'We will raise the minimum wage to $20 an hour and add new permits for every shop.'
  const business = simulateReaction(engine, book, message, persona('small-business-owner'))
  t.match(business, { reaction: 'opposed', relevance: 0.5, missing: ['taxes', 'cost of living'] })
  t.ok(business.feeling < 0)
  t.same(business.objections, ['Any rise in minimum wage is the last thing I can afford.', 'Any rise in permits is the last thing I can afford.', 'And what will all this cost me in taxes?'])
  t.match(business.quote, /minimum wage/)
  const union = simulateReaction(engine, book, message, persona('union-worker'))
  t.match(union, { reaction: 'supportive', addressed: [{ concern: 'jobs and economy', priority: true }] })
  t.ok(union.feeling > 0)
  const parent = simulateReaction(engine, book, message, persona('parent'))
  t.match(parent, { reaction: 'indifferent', relevance: 0, feeling: 0, objections: ['What about our schools?', 'And how does this keep our streets safe?', 'Who is going to help with childcare?'] })
  t.equal(simulateReaction(engine, book, message, persona('parent')).quote, parent.quote, 'the same message gives the same quote')
  const seniors = simulateReaction(engine, book, 'We will not raise property taxes, and we will hire more police.', persona('retired-homeowner'))
  t.match(seniors, { reaction: 'supportive', addressed: [{ concern: 'taxes' }, { concern: 'public safety' }] })
})

t.test('through the API', async t => {
  const { login, call } = await campaignApp(t)
  const [volunteer, readonly] = [await login('volunteer'), await login('readonly')]
  await storePlatform(call)

  interface Simulated { reactions: Array<{ persona: { id: string }, reaction: string, quote: string, objections: string[], suggestion: { concern: string, cite: number, sentence: string } | null }>, summary: Record<string, number>, sources: string[], note: string, resource_id: string, engine: string }
  const simulated = await call<Simulated>('simulate-reaction', { message: 'We will raise the minimum wage to $20 an hour and add new permits for every shop.' }, readonly)
  t.same(simulated.reactions.map(r => [r.persona.id, r.reaction]), [['retired-homeowner', 'indifferent'], ['young-renter', 'supportive'], ['small-business-owner', 'opposed'], ['parent', 'indifferent'], ['union-worker', 'supportive']])
  t.match(simulated.summary, { supportive: 2, opposed: 1, mixed: 0, indifferent: 2 })
  t.match(simulated.reactions[0].suggestion, { concern: 'taxes', cite: 1, sentence: 'Property taxes for seniors will be frozen for homeowners over 65.' }, 'a cited line for the missing priority')
  t.match(simulated, { sources: [`[1] ${PLATFORM_TITLE}, passage 3`], note: /heuristic simulation, not a model/, resource_id: /^[0-9a-f]{16}$/, engine: /^local/ })
  const custom = await call<Simulated>('simulate-reaction', { message: 'We will double bus service.', personas: ['parent', { name: 'Commuter', concerns: ['transportation'], priorities: ['transportation'], gains: ['bus'] }] }, readonly)
  t.same(custom.reactions.map(r => [r.persona.id, r.reaction]), [['parent', 'indifferent'], ['commuter-2', 'supportive']])
  await t.rejects(call('simulate-reaction', { message: 'Hi', personas: ['astronaut'] }), { status: 400, message: /^invalid arguments: \/personas\/0: no default persona "astronaut"/ })
  await t.rejects(call('simulate-reaction', { message: 'Hi', personas: [{ name: 'A', concerns: ['housing'], priorities: ['taxes'] }] }),
    new ServerFunctionError(400, 'invalid arguments: /personas/0/priorities: "taxes" is not one of the persona\'s concerns', 'BERTH_BAD_REQUEST'))
  t.equal(await statusOf(call('simulate-reaction', { message: 'Hi' }, volunteer)), 403)
  t.equal(await statusOf(call('simulate-reaction', { message: 'x'.repeat(100_001) })), 413)
})
