// Meetings on notes with planted decisions, actions and questions: the rule-based parts, the generator
// prompt, a generated summary from a stand-in; then summarize-meeting through the API.
import t from 'tap'
import { join } from 'node:path'
import { open } from 'lmdb'
import { localEngine } from '../../../../plugins/campaign/language/local-engine.js'
import type { ChatMessage, Generator } from '../../../../plugins/campaign/language/generator.js'
import { loadPrompt } from '../../../../plugins/campaign/language/prompts.js'
import type { ModuleKit } from '../../../../plugins/campaign/modules/kit.js'
import { actionOf, attendeesOf, decisionsOf, meetingSentences, openQuestions } from '../../../../plugins/campaign/modules/meetings/meeting-notes.js'
import { meetingFunctions, meetingPrompt } from '../../../../plugins/campaign/modules/meetings/meetings.js'
import { campaignApp, campaignStoreOn, moduleUrl, statusOf } from '../../../support/campaign.js'

const NOTES = `Ana: Welcome everyone. Today we plan the Elm Street canvass.
Ben: We agreed to focus on the north side first.
Ana: Great. Ana will send the flyer by Friday.
Carla: Who is printing the flyers?
Ben: The print shop on Main Street is printing them.
Carla: Can we afford a second mailing?
Ana: I'll draft the volunteer schedule by June 3.
Action: Ben to book the hall by next week
TODO: update the website`

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
  const store = campaignStoreOn(env)
  const kit = { language: localEngine, generator, store, maxRecords: 100 } as unknown as ModuleKit
  const [summarize] = meetingFunctions(kit)
  const result = await summarize.handler({ title: 'Canvass planning', text: NOTES, attendees: [], held_on: '2026-05-04' }, {}) as Record<string, unknown>
  t.match(result, { summary: 'The team planned the Elm Street canvass.', summary_method: 'generative', engine: 'generative (stand-in)', summary_sentences: [] })
  t.equal((result.action_items as unknown[]).length, 4)
  t.equal(asked.length, 1)
  t.match(asked[0][1].content, /Meeting: Canvass planning/)
})

t.test('through the API', async t => {
  const { login: cookie, call } = await campaignApp(t)
  const readonly = await cookie('readonly')

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
