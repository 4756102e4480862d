// Canvassing: the most urgent local issues, cited talking points, objections and the close; then a
// volunteer gets a script on the local issues of a place through the API.
import t from 'tap'
import { ServerFunctionError } from '../../../../plugins/campaign/client.js'
import { localEngine } from '../../../../plugins/campaign/language/local-engine.js'
import { loadTemplates } from '../../../../plugins/campaign/language/templates.js'
import { composeScript, scriptIssues, scriptText, ScriptTemplates } from '../../../../plugins/campaign/modules/canvassing/canvass-script.js'
import { Citations } from '../../../../plugins/campaign/grounding/grounding.js'
import { moduleUrl, statusOf } from '../../../support/campaign.js'
import { hoursAgo, KB, PLACE_POSTS, writingApp } from '../fixtures/composition.js'

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

t.test('through the API', async t => {
  const { call, readonly, volunteer, feedback } = await writingApp(t)

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
    await t.rejects(call('generate-script', { audience: 'renters' }), new ServerFunctionError(400, 'invalid arguments: /issues: give the issues (or a topic) to talk about, or a location to take its local issues from', 'BERTH_BAD_REQUEST'))
    t.equal(await statusOf(call('generate-script', { topic: 'transit' }, readonly)), 403, 'a script is for those who canvass')
  })
})
