// Call intelligence on three calls with known outcomes: speaker turns and roles, outcomes, issues, talk
// share, trajectory and follow-ups; then analyze-transcript and call-trends through the API.
import t from 'tap'
import { localEngine } from '../../../../plugins/campaign/language/local-engine.js'
import { analyzeCall, assignRoles, trajectory } from '../../../../plugins/campaign/modules/call-intelligence/call-analysis.js'
import { callBucket } from '../../../../plugins/campaign/modules/call-intelligence/call-intelligence.js'
import { parseTurns } from '../../../../plugins/campaign/text/transcript.js'
import { campaignApp, statusOf } from '../../../support/campaign.js'

const SUPPORTER = `Volunteer: Hi, this is Sam calling for the Maria Lopez campaign. Do you have a minute?
Voter: Sure, what is this about?
Volunteer: Maria is running for city council. Can we count on your support?
Voter: Absolutely. I love what she did for the parks. I'll vote for her, count me in!
Volunteer: Wonderful, thank you so much!`
const OPPOSED = `Caller: Hello, I'm calling on behalf of Maria Lopez for council.
Voter: I won't vote for her. Her tax plan is terrible and my taxes are already too high.
Caller: I understand. May I tell you about her plan for schools?
Voter: No. I'm against her. Goodbye.`
const UNDECIDED = `Volunteer: Good evening! I'm with the Maria Lopez campaign. Have you decided how you'll vote?
Resident: I'm not sure yet. My rent went up again and I'm worried about housing.
Volunteer: Maria has a plan for affordable homes near transit.
Resident: That sounds good. Send me more information and call me back next week.`

/** Exactly three commitments, among a past-tense sentence, a question, a prediction and a claim about others. */

t.test('transcripts: speaker turns, note labels, and unlabelled text as one speaker', async t => {
  const turns = parseTurns('Ana: Hello.\nStill Ana here.\n\nBen: Hi!\nAction: Ben to call\nTime: 10:30\nBen: Bye')
  t.same(turns.map(turn => [turn.speaker, turn.text]), [['Ana', 'Hello. Still Ana here.'], ['Ben', 'Hi! Action: Ben to call Time: 10:30 Bye']])
  t.same(parseTurns('Left a voicemail.\nNo answer.').map(turn => [turn.speaker, turn.lines.length]), [['', 2]])
  t.same(assignRoles(['Sam', 'Dora'], { contact: 'Sam Smith' }), { caller: 'Dora', contact: 'Sam' }, 'the contact argument names a speaker by first name')
  t.same(assignRoles(['Resident', 'Volunteer'], {}), { caller: 'Volunteer', contact: 'Resident' }, 'role labels')
  t.same(assignRoles(['A', 'B', 'C'], {}), { caller: 'A', contact: 'B' }, 'otherwise the first speaker calls')
})

t.test('call analysis: outcomes, issues, talk share, trajectory and follow-ups on three calls', async t => {
  const engine = await localEngine()
  const supporter = analyzeCall(engine, SUPPORTER, {})
  t.match(supporter, { caller: 'Volunteer', contact: 'Voter', outcome: 'supporter', outcome_evidence: "I'll vote for her, count me in!", follow_up: false })
  t.same(supporter.speakers.map(s => [s.speaker, s.role, s.turns, s.words]), [['Volunteer', 'caller', 3, 32], ['Voter', 'contact', 2, 21]])
  t.equal(supporter.speakers[1].talk_share, Math.round(21 / 53 * 1000) / 1000)
  t.equal(supporter.trajectory.direction, 'improving', 'from a neutral question to praise')
  t.equal(supporter.turns.length, 5)

  const opposed = analyzeCall(engine, OPPOSED, { caller: 'Sam' })
  t.match(opposed, { caller: 'Sam', contact: 'Voter', outcome: 'opposed' })
  t.same(opposed.issues.map(i => i.issue), ['taxes'], 'the caller mentioning schools is not an issue the contact raised')
  t.ok(opposed.sentiment < 0)

  const undecided = analyzeCall(engine, UNDECIDED, {})
  t.match(undecided, { contact: 'Resident', outcome: 'undecided', follow_up: true })
  t.same(undecided.issues.map(i => [i.issue, i.count]), [['housing', 2]])
  t.same(undecided.follow_up_reasons, ['undecided', 'send me', 'more information', 'call me back'])

  t.match(analyzeCall(engine, 'Left a voicemail, no answer.', {}), { outcome: 'not_reached', contact: '' }, 'a note without speakers is one speaker')
  t.equal(analyzeCall(engine, "Voter: I'm not sure I'll vote for her.", {}).outcome, 'undecided', 'hedging beats support within a sentence')
  t.equal(analyzeCall(engine, 'A: Hi!\nB: Not interested, stop calling.', {}).outcome, 'refused')
  t.equal(analyzeCall(engine, 'A: Hi!\nB: Hello, who is this?', {}).outcome, 'unknown')
  t.same(trajectory([-0.5, 0, 0.5]), { first_half: -0.25, second_half: 0.25, change: 0.5, direction: 'improving' }, 'the middle turn counts in both halves')
  t.equal(callBucket('2026-05-07T10:00:00Z', 'week'), '2026-05-04', 'weeks start on Monday')
  t.equal(callBucket('2026-05-10T23:59:00Z', 'week'), '2026-05-04')
  t.equal(callBucket('2026-05-07T10:00:00Z', 'day'), '2026-05-07')
})

t.test('through the API', async t => {
  const { login: cookie, call } = await campaignApp(t)
  const [volunteer, readonly] = [await cookie('volunteer'), await cookie('readonly')]

  await t.test('analyze-transcript stores calls; call-trends counts them per day and pages the list', async t => {
    interface Analysed { call_id: string, outcome: string, issues: Array<{ issue: string }>, engine: string }
    const a = await call<Analysed>('analyze-transcript', { transcript: SUPPORTER, caller: 'Sam', called_at: '2026-05-04T10:00:00Z' }, volunteer)
    const b = await call<Analysed>('analyze-transcript', { transcript: OPPOSED, called_at: '2026-05-04T11:00:00Z' })
    const c = await call<Analysed>('analyze-transcript', { transcript: UNDECIDED, called_at: '2026-05-05T09:00:00Z' }, volunteer)
    t.same([a.outcome, b.outcome, c.outcome], ['supporter', 'opposed', 'undecided'])
    t.same(c.issues.map(i => i.issue), ['housing'])
    t.match(a, { call_id: /^20260504T100000000Z-[0-9a-f]{8}$/, engine: /^local/ })

    interface Trends { totals: { calls: number, outcomes: Record<string, number>, top_issues: Array<{ issue: string, calls: number }> }, buckets: Array<{ bucket_start: string, calls: number, outcomes: Record<string, number>, mean_sentiment: number }>, calls: Array<{ call_id: string, caller: string }>, next_cursor: string | null, engine: string }
    const trends = await call<Trends>('call-trends', { bucket: 'day', limit: 2 }, readonly)
    t.match(trends.totals, { calls: 3, outcomes: { supporter: 1, opposed: 1, undecided: 1, refused: 0, not_reached: 0, unknown: 0 } })
    t.same(trends.totals.top_issues.map(i => i.issue), ['environment', 'housing', 'taxes'], 'one call each, by name')
    t.same(trends.buckets.map(x => [x.bucket_start, x.calls, x.outcomes.supporter, x.outcomes.opposed, x.outcomes.undecided]), [['2026-05-04', 2, 1, 1, 0], ['2026-05-05', 1, 0, 0, 1]])
    t.same(trends.calls.map(x => x.call_id), [c.call_id, b.call_id], 'newest first')
    t.equal(trends.calls[1].caller, 'Caller')
    const rest = await call<Trends>('call-trends', { limit: 2, cursor: trends.next_cursor as string }, readonly)
    t.same(rest.calls.map(x => [x.call_id, x.caller]), [[a.call_id, 'Sam']])
    t.equal(rest.next_cursor, null)
    const week = await call<Trends>('call-trends', { bucket: 'week', from: '2026-05-04T10:30:00Z' })
    t.same(week.buckets.map(x => [x.bucket_start, x.calls]), [['2026-05-04', 2]], 'from bounds the range')

    t.match(await call('call-trends', { bucket: 'month' }).catch((err: unknown) => err), { status: 400, message: /\/bucket/ })
    t.match(await call('analyze-transcript', { transcript: '' }).catch((err: unknown) => err), { status: 400, message: /\/transcript/ })
    t.match(await call('analyze-transcript', { transcript: 'A: hi', called_at: 'yesterday' }).catch((err: unknown) => err), { status: 400, message: /\/called_at/ })
    t.match(await call('analyze-transcript', { transcript: 'x'.repeat(100_001) }).catch((err: unknown) => err), { status: 413, message: /^transcript is 100,001 characters/ })
    t.equal(await statusOf(call('call-trends', {}, volunteer)), 403)
  })
})
