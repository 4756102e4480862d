// Call intelligence, accountability and meetings: the methods on fixture texts (three calls with known
// outcomes, a speech with exactly three commitments, meeting notes with planted decisions, actions and
// questions), then each function once through the API with signed-in users, with 400, 413 and 404.
import t from 'tap'
import { join } from 'node:path'
import { open } from 'lmdb'
import { localEngine } from '../../../plugins/campaign/language/local-engine.js'
import { analyzeCall, assignRoles, trajectory } from '../../../plugins/campaign/modules/call-intelligence/call-analysis.js'
import { callBucket } from '../../../plugins/campaign/modules/call-intelligence/call-intelligence.js'
import { extractCommitments, inferVerdict } from '../../../plugins/campaign/modules/accountability/commitments.js'
import { findDue } from '../../../plugins/campaign/text/due-dates.js'
import { findIssues } from '../../../plugins/campaign/text/issue-lexicon.js'
import { actionOf, attendeesOf, decisionsOf, meetingSentences, openQuestions } from '../../../plugins/campaign/modules/meetings/meeting-notes.js'
import { loadPrompt } from '../../../plugins/campaign/language/prompts.js'
import { meetingFunctions, meetingPrompt } from '../../../plugins/campaign/modules/meetings/meetings.js'
import type { ChatMessage, Generator } from '../../../plugins/campaign/language/generator.js'
import type { ModuleKit } from '../../../plugins/campaign/modules/kit.js'
import { parseTurns } from '../../../plugins/campaign/text/transcript.js'
import { campaignApp, moduleUrl, statusOf } from '../../support/campaign.js'

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
const SPEECH = 'Thank you all for coming tonight. Last year we built three new parks. ' +
  'Maria Lopez will open a new health clinic in Eastside by March 2035. We will hire 200 teachers within 100 days. ' +
  'Did we fix every road? The City Council pledges to publish the full budget next year. ' +
  'Prices will keep rising, some say. Our opponents talk a lot but they never deliver.'

const NOTES = `Ana: Welcome everyone. Today we plan the Elm Street canvass.
Ben: We agreed to focus on the north side first.
Ana: Great. Ana will send the flyer by Friday.
Carla: Who is printing the flyers?
Ben: The print shop on Main Street is printing them.
Carla: Can we afford a second mailing?
Ana: I'll draft the volunteer schedule by June 3.
Action: Ben to book the hall by next week
TODO: update the website`

t.test('transcripts: speaker turns, note labels, and unlabelled text as one speaker', async t => {
  const turns = parseTurns('Ana: Hello.\nStill Ana here.\n\nBen: Hi!\nAction: Ben to call\nTime: 10:30\nBen: Bye')
  t.same(turns.map(turn => [turn.speaker, turn.text]), [['Ana', 'Hello. Still Ana here.'], ['Ben', 'Hi! Action: Ben to call Time: 10:30 Bye']])
  t.same(parseTurns('Left a voicemail.\nNo answer.').map(turn => [turn.speaker, turn.lines.length]), [['', 2]])
  t.same(assignRoles(['Sam', 'Dora'], { contact: 'Sam Smith' }), { caller: 'Dora', contact: 'Sam' }, 'the contact argument names a speaker by first name')
  t.same(assignRoles(['Resident', 'Volunteer'], {}), { caller: 'Volunteer', contact: 'Resident' }, 'role labels')
  t.same(assignRoles(['A', 'B', 'C'], {}), { caller: 'A', contact: 'B' }, 'otherwise the first speaker calls')
})

t.test('issues and due dates', async t => {
  t.same(findIssues('Property tax and rent, rent, rent! Potholes everywhere.'),
    [{ issue: 'housing', count: 3, cues: ['rent'] }, { issue: 'taxes', count: 1, cues: ['property tax'] }, { issue: 'transportation', count: 1, cues: ['potholes'] }])
  const said = new Date('2026-05-04T15:00:00Z') // a Monday
  const due = (text: string): string | undefined => findDue(text, said)?.due_on
  t.equal(due('open it by March 2027'), '2027-03-31')
  t.equal(due('done by March'), '2027-03-31', 'a month without a year: its next end')
  t.equal(due('within 100 days'), '2026-08-12')
  t.equal(due('in the next six months'), '2026-11-04')
  t.equal(due('next year'), '2027-12-31')
  t.equal(due('by the end of the year'), '2026-12-31')
  t.equal(due('by 2030'), '2030-12-31')
  t.equal(due('by June 3'), '2026-06-03')
  t.equal(due('by Friday'), '2026-05-08')
  t.equal(due('next Friday'), '2026-05-15')
  const wednesday = new Date('2026-05-06T15:00:00Z')
  t.same(['next Monday', 'next Friday', 'this Friday', 'on Monday'].map(text => findDue(text, wednesday)?.due_on), ['2026-05-11', '2026-05-15', '2026-05-08', '2026-05-11'],
    'said on a Wednesday: next Monday is the one of the following week, in five days, not twelve')
  t.equal(findDue('next Monday', new Date('2026-05-10T15:00:00Z'))?.due_on, '2026-05-11', 'said on a Sunday: tomorrow, the Monday of the next week')
  t.equal(due('by tomorrow'), '2026-05-05')
  t.equal(due('we built it years ago'), undefined)
  t.equal(findDue('in 100 days, or by 2030', said)?.due_text, 'in 100 days', 'the first phrase in the text wins')
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

t.test('meeting notes: attendees, decisions, action items, open questions; the generator prompt', async t => {
  const engine = await localEngine()
  const sentences = meetingSentences(engine, NOTES)
  t.same(decisionsOf(sentences).map(s => [s.speaker, s.text]), [['Ben', 'We agreed to focus on the north side first.']])
  t.same(sentences.flatMap(s => actionOf(s, new Date('2026-05-04')) ?? []).map(a => [a.owner, a.task, a.due_on]), [
    ['Ana', 'send the flyer', '2026-05-08'],
    ['Ana', 'draft the volunteer schedule', '2026-06-03'],
    ['Ben', 'book the hall', '2026-05-17'],
    ['', 'update the website', null]
  ])
  t.same(openQuestions(engine, sentences), [{ speaker: 'Carla', text: 'Can we afford a second mailing?' }], 'the printing question was answered')
  t.same(attendeesOf(['Dan', 'ana'], NOTES), ['Dan', 'ana', 'Ben', 'Carla'])

  const messages = meetingPrompt(loadPrompt(moduleUrl('meetings'), 'summarize-meeting'), {
    title: 'Canvass planning', held_on: '2026-05-04', attendees: ['Ana', 'Ben'], decisions: ['We agreed to focus on the north side first.'],
    actions: [{ owner: 'Ana', task: 'send the flyer', due_on: '2026-05-08', due_text: 'by Friday', speaker: 'Ana', text: '' }], text: NOTES
  })
  t.same(messages.map(m => m.role), ['system', 'user'])
  t.match(messages[1].content, /Meeting: Canvass planning\nHeld on: 2026-05-04\nAttendees: Ana, Ben[\s\S]*- Ana: send the flyer \(due 2026-05-08\)[\s\S]*Carla: Who is printing/)
  t.notMatch(messages.map(m => m.content).join(''), /\{\{/, 'every placeholder filled')
})

t.test('summarize-meeting with a generator stand-in: the summary is generated, the rest stays rule-based', async t => {
  const env = open({ path: join(t.testdir(), 'meetings.mdb') })
  t.teardown(async () => { await env.close() })
  const asked: ChatMessage[][] = []
  const generator = {
    name: 'generative (stand-in)',
    generate: async (messages: ChatMessage[]) => { asked.push(messages); return 'The team planned the Elm Street canvass.' }
  } as unknown as Generator
  const kit = { language: localEngine, generator, db: (name: string) => env.openDB({ name }), maxRecords: 100 } as unknown as ModuleKit
  const [summarize] = meetingFunctions(kit)
  const result = await summarize.handler({ title: 'Canvass planning', text: NOTES, attendees: [], held_on: '2026-05-04' }, {}) as Record<string, unknown>
  t.match(result, { summary: 'The team planned the Elm Street canvass.', summary_method: 'generative', engine: 'generative (stand-in)', summary_sentences: [] })
  t.equal((result.action_items as unknown[]).length, 4)
  t.equal(asked.length, 1)
  t.match(asked[0][1].content, /Meeting: Canvass planning/)
})

t.test('call intelligence, accountability and meetings through the API', async t => {
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

  await t.test('summarize-meeting: the rule-based parts and the extractive summary', async t => {
    interface Meeting { meeting_id: string, attendees: string[], summary: string, summary_method: string, summary_sentences: Array<{ text: string }>, decisions: Array<{ text: string }>, action_items: Array<{ owner: string, task: string, due_on: string | null }>, open_questions: Array<{ text: string }>, engine: string }
    const meeting = await call<Meeting>('summarize-meeting', { title: 'Canvass planning', text: NOTES, attendees: ['Dan'], held_on: '2026-05-04' })
    t.match(meeting, { attendees: ['Dan', 'Ana', 'Ben', 'Carla'], summary_method: 'extractive', engine: /^local/ })
    t.equal(meeting.summary_sentences.length, 3)
    t.equal(meeting.summary, meeting.summary_sentences.map(s => s.text).join(' '))
    t.same(meeting.decisions.map(d => d.text), ['We agreed to focus on the north side first.'])
    t.same(meeting.action_items.map(a => [a.owner, a.due_on]), [['Ana', '2026-05-08'], ['Ana', '2026-06-03'], ['Ben', '2026-05-17'], ['', null]])
    t.same(meeting.open_questions.map(q => q.text), ['Can we afford a second mailing?'])
    t.match(await call('summarize-meeting', { title: '', text: NOTES }).catch((err: unknown) => err), { status: 400, message: /\/title/ })
    t.match(await call('summarize-meeting', { title: 'Long', text: 'y'.repeat(100_001) }).catch((err: unknown) => err), { status: 413 })
    t.equal(await statusOf(call('summarize-meeting', { title: 'x', text: 'y' }, readonly)), 403)
  })
})
