// The coalition detector, faction mapper and local issues on planted fixtures: a labour union and a
// business group at odds over the minimum wage, two camps of three actors split on housing and bike
// lanes but united on the library, and housing complaints concentrated in Eastside.
import t from 'tap'
import { ServerFunctionError } from '../../../plugins/campaign/client.js'
import { localEngine } from '../../../plugins/campaign/language/local-engine.js'
import { detectTensions, type PairSummary, type Tension } from '../../../plugins/campaign/modules/coalition-detector/coalition-detector.js'
import { findConsensus, mapFactions } from '../../../plugins/campaign/modules/faction-mapper/faction-mapper.js'
import { analyzeLocalIssues, type IssueReport } from '../../../plugins/campaign/modules/local-issues/local-issues.js'
import { foldTerm, opinionPolarity, splitClauses, stanceTable } from '../../../plugins/campaign/text/stance.js'
import { campaignApp, statusOf } from '../../support/campaign.js'

const UNION = 'Riverside Labour Union'
const CHAMBER = 'Chamber of Small Business'
const GREENS = 'Green Neighbours'

const GROUPS = [
  { name: UNION, statements: ['We strongly support raising the minimum wage to $20 an hour.', 'A higher minimum wage is fair to working families and good for the city.', 'We support more frequent public transit so workers can reach their jobs.'] },
  { name: CHAMBER, statements: ['We oppose any increase in the minimum wage.', 'A $20 minimum wage would hurt small shops and kill jobs.', 'We support public transit because customers need a reliable way downtown.'] },
  { name: GREENS, statements: ['Better public transit is great for clean air.', 'We support new trees in every park and more public transit.'] }
]

const BUILDERS = ['Ana Builder', 'Ben Planner', 'Cara Cyclist']
const KEEPERS = ['Dan Homeowner', 'Eve Driver', 'Finn Neighbour']
const ACTORS = [
  { name: 'Ana Builder', statements: ['We need more new housing near the station; new housing is great for young families.', 'Protected bike lanes make streets safe and healthy.', 'The public library deserves more funding, it is a wonderful place.'] },
  { name: 'Dan Homeowner', statements: ['New housing towers would ruin our quiet neighbourhood.', 'Bike lanes are a dangerous waste of road space.', 'The library is a treasure and I support its funding.'] },
  { name: 'Ben Planner', statements: ['I support new housing on every empty lot.', 'Bike lanes are a fantastic investment in safety.', 'Library funding helps every child, I support it.'] },
  { name: 'Eve Driver', statements: ['I oppose new housing in our streets, the traffic is terrible.', 'Bike lanes have destroyed parking and hurt shops.', 'Library funding is money well spent, great value.'] },
  { name: 'Cara Cyclist', statements: ['Bike lanes saved my life, I love them.', 'New housing downtown is a win for renters.', 'I am happy to back public library funding.'] },
  { name: 'Finn Neighbour', statements: ['New housing projects are ugly and bad for the area.', 'I am against bike lanes on Main Street.', 'I love the public library and support the funding.'] }
]

const LOCAL = [
  { text: 'Rent in Eastside went up again, it is unaffordable and my landlord ignores repairs.', location: 'Eastside' },
  { text: 'Three evictions on my street this month. Terrible for the neighbourhood.', location: 'Eastside' },
  { text: 'Our landlord doubled the rent and we are scared of losing our apartment.', location: 'Eastside' },
  { text: 'No affordable housing left anywhere, we are desperate.', location: 'Eastside' },
  { text: 'The housing shortage is awful; tenants here are worried too.', location: 'Northgate' },
  { text: 'The new bus line to the station is great, thanks!', location: 'Northgate' },
  { text: 'Traffic on Route 9 is slow in the mornings.', location: 'Riverside' },
  { text: 'Our school got two new teachers, wonderful news.', location: 'Riverside' },
  { text: 'Lovely weather for the summer fair.', location: 'Riverside' }
]

const pairOf = (x: { group_a: string, group_b: string }): string => [x.group_a, x.group_b].sort().join(' + ')

t.test('opinion polarity: AFINN plus stance cues, negation, clauses, plural folding', async t => {
  const engine = await localEngine()
  t.ok(opinionPolarity(engine, 'We oppose the toll.') < 0, '"oppose" counts against (AFINN scores it 0)')
  t.ok(opinionPolarity(engine, 'We do not oppose the toll.') > 0, 'a negation flips a cue')
  t.equal(opinionPolarity(engine, 'The toll starts in May.'), 0)
  t.equal(opinionPolarity(engine, 'We oppose it.'), Math.round(-2 / Math.sqrt(4 + 15) * 1000) / 1000, 's / √(s² + 15)')
  t.same(splitClauses(engine, 'We support transit but oppose the fare hike; buses are late.'), ['We support transit', 'but oppose the fare hike', 'buses are late.'])
  t.same(splitClauses(engine, 'We back transit so workers reach jobs, and it is so great.'), ['We back transit', 'so workers reach jobs, and it is so great.'])
  t.same(['policies', 'taxes', 'wages', 'bus', 'class'].map(foldTerm), ['policy', 'tax', 'wage', 'bus', 'class'])
})

t.test('coalition: the planted disagreement is the top tension, agreeing pairs are not reported', async t => {
  const engine = await localEngine()
  const table = stanceTable(engine, GROUPS)
  t.ok(table.topics.some(topic => topic.topic === 'minimum wage'), 'the shared phrase is a topic')
  t.notOk(table.topics.some(topic => topic.topic === 'wage' || topic.topic === 'minimum'), 'its words are not topics of their own')
  const { tensions, pairs } = detectTensions(table)
  const top = tensions[0] as Tension
  t.match(top, { group_a: UNION, group_b: CHAMBER, topic: 'minimum wage' })
  t.ok(top.stance_a > 0 && top.stance_b < 0, `union for (${top.stance_a}), chamber against (${top.stance_b})`)
  t.equal(top.weight, 0.667, 'two of the three groups mention it')
  t.equal(top.score, Math.round(Math.abs(top.stance_a - top.stance_b) * top.weight * 1000) / 1000, 'score = |difference| × topic weight')
  t.match(top.evidence_b.join(' '), /oppose any increase/)
  t.same([...new Set(tensions.map(pairOf))], [[UNION, CHAMBER].sort().join(' + ')], 'only the union and the chamber are in tension')
  t.notOk(tensions.some(x => x.topic === 'public transit'), 'everyone backs transit')
  const [first, ...rest] = pairs as [PairSummary, ...PairSummary[]]
  t.equal(pairOf(first), [UNION, CHAMBER].sort().join(' + '))
  t.ok(rest.every(p => p.tensions === 0 && p.agreements >= 1 && p.alignment > 0.85), 'the other pairs agree on transit')
})

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

t.test('local issues: housing complaints in Eastside rank first', async t => {
  const engine = await localEngine()
  const report = analyzeLocalIssues(engine, LOCAL)
  t.match(report, { texts: 9, texts_with_issues: 8 })
  const housing = report.issues[0] as IssueReport
  t.match(housing, { issue: 'housing', mentions: 5, share: 0.556 })
  t.ok(housing.polarity < 0, `complaints (${housing.polarity})`)
  t.equal(housing.urgency, Math.round(5 / 9 * (1 - housing.polarity) / 2 * 1000) / 1000, 'urgency = share × (1 − polarity) / 2')
  t.match(housing.places[0], { place: 'Eastside', mentions: 4 })
  t.ok(housing.quotes[0].polarity <= housing.quotes[1].polarity, 'the sharpest complaint first')
  const urgencies = report.issues.map(i => i.urgency)
  t.same(urgencies, [...urgencies].sort((a, b) => b - a), 'sorted by urgency')
  t.ok((report.issues.find(i => i.issue === 'education')?.polarity ?? 0) > 0, 'the school news is good news')
})

t.test('through the API', async t => {
  const { login, call } = await campaignApp(t)

  const tensions = await call<{ tensions: Tension[], engine: string }>('detect-tensions', { groups: GROUPS })
  t.match(tensions, { tensions: [{ group_a: UNION, group_b: CHAMBER, topic: 'minimum wage' }], engine: /^local/ })

  const mapped = await call<{ actors_from: string, factions: Array<{ members: string[] }>, nodes: Array<{ name: string, faction_id: string | null }>, edges: unknown[] }>('map-factions', { actors: ACTORS })
  t.equal(mapped.actors_from, 'actors')
  t.same(mapped.factions.map(f => f.members.slice().sort()), [BUILDERS, KEEPERS])
  t.equal(mapped.nodes.length, 6)
  t.equal(mapped.edges.length, 15, 'every pair shares topics')

  // The same camps as posts: each actor's statements become two posts of its author.
  const posts = ACTORS.flatMap((actor, i) => actor.statements.map((text, j) => ({ text, author: actor.name, source: 'forum', posted_at: `2026-05-0${j + 1}T1${i}:00:00Z` })))
  await call('ingest-posts', { posts: [...posts, { text: 'A lone post about housing.', author: 'Once', posted_at: '2026-05-02T08:00:00Z' }] })
  const found = await call<{ actors_from: string, actors: number, consensus: Array<{ topic: string }>, divisive: Array<{ topic: string }> }>('consensus-finder', {})
  t.match(found, { actors_from: 'posts', actors: 6 }, 'authors with one post are not actors')
  t.equal(found.consensus[0].topic, 'library')
  const ranged = await call<{ factions: unknown[], nodes: unknown[] }>('map-factions', { from: '2026-05-01', to: '2026-05-01T23:59:59Z', min_posts: 1 })
  t.equal(ranged.nodes.length, 6, 'the range keeps one post per actor')

  const volunteer = await login('volunteer')
  const issues = await call<{ texts_from: string, issues: IssueReport[] }>('analyze-local-issues', { texts: LOCAL }, volunteer)
  t.match(issues, { texts_from: 'texts', issues: [{ issue: 'housing', places: [{ place: 'Eastside' }] }] }, 'canvassers use it')
  const stream = await call<{ texts_from: string, texts: number }>('analyze-local-issues', { source: 'forum' })
  t.match(stream, { texts_from: 'posts', texts: 18 })

  await t.rejects(call('detect-tensions', { groups: [GROUPS[0], { ...GROUPS[1], name: ` ${UNION} ` }] }),
    new ServerFunctionError(400, `invalid arguments: /groups/1/name: "${UNION}" is named twice`))
  t.equal(await statusOf(call('detect-tensions', { groups: [GROUPS[0]] })), 400, 'one group is no coalition')
  await t.rejects(call('map-factions', { actors: ACTORS, from: '2026-05-01' }), new ServerFunctionError(400, 'invalid arguments: /from: reads the post stream, which is not read when actors are given'))
  t.equal(await statusOf(call('analyze-local-issues', { from: 'yesterday' })), 400)
  await t.rejects(call('analyze-local-issues', { texts: [{ text: 'x'.repeat(100_001) }] }),
    new ServerFunctionError(413, 'texts/0/text is 100,001 characters; at most 100,000 are analysed at once'))
  t.equal(await statusOf(call('consensus-finder', { actors: [ACTORS[0], { name: 'Long', statements: ['y'.repeat(100_001)] }] })), 413)
  t.equal(await statusOf(call('detect-tension', { groups: GROUPS })), 404, 'these modules keep no records: the 404 is a misspelt function')
  t.equal(await statusOf(call('map-factions', {}, await login('volunteer'))), 403, 'volunteers do not map factions')
})
