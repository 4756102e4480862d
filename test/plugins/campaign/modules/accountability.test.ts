// Accountability on a speech with exactly three commitments: actors, due dates and evidence cues; then
// extract-commitments, add-evidence and accountability-report through the API.
import t from 'tap'
import { localEngine } from '../../../../plugins/campaign/language/local-engine.js'
import { extractCommitments, inferVerdict } from '../../../../plugins/campaign/modules/accountability/commitments.js'
import { campaignApp, statusOf } from '../../../support/campaign.js'

const SPEECH = 'Thank you all for coming tonight. Last year we built three new parks. ' +
  'Maria Lopez will open a new health clinic in Eastside by March 2035. We will hire 200 teachers within 100 days. ' +
  'Did we fix every road? The City Council pledges to publish the full budget next year. ' +
  'Prices will keep rising, some say. Our opponents talk a lot but they never deliver.'

t.test('commitments: exactly the three in the speech, with actors and due dates; evidence cues', async t => {
  const engine = await localEngine()
  const found = extractCommitments(engine, SPEECH, { actor: 'Maria Lopez', saidOn: new Date('2026-01-10') })
  t.same(found.map(c => [c.actor, c.promise, c.due_on, c.due_text]), [
    ['Maria Lopez', 'open a new health clinic in Eastside by March 2035', '2035-03-31', 'by March 2035'],
    ['Maria Lopez', 'hire 200 teachers within 100 days', '2026-04-20', 'within 100 days'],
    ['City Council', 'publish the full budget next year', '2027-12-31', 'next year']
  ])
  t.equal(found[1].text, 'We will hire 200 teachers within 100 days')
  const more = extractCommitments(engine, "If elected, I will cut bus fares, and we'll plant 1,000 trees; Senator Ben Ortiz is going to fund two shelters in 2027. Will we win?", { saidOn: new Date('2026-01-10') })
  t.same(more.map(c => [c.actor, c.verb, c.promise]), [['I', 'will', 'cut bus fares'], ['we', "'ll", 'plant 1,000 trees'], ['Senator Ben Ortiz', 'is going to', 'fund two shelters in 2027']],
    'without an actor "I" and "we" stay as written; two clauses of one sentence; the question is no commitment')
  const reported = extractCommitments(engine, 'At the rally, Mayor Lopez promised to repave Main Street by June 1. Senator Ben Ortiz has pledged to fund two shelters, and the Transit Authority vowed to restore night buses.', { saidOn: new Date('2026-01-10') })
  t.same(reported.map(c => [c.actor, c.verb, c.promise]), [
    ['Mayor Lopez', 'promised to', 'repave Main Street by June 1'],
    ['Senator Ben Ortiz', 'pledged to', 'fund two shelters'],
    ['Transit Authority', 'vowed to', 'restore night buses']
  ], 'reported speech: promised, pledged (after has), vowed')

  t.same(inferVerdict('The clinic opened in February and was completed on time.'), { verdict: 'kept', cues: ['opened', 'completed'] })
  t.same(inferVerdict('The project was cancelled after the vote failed.'), { verdict: 'broken', cues: ['cancelled', 'failed'] })
  t.equal(inferVerdict('Work has not been completed yet.').verdict, 'in_progress', 'a negated cue does not count')
  t.equal(inferVerdict('Construction is under way.').verdict, 'in_progress')
})

t.test('through the API', async t => {
  const { login: cookie, call } = await campaignApp(t)
  const readonly = await cookie('readonly')

  await t.test('extract-commitments, add-evidence, accountability-report', async t => {
    interface Stored { commitment_id: string, actor: string, due_on: string | null, status: string }
    const extracted = await call<{ commitments: Stored[], sentences: number, engine: string }>('extract-commitments', { text: SPEECH, actor: 'Maria Lopez', source: 'town hall', said_on: '2024-01-10' })
    t.same(extracted.commitments.map(c => [c.actor, c.due_on, c.status]), [['Maria Lopez', '2035-03-31', 'open'], ['Maria Lopez', '2024-04-19', 'open'], ['City Council', '2025-12-31', 'open']])
    t.equal(extracted.sentences, 8)
    const [clinic, teachers, budget] = extracted.commitments
    const kept = await call<{ evidence: { verdict: string, inferred: boolean, cues: string[] }, commitment: Stored & { evidence_count: number } }>('add-evidence', {
      commitment_id: teachers.commitment_id, text: 'The district hired 200 new teachers and completed the program in March.', url: 'https://news.example/teachers'
    })
    t.match(kept, { evidence: { verdict: 'kept', inferred: true, cues: ['hired', 'completed'] }, commitment: { status: 'kept', evidence_count: 1 } })
    const progress = await call<{ commitment: Stored }>('add-evidence', { commitment_id: clinic.commitment_id, text: 'Ground was broken on the site.', verdict: 'in_progress' })
    t.equal(progress.commitment.status, 'in_progress', 'a given verdict wins over cue words ("broken")')
    t.match(await call('add-evidence', { commitment_id: 'nope', text: 'Done.' }).catch((err: unknown) => err), { status: 404, message: 'no commitment "nope"' })
    t.match(await call('add-evidence', { commitment_id: budget.commitment_id, text: 'x', url: 'ftp://x' }).catch((err: unknown) => err), { status: 400, message: /\/url/ })

    interface Report { total: number, counts: Record<string, number>, overdue: number, commitments: Array<Stored & { overdue: boolean, evidence_count: number }>, next_cursor: string | null, engine: string }
    const report = await call<Report>('accountability-report', {}, readonly)
    t.match(report, { total: 3, counts: { open: 1, in_progress: 1, kept: 1, broken: 0 }, overdue: 1 })
    t.same(report.commitments.map(c => [c.actor, c.status, c.evidence_count, c.overdue]), [['City Council', 'open', 0, true], ['Maria Lopez', 'kept', 1, false], ['Maria Lopez', 'in_progress', 1, false]])
    const council = await call<Report>('accountability-report', { actor: 'council', status: 'open', limit: 1 })
    t.match(council, { total: 1, commitments: [{ actor: 'City Council' }], next_cursor: null })
    t.equal(await statusOf(call('extract-commitments', { text: SPEECH }, readonly)), 403)
  })
})
