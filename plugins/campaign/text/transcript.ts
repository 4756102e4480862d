// Speaker-labelled text ("Ana: words" lines), shared by call intelligence and meetings: the turns in
// order, a line without a label continuing the turn before it, and a text without labels one turn.

export interface Turn {
  /** The label as written ("Ana", "Voter"); "" for text before any label or a text without labels. */
  speaker: string
  /** The turn's lines, labels and list bullets removed. */
  lines: string[]
  text: string
}

/** Labels that head a line of notes rather than name a speaker. */
export const NOTE_LABELS = new Set(['action', 'action item', 'action items', 'actions', 'todo', 'to do', 'to-do', 'decision', 'decisions',
  'note', 'notes', 'question', 'questions', 'open question', 'agenda', 'summary', 'date', 'time', 'location', 'where', 'when',
  'attendees', 'present', 'absent', 're', 'subject', 'next steps', 'follow up', 'follow-up', 'minutes', 'topic', 'outcome', 'result'])

/** Up to three capitalised words (or a number after the first, "Speaker 2") before a colon. */
const LABEL = /^([\p{Lu}][\p{L}\p{M}.'’-]*(?:\s+(?:[\p{Lu}][\p{L}\p{M}.'’-]*|\d+)){0,2})\s*:\s*(.*)$/u
const BULLET = /^(?:[-*•–]\s+|\d{1,2}[.)]\s+)/u

/** The speaker label of a line and its words, or undefined when the line has none. */
export function speakerLabel (line: string): { speaker: string, words: string } | undefined {
  const match = LABEL.exec(line.trim().replace(BULLET, ''))
  if (match === null || NOTE_LABELS.has(match[1].toLowerCase())) return undefined
  return { speaker: match[1], words: match[2].trim() }
}

/** Turns: maximal runs of lines by one speaker; blank lines and turns without words are skipped. */
export function parseTurns (text: string): Turn[] {
  const turns: Turn[] = []
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim().replace(BULLET, '')
    if (line === '') continue
    const label = speakerLabel(line)
    const last = turns.at(-1)
    if (label === undefined || (last !== undefined && last.speaker === label.speaker)) {
      const words = label?.words ?? line
      if (last === undefined) turns.push({ speaker: '', lines: [words], text: '' })
      else if (words !== '') last.lines.push(words)
    } else {
      turns.push({ speaker: label.speaker, lines: label.words === '' ? [] : [label.words], text: '' })
    }
  }
  for (const turn of turns) turn.text = turn.lines.join(' ')
  return turns.filter(turn => turn.lines.length > 0)
}

/** The distinct speakers, in order of their first turn ("" left out). */
export function speakersOf (turns: readonly Turn[]): string[] {
  return [...new Set(turns.map(turn => turn.speaker).filter(speaker => speaker !== ''))]
}
