// Question anticipation: anticipate-questions finds the questions an event's audience is likely to ask
// (anticipation.ts) with cited evidence and suggested answers (extractive, or drafted by the generative
// provider from the cited passages); preparation-checklist turns them, the knowledge-base gaps, the
// regulatory deadlines near the day and the logistics template into a stored checklist.
import { BadRequest, Unavailable } from '../../../../kernel/index.js'
import { Type } from '../../../../kernel/schema.js'
import { moduleFunction, type ModuleFunction, type LanguageEngine, generated, labelledSections, loadPrompt, findIssues, calendarDay, contentId, DayArg, RecordStore, timeKey, type ModuleKit, type Post, SourceList, postRange, RangeArgs } from '../../module-kit.js'
import type { Commitment } from '../accountability/index.js'
import type { StoredRegulation } from '../regulatory-monitor/index.js'
import { anticipate, answersPrompt, focusTerms, onFocus, type AnticipatedQuestion } from './anticipation.js'
import { deadlineItems, gapItems, loadLogistics, logisticsItems, orderItems, questionItems, type ChecklistItem } from './preparation.js'
import { manifest } from './manifest.js'

/** Without `from`, the posts of this many days before `to` are read; `to` defaults to the end of the event's day, or now when that is later. */
export const DEFAULT_DAYS = 30
/** Most posts read: the latest on the focus in the range. */
export const MAX_POSTS = 5_000

export interface StoredChecklist {
  checklist_id: string
  event: string
  date: string
  topics: string[]
  audience: string
  items: ChecklistItem[]
  counts: { total: number, ready: number, gap: number, todo: number }
  sources: string[]
  engine: string
  created_by: string
  created_at: string
}

const AnticipateArgs = Type.Object({
  event: Type.Optional(Type.String({ minLength: 1, maxLength: 300, description: 'the event, e.g. "Town hall on housing in Eastside"' })),
  topic: Type.Optional(Type.String({ minLength: 1, maxLength: 300 })),
  audience: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'who will ask, e.g. "renters", "Eastside residents"' })),
  date: Type.Optional(DayArg('the day of the event (YYYY-MM-DD); today when absent')),
  ...RangeArgs,
  limit: Type.Integer({ minimum: 1, maximum: 50, default: 10 })
}, { additionalProperties: false })

const ChecklistArgs = Type.Object({
  event: Type.String({ minLength: 1, maxLength: 300 }),
  date: Type.Optional(DayArg('the day of the event (YYYY-MM-DD); today when absent')),
  topics: Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 20, default: [] }),
  audience: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  limit: Type.Integer({ minimum: 1, maximum: 50, default: 10, description: 'most anticipated questions on the list' })
}, { additionalProperties: false })

const DAY_MS = 86_400_000

interface Focus { event?: string, topic?: string, audience?: string, date?: string, from?: string, to?: string, source?: string, limit: number }

/** The day of the event: `date` (400 naming it when it is no calendar day) or today. */
function eventDay (date: string | undefined): string {
  return date === undefined ? new Date().toISOString().slice(0, 10) : calendarDay('date', date)
}

export function questionAnticipationFunctions (kit: ModuleKit): ModuleFunction[] {
  const template = loadPrompt(import.meta.url, 'anticipate-questions')
  const logistics = loadLogistics()
  const commitments = new RecordStore<Commitment>(kit.store, 'commitments', kit.maxRecords)
  const regulations = new RecordStore<StoredRegulation>(kit.store, 'regulatory-analyses', kit.maxRecords)
  const checklists = new RecordStore<StoredChecklist>(kit.store, 'prep-checklists', kit.maxRecords)

  /** The anticipated questions with local answers, and what they were read from. */
  async function questionsFor (args: Focus, engine: LanguageEngine): Promise<{ questions: AnticipatedQuestion[], sources: SourceList, posts: number, focus: string[] }> {
    const range = postRange(args, '', false)
    const day = eventDay(args.date)
    const to = range.to ?? new Date(Math.min(Date.now(), Date.parse(day) + DAY_MS - 1))
    const from = range.from ?? new Date(to.getTime() - DEFAULT_DAYS * DAY_MS)
    const focusText = args.topic ?? args.event
    const focus = focusTerms(engine, focusText)
    const posts: Post[] = (await kit.posts.list(from, to, { source: range.source })).filter(p => onFocus(p, focus)).slice(-MAX_POSTS)
    const sources = new SourceList()
    const questions = anticipate({
      engine, kb: kit.kb, posts, commitments: await commitments.list(), focus, focusIssues: findIssues(focusText ?? '').map(i => i.issue), audience: focusTerms(engine, args.audience),
      day, sources, limit: args.limit
    })
    return { questions, sources, posts: posts.length, focus }
  }

  return [
    moduleFunction({
      name: 'anticipate-questions',
      args: AnticipateArgs,
      handler: async args => {
        const engine = await kit.language()
        const { questions, sources, posts, focus } = await questionsFor(args, engine)
        const answerable = questions.filter(q => q.answer.found)
        let producedBy = engine.name
        const reply = answerable.length === 0 ? undefined : await generated(kit.generator, () => answersPrompt(template, { event: args.event ?? args.topic ?? 'not given', audience: args.audience ?? 'not given' }, answerable, sources), 160 * answerable.length + 100)
        if (reply !== undefined) {
          const labels = answerable.map((_, i) => `A${i + 1}`)
          const sections = labelledSections(reply.text, labels)
          if (sections === undefined) throw new Unavailable(`${reply.engine} answered without the sections ${labels.join(', ')}, one per question`)
          answerable.forEach((q, i) => {
            const text = sections[labels[i]]
            const cites = [...new Set([...text.matchAll(/\[(\d+)\]/g)].map(m => Number(m[1])))].filter(n => q.answer.cites.includes(n))
            q.answer = { text, found: true, method: 'generative', cites }
          })
          producedBy = reply.engine
        }
        return {
          event: args.event ?? null,
          topic: args.topic ?? null,
          audience: args.audience ?? null,
          focus_terms: focus,
          posts_read: posts,
          questions,
          sources: sources.lines,
          resource_id: contentId(manifest.id, ...questions.map(q => q.question_id)),
          engine: producedBy
        }
      }
    }),
    moduleFunction({
      name: 'preparation-checklist',
      args: ChecklistArgs,
      handler: async (args, { session }) => {
        const blank = args.topics.findIndex(t => t.trim() === '')
        if (blank !== -1) throw new BadRequest(`invalid arguments: /topics/${blank}: must not be blank`)
        const topics = [...new Set(args.topics.map(t => t.trim()))]
        const engine = await kit.language()
        const day = eventDay(args.date)
        const { questions, sources } = await questionsFor({ event: args.event, topic: [args.event, ...topics].join(' '), audience: args.audience, date: day, limit: args.limit }, engine)
        const items = orderItems([
          ...questionItems(questions, day),
          ...gapItems(engine, kit.kb, topics, day, sources),
          ...deadlineItems(await regulations.list(), day, sources),
          ...logisticsItems(logistics, args.event, day, sources)
        ])
        const now = new Date()
        const checklist: StoredChecklist = {
          checklist_id: timeKey(now),
          event: args.event,
          date: day,
          topics,
          audience: args.audience ?? '',
          items,
          counts: {
            total: items.length,
            ready: items.filter(i => i.status === 'ready').length,
            gap: items.filter(i => i.status === 'gap').length,
            todo: items.filter(i => i.status === 'todo').length
          },
          sources: sources.lines,
          engine: engine.name,
          created_by: session?.email ?? '',
          created_at: now.toISOString()
        }
        await checklists.put(checklist.checklist_id, checklist)
        return { ...checklist, resource_id: checklist.checklist_id }
      }
    })
  ]
}
