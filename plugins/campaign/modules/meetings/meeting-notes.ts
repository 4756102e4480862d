// What meeting notes or a transcript record, by rules: the attendees (given ones and "Speaker:" labels),
// decisions, action items (owner, task, due date), open questions, and the extractive summary.
import { type LanguageEngine, type SummarySentence, findDue, distinctCi, parseTurns, speakersOf } from '../../module-kit.js'

export type NoteKind = 'action' | 'decision' | 'question' | ''

export interface MeetingSentence { index: number, speaker: string, text: string, kind: NoteKind }

export interface ActionItem {
  /** Who does it ("" when the notes do not say). */
  owner: string
  task: string
  due_on: string | null
  due_text: string | null
  speaker: string
  text: string
}

export interface OpenQuestion { speaker: string, text: string }

/** Sentences of the summary when it is extractive. */
export const SUMMARY_SENTENCES = 3
/** A question counts as answered by one of this many sentences after it. */
export const ANSWER_WINDOW = 3

/** "TODO" or "[ ]" opening a line, or a label followed by a colon or dash: "Action:", "Decision –", "Open question:". */
const NOTE_PREFIX = /^(?:(todo|to-do|\[\s?\])\s*[:\-–]?\s*|(action(?:\s+items?)?|actions|to do|decisions?|decided|resolved|(?:open\s+)?questions?)\s*[:\-–]\s*)(.+)$/i
const DECISION = /\b(?:decided|agreed|approved|resolved|will go with|(?:are|is|'re) going with|settled on|voted to)\b/i
const FILLER = /^(?:(?:so|ok|okay|great|then|and|also|alright|right|good|fine|sure|yes|yeah|next|finally|thanks)\b[,.!]?\s*)+/i
const NAME = "[\\p{Lu}][\\p{L}'’-]+"
const OWNER = `(I|${NAME}(?:\\s+(?:and|&)\\s+${NAME}|\\s+${NAME}){0,3})`
/** In prose an action needs a future verb; on an "Action:" line "Ben to …" or "Ben should …" suffices. */
const PROSE_ACTION = new RegExp(`^${OWNER}(?:'ll|\\s+(?:will|shall|is going to|are going to))\\s+(.+)$`, 'u')
const NOTE_ACTION = new RegExp(`^${OWNER}(?:'ll|\\s+(?:will|shall|is going to|are going to|to|should|needs? to|has to|must))\\s+(.+)$`, 'u')
const OWNER_IN_PARENS = new RegExp(`\\s*\\((${NAME}(?:\\s+${NAME})?)\\)\\s*[.!]?$`, 'u')
/** Capitalised sentence openers that are not people. */
const NOT_OWNERS = new Set(['it', 'this', 'that', 'there', 'they', 'he', 'she', 'you', 'we', 'the', 'what', 'who', 'everyone', 'everybody',
  'nobody', 'someone', 'which', 'these', 'those', 'here', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday',
  'today', 'tomorrow', 'next', 'our', 'my', 'your', 'their'])
const YES_NO = /^(?:yes|no|yeah|yep|nope|sure|correct|right|definitely|not yet)\b/i

function kindOf (label: string): NoteKind {
  const l = label.toLowerCase()
  if (l.startsWith('decid') || l.startsWith('resolved')) return 'decision'
  if (l.includes('question')) return 'question'
  return 'action'
}

/**
 * The notes' sentences in order, with their speaker and the kind a "Action:"/"Decision:"/"TODO" prefix
 * gives them; heading lines (the meeting's title, "Budget" over a section) are left out.
 */
export function meetingSentences (engine: LanguageEngine, text: string): MeetingSentence[] {
  const out: MeetingSentence[] = []
  const headings = new Set(engine.segments(text).filter(s => s.heading).map(s => s.text))
  for (const turn of parseTurns(text)) {
    for (const line of turn.lines) {
      if (headings.has(line)) continue
      const note = NOTE_PREFIX.exec(line)
      const kind = note === null ? '' : kindOf(note[1] ?? note[2])
      const body = note === null ? line : note[3]
      for (const sentence of engine.sentences(body)) {
        const trimmed = sentence.trim()
        if (trimmed !== '') out.push({ index: out.length, speaker: turn.speaker, text: trimmed, kind })
      }
    }
  }
  return out
}

export const isQuestion = (s: MeetingSentence): boolean => s.text.endsWith('?') || s.kind === 'question'

export function decisionsOf (sentences: readonly MeetingSentence[]): MeetingSentence[] {
  return sentences.filter(s => !isQuestion(s) && (s.kind === 'decision' || DECISION.test(s.text)))
}

const tidy = (text: string): string => text.replace(/[\s,;:.!]+$/u, '').trim()

/** An action item of one sentence, or undefined when it is none. */
export function actionOf (s: MeetingSentence, ref: Date): ActionItem | undefined {
  if (isQuestion(s)) return undefined
  let text = s.text.replace(FILLER, '').replace(/’/g, "'")
  let owner = ''
  const inParens = s.kind === 'action' ? OWNER_IN_PARENS.exec(text) : null
  if (inParens !== null) {
    owner = inParens[1]
    text = text.slice(0, inParens.index)
  }
  const match = (s.kind === 'action' ? NOTE_ACTION : PROSE_ACTION).exec(text)
  const named = match !== null && !NOT_OWNERS.has(match[1].toLowerCase())
  if (!named && s.kind !== 'action') return undefined
  if (named) owner = match[1] === 'I' ? s.speaker : match[1]
  const rest = named ? match[2] : text
  const due = findDue(rest, ref)
  const task = tidy(due === undefined ? rest : rest.replace(due.due_text, ' ').replace(/\s+/g, ' '))
  return { owner, task, due_on: due?.due_on ?? null, due_text: due?.due_text ?? null, speaker: s.speaker, text: s.text }
}

/**
 * Questions nobody answered: a question is answered when one of the ANSWER_WINDOW sentences after it
 * that are not questions, and not the asker's own when speakers are known, opens with yes / no / sure…
 * or shares a content term with it. Questions written as "Open question: …" are always open.
 */
export function openQuestions (engine: LanguageEngine, sentences: readonly MeetingSentence[]): OpenQuestion[] {
  return sentences.filter((q, i) => {
    if (!isQuestion(q)) return false
    if (q.kind === 'question') return true
    const terms = new Set(engine.terms(q.text))
    const replies = sentences.slice(i + 1).filter(s => !isQuestion(s) && (q.speaker === '' || s.speaker !== q.speaker)).slice(0, ANSWER_WINDOW)
    return !replies.some(r => YES_NO.test(r.text) || engine.terms(r.text).some(t => terms.has(t)))
  }).map(q => ({ speaker: q.speaker, text: q.text }))
}

export function attendeesOf (given: readonly string[], text: string): string[] {
  return distinctCi([...given.map(a => a.trim()).filter(a => a !== ''), ...speakersOf(parseTurns(text))])
}

/** The SUMMARY_SENTENCES most central sentences (each ended with a full stop if it had no end mark). */
export function extractiveSummary (engine: LanguageEngine, sentences: readonly MeetingSentence[]): SummarySentence[] {
  return engine.summarize(sentences.map(s => /[.!?]$/.test(s.text) ? s.text : `${s.text}.`).join(' '), SUMMARY_SENTENCES)
}
