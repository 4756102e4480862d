// The coalition detector on planted fixtures: a labour union and a business group at odds over the
// minimum wage, and every group backing transit; then detect-tensions through the API.
import t from 'tap'
import { ServerFunctionError } from '../../../../plugins/campaign/client.js'
import { localEngine } from '../../../../plugins/campaign/language/local-engine.js'
import { detectTensions, type PairSummary, type Tension } from '../../../../plugins/campaign/modules/coalition-detector/coalition-detector.js'
import { stanceTable } from '../../../../plugins/campaign/text/stance.js'
import { campaignApp, statusOf } from '../../../support/campaign.js'
import { CHAMBER, GROUPS, UNION } from '../fixtures/stances.js'

const pairOf = (x: { group_a: string, group_b: string }): string => [x.group_a, x.group_b].sort().join(' + ')

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

t.test('through the API', async t => {
  const { call } = await campaignApp(t)

  const tensions = await call<{ tensions: Tension[], engine: string }>('detect-tensions', { groups: GROUPS })
  t.match(tensions, { tensions: [{ group_a: UNION, group_b: CHAMBER, topic: 'minimum wage' }], engine: /^local/ })

  await t.rejects(call('detect-tensions', { groups: [GROUPS[0], { ...GROUPS[1], name: ` ${UNION} ` }] }),
    new ServerFunctionError(400, `invalid arguments: /groups/1/name: "${UNION}" is named twice`, 'BERTH_BAD_REQUEST'))
  t.equal(await statusOf(call('detect-tensions', { groups: [GROUPS[0]] })), 400, 'one group is no coalition')
  t.equal(await statusOf(call('detect-tension', { groups: GROUPS })), 404, 'these modules keep no records: the 404 is a misspelt function')
})
