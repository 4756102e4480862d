// Candidate briefings: generate-briefing assembles a briefing book on a subject (an event, a place, a
// person, a topic) from what the app knows (briefing-book.ts), with a summary written extractively or by
// the generative provider (prompts/generate-briefing.md), and stores it.
import { BadRequest } from '../../../../kernel/index.js'
import { Type } from '../../../../kernel/schema.js'
import { moduleFunction, type ModuleFunction, generated, loadPrompt, promptMessages, Citations, type CitedPassage, marked, sourceLines, instant, RecordStore, timeKey, type ModuleKit } from '../../module-kit.js'
import { commitmentStore } from '../accountability/index.js'
import { articleStore } from '../media-monitor/index.js'
import { articlesAbout, commitmentsOn, postsAbout } from './app-records.js'
import { attendeeNotes, briefingSections, MAX_ARTICLES, summaryLines, type AttendeeNotes, type BriefingSections } from './briefing-book.js'


export interface BriefingRecord {
  briefing_id: string
  subject: string
  date: string | null
  days: number
  attendees: AttendeeNotes[]
  summary: string
  summary_method: 'extractive' | 'generative'
  sections: BriefingSections
  sources: CitedPassage[]
  citation_lines: string[]
  engine: string
  recorded_by: string
  recorded_at: string
}

const BriefingArgs = Type.Object({
  subject: Type.String({ minLength: 1, maxLength: 300, description: 'an event, a place, a person or a topic' }),
  date: Type.Optional(Type.String({ maxLength: 40, description: 'YYYY-MM-DD of the event' })),
  attendees: Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 30, default: [] }),
  days: Type.Integer({ minimum: 1, maximum: 365, default: 30, description: 'days of posts read, up to now' })
}, { additionalProperties: false })

export function candidateBriefingFunctions (kit: ModuleKit): ModuleFunction[] {
  const prompt = loadPrompt(import.meta.url, 'generate-briefing')
  const briefings = new RecordStore<BriefingRecord>(kit.store, 'briefings', kit.maxRecords)
  const articles = articleStore(kit)
  const commitments = commitmentStore(kit)
  return [
    moduleFunction({
      name: 'generate-briefing',
      args: BriefingArgs,
      handler: async (args, { session }) => {
        const date = args.date === undefined ? null : instant('date', args.date).toISOString().slice(0, 10)
        const engine = await kit.language()
        const subject = args.subject.trim()
        const terms = [...new Set(engine.terms(subject))]
        if (terms.length === 0) throw new BadRequest('invalid arguments: /subject: holds no content words')
        const now = new Date()
        const allCommitments = await commitments.list()
        const data = {
          subject,
          date,
          days: args.days,
          terms,
          posts: await postsAbout(kit.posts, terms, new Date(now.getTime() - args.days * 86_400_000)),
          coverage: await articlesAbout(articles, terms, MAX_ARTICLES),
          commitments: commitmentsOn(engine, allCommitments, subject, terms),
          today: now.toISOString().slice(0, 10)
        }
        const citations = new Citations()
        const sections = briefingSections(engine, kit.kb, citations, data)
        const attendees = await attendeeNotes(engine, kit.kb, citations, args.attendees.map(a => a.trim()).filter(a => a !== ''), allCommitments, articles)
        const facts = summaryLines(data, sections)
        let summary = facts.join(' ')
        let method: BriefingRecord['summary_method'] = 'extractive'
        let producedBy = engine.name
        const knowsSomething = citations.passages.length > 0 || sections.sentiment.posts > 0 || sections.media.matched > 0 || data.commitments.length > 0
        const answer = !knowsSomething ? undefined : await generated(kit.generator, () => promptMessages(prompt, {
          subject,
          date: date ?? 'not given',
          attendees: attendees.length === 0 ? 'none given' : attendees.map(a => a.name).join(', '),
          facts: facts.slice(1).join('\n'),
          background: sections.background.sentences.length === 0 ? 'nothing' : sections.background.sentences.map(marked).join('\n'),
          questions: sections.likely_questions.items.map(q => `- ${q.question}`).join('\n'),
          sources: citations.passages.length === 0 ? 'none' : sourceLines(citations.passages)
        }), 500)
        if (answer !== undefined) {
          summary = answer.text
          method = 'generative'
          producedBy = answer.engine
        }
        const record: BriefingRecord = {
          briefing_id: timeKey(now),
          subject,
          date,
          days: args.days,
          attendees,
          summary,
          summary_method: method,
          sections,
          sources: citations.passages,
          citation_lines: citations.lines,
          engine: producedBy,
          recorded_by: session?.email ?? '',
          recorded_at: now.toISOString()
        }
        await briefings.put(record.briefing_id, record)
        return { ...record, resource_id: record.briefing_id, ...(knowsSomething ? {} : { note: `The app knows nothing about “${subject}” yet: no passage, post, article or commitment mentions it.` }) }
      }
    })
  ]
}
