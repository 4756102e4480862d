// Local issues on planted fixtures: housing complaints concentrated in Eastside; then
// analyze-local-issues through the API, on given texts (by a canvasser) and on the post stream.
import t from 'tap'
import { ServerFunctionError } from '../../../../plugins/campaign/client.js'
import { localEngine } from '../../../../plugins/campaign/language/local-engine.js'
import { analyzeLocalIssues, type IssueReport } from '../../../../plugins/campaign/modules/local-issues/local-issues.js'
import { campaignApp, statusOf } from '../../../support/campaign.js'
import { ACTOR_POSTS, LOCAL } from '../fixtures/stances.js'

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
  await call('ingest-posts', { posts: ACTOR_POSTS })

  const volunteer = await login('volunteer')
  const issues = await call<{ texts_from: string, issues: IssueReport[] }>('analyze-local-issues', { texts: LOCAL }, volunteer)
  t.match(issues, { texts_from: 'texts', issues: [{ issue: 'housing', places: [{ place: 'Eastside' }] }] }, 'canvassers use it')
  const stream = await call<{ texts_from: string, texts: number }>('analyze-local-issues', { source: 'forum' })
  t.match(stream, { texts_from: 'posts', texts: 18 })

  t.equal(await statusOf(call('analyze-local-issues', { from: 'yesterday' })), 400)
  await t.rejects(call('analyze-local-issues', { texts: [{ text: 'x'.repeat(100_001) }] }),
    new ServerFunctionError(413, 'texts/0/text is 100,001 characters; at most 100,000 are analysed at once', 'BERTH_PAYLOAD_TOO_LARGE'))
})
