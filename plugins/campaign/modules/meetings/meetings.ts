// Meetings: summarize-meeting reads notes or a transcript (meeting-notes.ts) into attendees, decisions,
// action items and open questions by rules, with an extractive summary, or a generated one from the
// prompt in modules/meetings/prompts/summarize-meeting.md when a generative provider is configured; stored.
import { Type } from '../../../../kernel/schema.js'
import { moduleFunction, type ModuleFunction, generated, type ChatMessage, loadPrompt, promptMessages, type PromptTemplate, checkText, instant, RecordStore, TextArg, timeKey, type ModuleKit } from '../../module-kit.js'
import {
  actionOf, attendeesOf, decisionsOf, extractiveSummary, meetingSentences, openQuestions,
  type ActionItem, type OpenQuestion
} from './meeting-notes.js'

/** Most characters of the notes sent to the generative provider. */
export const PROMPT_TEXT_CHARS = 24_000

export interface MeetingRecord {
  meeting_id: string
  title: string
  held_on: string | null
  attendees: string[]
  summary: string
  summary_method: 'extractive' | 'generative'
  decisions: Array<{ speaker: string, text: string }>
  action_items: ActionItem[]
  open_questions: OpenQuestion[]
  engine: string
  recorded_by: string
  recorded_at: string
}

const SummarizeArgs = Type.Object({
  title: Type.String({ minLength: 1, maxLength: 200 }),
  text: TextArg('the transcript ("Speaker: words" lines) or the notes'),
  attendees: Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 200, default: [] }),
  held_on: Type.Optional(Type.String({ description: 'YYYY-MM-DD; relative due dates count from it (today when absent)' }))
}, { additionalProperties: false })

/** The two chat messages of the generated summary. */
export function meetingPrompt (template: PromptTemplate, meeting: { title: string, held_on: string | null, attendees: string[], decisions: string[], actions: ActionItem[], text: string }): ChatMessage[] {
  const lines = (items: string[]): string => items.length === 0 ? 'none found' : items.map(i => `- ${i}`).join('\n')
  const values = {
    title: meeting.title,
    held_on: meeting.held_on ?? 'not given',
    attendees: meeting.attendees.length === 0 ? 'not given' : meeting.attendees.join(', '),
    decisions: lines(meeting.decisions),
    action_items: lines(meeting.actions.map(a => `${a.owner === '' ? 'unassigned' : a.owner}: ${a.task}${a.due_on !== null ? ` (due ${a.due_on})` : ''}`)),
    transcript: meeting.text.slice(0, PROMPT_TEXT_CHARS)
  }
  return promptMessages(template, values)
}

export function meetingFunctions (kit: ModuleKit): ModuleFunction[] {
  const template = loadPrompt(import.meta.url, 'summarize-meeting')
  const meetings = new RecordStore<MeetingRecord>(kit.store, 'meetings', kit.maxRecords)
  return [
    moduleFunction({
      name: 'summarize-meeting',
      args: SummarizeArgs,
      handler: async (args, { session }) => {
        checkText('text', args.text)
        const heldOn = args.held_on === undefined ? undefined : instant('held_on', args.held_on)
        const engine = await kit.language()
        const sentences = meetingSentences(engine, args.text)
        const ref = heldOn ?? new Date()
        const decisions = decisionsOf(sentences).map(s => ({ speaker: s.speaker, text: s.text }))
        const actions = sentences.flatMap(s => actionOf(s, ref) ?? [])
        const attendees = attendeesOf(args.attendees, args.text)
        const held = heldOn?.toISOString().slice(0, 10) ?? null
        let summary: string
        let summarySentences: Array<{ index: number, text: string, score: number }> = []
        let producedBy: string
        const answer = await generated(kit.generator, () => meetingPrompt(template, { title: args.title, held_on: held, attendees, decisions: decisions.map(d => d.text), actions, text: args.text }), 400)
        if (answer !== undefined) {
          summary = answer.text
          producedBy = answer.engine
        } else {
          summarySentences = extractiveSummary(engine, sentences)
          summary = summarySentences.map(s => s.text).join(' ')
          producedBy = engine.name
        }
        const now = new Date()
        const record: MeetingRecord = {
          meeting_id: timeKey(now),
          title: args.title,
          held_on: held,
          attendees,
          summary,
          summary_method: answer !== undefined ? 'generative' : 'extractive',
          decisions,
          action_items: actions,
          open_questions: openQuestions(engine, sentences),
          engine: producedBy,
          recorded_by: session?.email ?? '',
          recorded_at: now.toISOString()
        }
        await meetings.put(record.meeting_id, record)
        return { ...record, summary_sentences: summarySentences }
      }
    })
  ]
}
