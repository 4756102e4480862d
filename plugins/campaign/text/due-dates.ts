// Due dates stated in a sentence ("by March 2027", "within 100 days", "next year", "by Friday"),
// resolved against the day the text was said or written; shared by accountability and meetings.

export interface Due {
  /** YYYY-MM-DD (UTC). */
  due_on: string
  /** The phrase it was read from, as written. */
  due_text: string
}

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december']
const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday']
const NUMBER_WORDS: Record<string, number> = {
  a: 1, an: 1, one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10, eleven: 11, twelve: 12,
  fifteen: 15, twenty: 20, thirty: 30, sixty: 60, ninety: 90, hundred: 100, 'a hundred': 100, 'one hundred': 100
}

const MONTH = `(${MONTHS.join('|')}|${MONTHS.map(m => m.slice(0, 3)).join('|')})\\.?`
const NUMBER = `(\\d{1,4}|${Object.keys(NUMBER_WORDS).sort((a, b) => b.length - a.length).join('|')})`

const utc = (y: number, m: number, d: number): Date => new Date(Date.UTC(y, m, d))
const day = (at: Date): string => at.toISOString().slice(0, 10)
const addDays = (at: Date, n: number): Date => utc(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate() + n)
const monthIndex = (name: string): number => MONTHS.findIndex(m => m.startsWith(name.toLowerCase().slice(0, 3)))
const endOfMonth = (y: number, m: number): Date => utc(y, m + 1, 0)
/** The first `weekday` (0 = Sunday) on or after `from`. */
const nextWeekday = (from: Date, weekday: number): Date => addDays(from, (weekday - from.getUTCDay() + 7) % 7)
/** The Monday after the week (Monday to Sunday) of `day`. */
const startOfNextWeek = (day: Date): Date => addDays(day, 7 - ((day.getUTCDay() + 6) % 7))

type Resolve = (match: RegExpExecArray, ref: Date) => Date | undefined

/** Patterns in order of preference when two start at the same place; the earliest match in the text wins. */
const RULES: ReadonlyArray<[RegExp, Resolve]> = [
  // by June 1, 2027 / on March 3 / before 1 June 2027
  [new RegExp(`\\b(?:by|before|until|on|no later than)\\s+${MONTH}\\s+(\\d{1,2})(?:st|nd|rd|th)?(?:,?\\s+(\\d{4}))?\\b`, 'i'), (m, ref) => {
    const month = monthIndex(m[1])
    const date = Number(m[2])
    const year = m[3] !== undefined ? Number(m[3]) : (utc(ref.getUTCFullYear(), month, date) < ref ? ref.getUTCFullYear() + 1 : ref.getUTCFullYear())
    return date >= 1 && date <= 31 ? utc(year, month, date) : undefined
  }],
  [new RegExp(`\\b(?:by|before|until|on|no later than)\\s+(?:the\\s+)?(\\d{1,2})(?:st|nd|rd|th)?\\s+(?:of\\s+)?${MONTH}(?:,?\\s+(\\d{4}))?\\b`, 'i'), (m, ref) => {
    const month = monthIndex(m[2])
    const date = Number(m[1])
    const year = m[3] !== undefined ? Number(m[3]) : (utc(ref.getUTCFullYear(), month, date) < ref ? ref.getUTCFullYear() + 1 : ref.getUTCFullYear())
    return date >= 1 && date <= 31 ? utc(year, month, date) : undefined
  }],
  // by March 2027 / in March / by the end of March → the month's last day
  [new RegExp(`\\b(?:by|before|until|in|no later than)\\s+(?:the\\s+end\\s+of\\s+)?${MONTH}(?:\\s+(\\d{4}))?\\b`, 'i'), (m, ref) => {
    const month = monthIndex(m[1])
    const year = m[2] !== undefined ? Number(m[2]) : (month < ref.getUTCMonth() ? ref.getUTCFullYear() + 1 : ref.getUTCFullYear())
    return endOfMonth(year, month)
  }],
  // by 2027-03-31 / on 2027-03-31
  [/\b(?:by|before|until|on|no later than)\s+(\d{4})-(\d{2})-(\d{2})\b/i, m => utc(Number(m[1]), Number(m[2]) - 1, Number(m[3]))],
  // by 2027 / by the end of 2027 / in 2027 → 31 December
  [/\b(?:by|before|until|in|no later than)\s+(?:the\s+end\s+of\s+)?(20\d{2})\b(?!\s*(?:days?|weeks?|months?|years?))/i, m => utc(Number(m[1]), 11, 31)],
  // within 100 days / in the next six months / in the first 100 days
  [new RegExp(`\\b(?:within|in)\\s+(?:the\\s+(?:next|first|coming)\\s+)?${NUMBER}\\s+(day|week|month|year)s?\\b`, 'i'), (m, ref) => {
    const n = /^\d+$/.test(m[1]) ? Number(m[1]) : NUMBER_WORDS[m[1].toLowerCase()]
    const unit = m[2].toLowerCase()
    if (unit === 'day') return addDays(ref, n)
    if (unit === 'week') return addDays(ref, 7 * n)
    const months = unit === 'month' ? n : 12 * n
    return utc(ref.getUTCFullYear(), ref.getUTCMonth() + months, ref.getUTCDate())
  }],
  // (by the end of) next week / month / year
  [/\b(?:by\s+)?(?:the\s+end\s+of\s+)?next\s+(week|month|year)\b/i, (m, ref) => {
    const unit = m[1].toLowerCase()
    if (unit === 'week') return addDays(nextWeekday(ref, 0), 7)
    if (unit === 'month') return endOfMonth(ref.getUTCFullYear(), ref.getUTCMonth() + 1)
    return utc(ref.getUTCFullYear() + 1, 11, 31)
  }],
  // by the end of the / this week, month, year; by year end; this year
  [/\b(?:by\s+)?(?:the\s+)?end\s+of\s+(?:the\s+|this\s+)(week|month|year)\b|\bby\s+(month|year)[- ]end\b|\bthis\s+(year)\b/i, (m, ref) => {
    const unit = (m[1] ?? m[2] ?? m[3]).toLowerCase()
    if (unit === 'week') return nextWeekday(ref, 0)
    if (unit === 'month') return endOfMonth(ref.getUTCFullYear(), ref.getUTCMonth())
    return utc(ref.getUTCFullYear(), 11, 31)
  }],
  // by Friday / on Monday (the coming one) / next Tuesday (the one of the following week, Monday to Sunday:
  // said on a Wednesday, "next Monday" is in five days and "next Friday" in nine)
  [new RegExp(`\\b(by|on|before|until|this|next)\\s+(${WEEKDAYS.join('|')})\\b`, 'i'), (m, ref) => {
    const weekday = WEEKDAYS.indexOf(m[2].toLowerCase())
    return nextWeekday(m[1].toLowerCase() === 'next' ? startOfNextWeek(ref) : ref, weekday)
  }],
  [/\b(?:by\s+)?tomorrow\b/i, (_m, ref) => addDays(ref, 1)],
  [/\b(?:by\s+)?(?:the\s+end\s+of\s+)?(?:today|tonight)\b/i, (_m, ref) => ref]
]

/** The day (YYYY-MM-DD) `days` after `day` (before it when negative). */
export const shiftDay = (day: string, days: number): string => new Date(Date.parse(day) + days * 86_400_000).toISOString().slice(0, 10)

/** The due date a text states, against `ref` (the day it was said), or undefined when it states none. */
export function findDue (text: string, ref: Date): Due | undefined {
  const start = utc(ref.getUTCFullYear(), ref.getUTCMonth(), ref.getUTCDate())
  let best: { index: number, due: Due } | undefined
  for (const [pattern, resolve] of RULES) {
    const match = pattern.exec(text)
    if (match === null || (best !== undefined && match.index >= best.index)) continue
    const at = resolve(match, start)
    if (at === undefined || Number.isNaN(at.getTime())) continue
    best = { index: match.index, due: { due_on: day(at), due_text: match[0] } }
  }
  return best?.due
}
