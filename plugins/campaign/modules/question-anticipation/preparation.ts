// The preparation checklist of an event: an answer to prepare for each anticipated question, the
// knowledge-base gaps among its topics, the regulatory deadlines near its day (stored analyses of the
// regulatory monitor) and the logistics items of the template data/event-logistics.toml.
import { Type, type Static } from '../../../../kernel/schema.js'
import { type LanguageEngine, addressingPassages, loadDataFile, shiftDay, type KbLike, type SourceList, mentions } from '../../module-kit.js'
import type { StoredRegulation } from '../regulatory-monitor/index.js'
import type { AnticipatedQuestion } from './anticipation.js'

export const LogisticsFile = Type.Object({
  item: Type.Array(Type.Object({
    text: Type.String({ minLength: 1 }),
    days_before: Type.Integer({ minimum: -60, maximum: 365 }),
    applies_to: Type.Optional(Type.Array(Type.String({ minLength: 1 })))
  }, { additionalProperties: false }), { minItems: 1 })
})
export type LogisticsItem = Static<typeof LogisticsFile>['item'][number]

export const loadLogistics = (file?: string): LogisticsItem[] => loadDataFile('event-logistics', LogisticsFile, file).item

export type ItemSection = 'question' | 'knowledge-gap' | 'deadline' | 'logistics'
export type ItemStatus = 'ready' | 'gap' | 'todo'

export interface ChecklistItem {
  section: ItemSection
  text: string
  /** ready: the material exists (cited); gap: it is missing; todo: a task to do. */
  status: ItemStatus
  /** YYYY-MM-DD, or null. */
  due_on: string | null
  /** Cite numbers in the checklist's sources. */
  cites: number[]
}

/** Questions and knowledge-base gaps are due this many days before the event (the briefing is printed the day before). */
export const BRIEFING_DAYS_BEFORE = 3
/** Regulatory deadlines this many days before or after the event are listed. */
export const DEADLINE_WINDOW_DAYS = 14


/** An item per anticipated question: ready when the knowledge base holds an answer, a gap otherwise. */
export function questionItems (questions: readonly AnticipatedQuestion[], day: string): ChecklistItem[] {
  return questions.map(q => ({
    section: 'question',
    text: q.answer.found ? `Rehearse the answer to: ${q.question}` : `Write an answer to: ${q.question} (no prepared answer in the knowledge base)`,
    status: q.answer.found ? 'ready' : 'gap',
    due_on: shiftDay(day, -BRIEFING_DAYS_BEFORE),
    cites: [...q.evidence.map(e => e.cite), ...q.answer.cites]
  }))
}

/** Per topic: the passages that address it (ready, cited), or a gap to fill with kb-ingest. */
export function gapItems (engine: LanguageEngine, kb: KbLike, topics: readonly string[], day: string, sources: SourceList): ChecklistItem[] {
  return topics.map(topic => {
    const passages = addressingPassages(engine, kb, [topic])
    return passages.length === 0
      ? { section: 'knowledge-gap', text: `Add a briefing on “${topic}” to the knowledge base: no passage covers it`, status: 'gap', due_on: shiftDay(day, -BRIEFING_DAYS_BEFORE), cites: [] }
      : { section: 'knowledge-gap', text: `Review the briefing on “${topic}”`, status: 'ready', due_on: shiftDay(day, -BRIEFING_DAYS_BEFORE), cites: passages.map(p => sources.passage(p)) }
  })
}

/** Calendar deadlines of the stored regulatory analyses within DEADLINE_WINDOW_DAYS of the day, each once. */
export function deadlineItems (analyses: Iterable<StoredRegulation>, day: string, sources: SourceList): ChecklistItem[] {
  const from = shiftDay(day, -DEADLINE_WINDOW_DAYS)
  const to = shiftDay(day, DEADLINE_WINDOW_DAYS)
  const items: ChecklistItem[] = []
  for (const analysis of analyses) {
    analysis.deadlines.forEach((deadline, i) => {
      if (deadline.kind !== 'date' || deadline.date === undefined || deadline.date < from || deadline.date > to) return
      const where = `${analysis.title}${analysis.jurisdiction !== '' ? ` (${analysis.jurisdiction})` : ''}, ${deadline.section}`
      const cite = sources.add('regulation', `${analysis.regulation_id}#${i}`, `regulatory analysis of ${where}: “${deadline.clause}”`)
      items.push({ section: 'deadline', text: `Regulatory deadline (${deadline.text}): ${deadline.clause}`, status: 'todo', due_on: deadline.date, cites: [cite] })
    })
  }
  return items
}

/** The template's items that apply to the event, each due `days_before` the day. */
export function logisticsItems (template: readonly LogisticsItem[], event: string, day: string, sources: SourceList): ChecklistItem[] {
  const cite = sources.add('template', 'event-logistics', 'logistics template (plugins/campaign/data/event-logistics.toml)')
  return template.filter(item => item.applies_to === undefined || item.applies_to.some(word => mentions(event, word)))
    .map(item => ({ section: 'logistics', text: item.text, status: 'todo', due_on: shiftDay(day, -item.days_before), cites: [cite] }))
}

const SECTION_ORDER: readonly ItemSection[] = ['deadline', 'question', 'knowledge-gap', 'logistics']

/** Items by due day (earliest first), then section, then text order. */
export function orderItems (items: readonly ChecklistItem[]): ChecklistItem[] {
  return items.map((item, index) => ({ item, index }))
    .sort((a, b) => (a.item.due_on ?? '9999').localeCompare(b.item.due_on ?? '9999') ||
      SECTION_ORDER.indexOf(a.item.section) - SECTION_ORDER.indexOf(b.item.section) || a.index - b.index)
    .map(({ item }) => item)
}
