// The faction mapper on planted fixtures: two camps of three actors split on housing and bike lanes but
// united on the library; then map-factions and consensus-finder through the API, on actors and on posts.
import t from 'tap'
import { ServerFunctionError } from '../../../../plugins/campaign/client.js'
import { localEngine } from '../../../../plugins/campaign/language/local-engine.js'
import { findConsensus, mapFactions } from '../../../../plugins/campaign/modules/faction-mapper/faction-mapper.js'
import { stanceTable } from '../../../../plugins/campaign/text/stance.js'
import { campaignApp, statusOf } from '../../../support/campaign.js'
import { ACTOR_POSTS, ACTORS, BUILDERS, KEEPERS } from '../fixtures/stances.js'

t.test('factions: two planted camps, the library as consensus, housing and bike lanes divisive', async t => {
  const engine = await localEngine()
  const table = stanceTable(engine, ACTORS)
  const { factions, edges, unaligned } = mapFactions(table)
  t.same(factions.map(f => f.members), [BUILDERS, KEEPERS], 'members in input order, the faction of the first actor first')
  t.same(factions.map(f => f.faction_id), ['F1', 'F2'])
  t.same(unaligned, [])
  const across = edges.filter(e => BUILDERS.includes(e.a) !== BUILDERS.includes(e.b))
  t.ok(across.every(e => e.weight < 0.5), 'no strong edge joins the camps')
  t.ok(edges.filter(e => BUILDERS.includes(e.a) && BUILDERS.includes(e.b)).every(e => e.weight >= 0.9), 'the builders stand together')
  const housing = factions[1].positions.find(p => p.topic === 'housing')
  t.ok(housing !== undefined && housing.stance < 0, 'the keepers are against new housing')

  const { consensus, divisive } = findConsensus(table)
  t.match(consensus[0], { topic: 'library', stance: 'support', share: 1, actors: 6 })
  t.same(divisive.filter(d => d.actors === 6).map(d => d.topic).sort(), ['bike lane', 'housing'])
  t.same(divisive.find(d => d.topic === 'housing')?.support, BUILDERS)
})

t.test('through the API', async t => {
  const { login, call } = await campaignApp(t)

  const mapped = await call<{ actors_from: string, factions: Array<{ members: string[] }>, nodes: Array<{ name: string, faction_id: string | null }>, edges: unknown[] }>('map-factions', { actors: ACTORS })
  t.equal(mapped.actors_from, 'actors')
  t.same(mapped.factions.map(f => f.members.slice().sort()), [BUILDERS, KEEPERS])
  t.equal(mapped.nodes.length, 6)
  t.equal(mapped.edges.length, 15, 'every pair shares topics')

  // The same camps as posts: each actor's statements become two posts of its author.
  await call('ingest-posts', { posts: ACTOR_POSTS })
  const found = await call<{ actors_from: string, actors: number, consensus: Array<{ topic: string }>, divisive: Array<{ topic: string }> }>('consensus-finder', {})
  t.match(found, { actors_from: 'posts', actors: 6 }, 'authors with one post are not actors')
  t.equal(found.consensus[0].topic, 'library')
  const ranged = await call<{ factions: unknown[], nodes: unknown[] }>('map-factions', { from: '2026-05-01', to: '2026-05-01T23:59:59Z', min_posts: 1 })
  t.equal(ranged.nodes.length, 6, 'the range keeps one post per actor')

  await t.rejects(call('map-factions', { actors: ACTORS, from: '2026-05-01' }), new ServerFunctionError(400, 'invalid arguments: /from: reads the post stream, which is not read when actors are given', 'BERTH_BAD_REQUEST'))
  t.equal(await statusOf(call('consensus-finder', { actors: [ACTORS[0], { name: 'Long', statements: ['y'.repeat(100_001)] }] })), 413)
  t.equal(await statusOf(call('map-factions', {}, await login('volunteer'))), 403, 'volunteers do not map factions')
})
