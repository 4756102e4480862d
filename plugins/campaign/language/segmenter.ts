// Sentence segmentation by rules: where a text's sentences begin and end (abbreviations before
// numerals and names, initials, acronyms, decimals, ellipses, quotations, numbered and bulleted lists,
// web addresses), and which of its lines are headings (structure, not statements). Measured on the
// labelled set in test/fixtures/sentences (bench/sentences.ts).

export interface Segment {
  /** The sentence or heading as written, trimmed; a line break inside a sentence reads as a space. */
  text: string
  /** A heading line: a title or section name, not a statement. */
  heading: boolean
  /** Offsets of the segment in the text (end exclusive). */
  start: number
  end: number
}

/** Before a numeral these never end a sentence ("Sec. 4", "Prop. 12", "pp. 10–12", "St. 9"). */
const NUMBERING = new Set(('sec secs no nos art arts fig figs vol vols p pp prop props approx st ch chap para paras pt pts ' +
  'eq eqs tab rm ste ext hwy rte rt dist apt ord res bldg reg regs cl sched ex ref refs div op nr tel sess amdt').split(' '))
/** Titles before a name never end a sentence ("Dr. Smith", "Gov. Jones", "Lt. Gov. Adams"). */
const TITLES = new Set(('mr mrs ms mx dr prof sen sens rep reps gov lt col gen capt sgt rev hon pres supt insp fr mt adm maj ' +
  'cmdr atty messrs ft').split(' '))
/** Abbreviations that always lead on to more of their sentence ("e.g.", "vs.", "approx."). */
const INLINE = new Set('e.g i.e vs v cf viz incl esp approx ca resp'.split(' '))
/** Abbreviations that may end a sentence: followed by a capitalised sentence opener they do ("in the U.S. She…"). */
const MAY_END = new Set(('inc ltd co corp jr sr bros llc plc st ave blvd rd ln ct pl sq pkwy dept univ govt assn intl natl est ' +
  'a.m p.m').split(' '))
/** Capitalised only: months and states ("Jan. 5", "Springfield, Ill. to Texas"). */
const CAPITALISED_MAY_END = new Set(('Jan Feb Mar Apr Jun Jul Aug Sep Sept Oct Nov Dec Ala Ariz Ark Calif Colo Conn Del Fla Ga ' +
  'Ill Ind Kan Ky La Md Mass Mich Minn Miss Mo Mont Neb Nev Okla Ore Pa Tenn Tex Va Vt Wash Wis Wyo').split(' '))
/** Words that open sentences: after an abbreviation that may end one, such a word says it did. */
const OPENERS = new Set(('the a an this that these those it its he she they we i you his her their our my your there here but and or ' +
  'so yet then in on at for with after before when while if as since although though because what who why how where which is are ' +
  'was were do does did can will would should could may no yes not all some many most every each both one other thanks please ' +
  'also still now today later meanwhile however last next few more').split(' '))
/** Words a heading does not end with: a line ending so runs on into the next. */
const RUNS_ON = new Set(('a an and or but nor the of to for with in on at by from as that which who is are was were will be ' +
  'than into onto via its their our his her your my this these those').split(' '))
/** Words a title-cased line may keep lower-case. */
const SMALL = new Set('a an and as at but by for from in into nor of on or the to via vs with'.split(' '))

const MAX_HEADING_WORDS = 12
const MAX_HEADING_CHARACTERS = 100

/** A bullet or a list number opening a line: "- ", "• ", "* ", "1. ", "2) ", "(3) ". */
const BULLET = /^\s*(?:[-*•·–]\s+|\(?\d{1,3}[.)]\s+)/u
const NUMBERED = /^\s*\(?\d{1,3}[.)]\s+/u
const MARKDOWN_HEADING = /^\s*#{1,6}\s+\S/u
const ENDS_STATEMENT = /[.!?…:;,]["'”’)\]]*$/u

function wordsOf (line: string): string[] {
  return line.replace(/^\s*#{1,6}\s+/u, '').replace(NUMBERED, '').split(/\s+/u).filter(w => /[\p{L}\p{N}]/u.test(w))
}

/** Every word that is not a small word starts with a capital or a digit ("Schools First: A Plan for Every Child"). */
function titleCased (words: readonly string[]): boolean {
  const significant = words.filter(w => !SMALL.has(w.toLowerCase().replace(/[^\p{L}]/gu, '')))
  return significant.length > 0 && significant.every(w => /^["'“‘(]?[\p{Lu}\p{N}]/u.test(w))
}

interface Line { text: string, start: number, end: number, blankAfter: boolean }

/** The heading test of `lines[i]`; the rule in words is in docs/campaign.md (Sentences and headings). */
function isHeading (lines: readonly Line[], i: number, title: string | undefined): boolean {
  const line = lines[i]
  const text = line.text.trim()
  if (MARKDOWN_HEADING.test(text)) return true
  const next = lines[i + 1]
  if (next === undefined || ENDS_STATEMENT.test(text) || /^[-*•·–]\s/u.test(text)) return false
  if (i === 0 && title !== undefined && plain(text) === plain(title)) return true
  const words = wordsOf(text)
  if (words.length === 0 || words.length > MAX_HEADING_WORDS || text.length > MAX_HEADING_CHARACTERS) return false
  if (RUNS_ON.has(words[words.length - 1].toLowerCase().replace(/[^\p{L}]/gu, ''))) return false
  // A numbered line followed by another list line is a list item, not a section.
  if (NUMBERED.test(text) && !line.blankAfter && BULLET.test(next.text)) return false
  if (line.blankAfter) return true
  return /^\s*(?:["'“‘(#]?[\p{Lu}\p{N}]|[-*•·–]\s)/u.test(next.text) && titleCased(words)
}

const plain = (text: string): string => text.replace(/^\s*#{1,6}\s+/u, '').replace(/\s+/gu, ' ').trim().toLowerCase()

/** The non-blank lines of a text with their offsets (`blankAfter` marks a paragraph's end). */
function linesOf (text: string): Line[] {
  const lines: Line[] = []
  let start = 0
  for (const raw of text.split('\n')) {
    const body = raw.replace(/\r$/u, '')
    if (body.trim() === '') {
      if (lines.length > 0) lines[lines.length - 1].blankAfter = true
    } else {
      lines.push({ text: body, start, end: start + body.length, blankAfter: false })
    }
    start += raw.length + 1
  }
  return lines
}

/** The token before a full stop, without the brackets or quotes that open it: "(cf" → "cf". */
const tokenBefore = (run: string, at: number): string => /[^\s(["“‘']*$/u.exec(run.slice(0, at))?.[0] ?? ''

/** The first word at `at`, past opening quotes and brackets. */
const wordAt = (run: string, at: number): string => /^["'“‘([]*([^\s"'”’)\]]*)/u.exec(run.slice(at))?.[1] ?? ''

const startsUpper = (word: string): boolean => /^\p{Lu}/u.test(word)
const startsLower = (word: string): boolean => /^\p{Ll}/u.test(word)
const startsNumeral = (word: string): boolean => /^[\p{N}$£€]/u.test(word) || /^[IVXLC]+\b/u.test(word)

/** Whether a full stop after `token` ends its sentence, given the next word and whether quotes or brackets close before it. */
function fullStopEnds (token: string, next: string, closed: boolean): boolean {
  const bare = token.replace(/[)\]"'”’]+$/u, '')
  const lower = bare.toLowerCase()
  if (closed) return !startsLower(next)
  if (NUMBERING.has(lower) && startsNumeral(next)) return false
  if (TITLES.has(lower) || INLINE.has(lower)) return false
  if (lower === 'etc') return !startsLower(next)
  const acronym = /^(?:\p{L}\.)+\p{L}$/u.test(bare) || /^\p{Lu}$/u.test(bare)
  if (MAY_END.has(lower) || CAPITALISED_MAY_END.has(bare) || acronym) {
    if (startsLower(next)) return false
    if (CAPITALISED_MAY_END.has(bare) && startsNumeral(next)) return false
    return !startsUpper(next) || OPENERS.has(next.toLowerCase())
  }
  // A number before lower case is an item named by number ("options 1. and 2. were rejected").
  return !(/^\d+$/u.test(bare) && startsLower(next))
}

/**
 * Where the sentences of one run of text (a paragraph's lines between headings and list lines) end:
 * offsets just past each end. A full stop, "!" or "?" (closing quotes and brackets with it) or an
 * ellipsis before more text ends a sentence unless the rules above say otherwise; a list number that
 * follows the one before it ("1. Foo 2. Bar") begins a sentence.
 */
function sentenceEnds (run: string): number[] {
  const ends: number[] = []
  let sentenceStart = 0
  let listNumber: number | undefined
  const mark = /(?:\.\s){2,}\.|\.{2,}|…+|[.!?]+/gu
  for (let m = mark.exec(run); m !== null; m = mark.exec(run)) {
    const afterMark = m.index + m[0].length
    const closers = /^["'”’)\]]*/u.exec(run.slice(afterMark))?.[0] ?? ''
    const space = /^\s+(?=\S)/u.exec(run.slice(afterMark + closers.length))?.[0]
    if (space === undefined) continue
    const nextAt = afterMark + closers.length + space.length
    const next = wordAt(run, nextAt)
    const token = tokenBefore(run, m.index)
    if (m[0] === '.' && /^\d{1,2}$/u.test(token)) {
      const tokenAt = m.index - token.length
      const before = run.slice(sentenceStart, tokenAt)
      if (before.trim() === '' || /:\s*$/u.test(before)) {
        listNumber = Number(token)
        continue
      }
      if (listNumber !== undefined && Number(token) === listNumber + 1 && /\s$/u.test(before)) {
        ends.push(tokenAt - (/\s+$/u.exec(before)?.[0].length ?? 0))
        sentenceStart = tokenAt
        listNumber += 1
        continue
      }
    }
    const ended = /[!?]/u.test(m[0])
      ? !(startsLower(next) && /["'”’]/u.test(closers))
      : m[0] !== '.'
        ? startsUpper(next) || /^["“‘]/u.test(run.slice(nextAt))
        : fullStopEnds(token, next, closers !== '')
    if (ended) {
      ends.push(afterMark + closers.length)
      sentenceStart = nextAt
    }
  }
  return ends
}

/** A segment of `text` from `start` to `end`, trimmed, its line breaks read as spaces. */
function segmentOf (text: string, start: number, end: number, heading: boolean): Segment | undefined {
  const slice = text.slice(start, end)
  const lead = /^\s*/u.exec(slice)?.[0].length ?? 0
  const trimmed = slice.trim()
  if (trimmed === '') return undefined
  return { text: trimmed.replace(/\s*\n\s*/gu, ' '), heading, start: start + lead, end: start + lead + trimmed.length }
}

/**
 * The sentences and headings of a text, in order. Lines are grouped into runs: a heading line stands
 * alone, a bulleted or numbered line starts a run, a blank line ends one; inside a run a line break is
 * a space (lines wrapped inside a sentence). `title`, when given, is the document's title: a first line
 * that repeats it is a heading whatever its case.
 */
export function segmentText (text: string, title?: string): Segment[] {
  const lines = linesOf(text)
  const segments: Segment[] = []
  let runStart: number | undefined
  let runEnd = 0
  const flush = (): void => {
    if (runStart === undefined) return
    let from = runStart
    for (const end of [...sentenceEnds(text.slice(runStart, runEnd)).map(e => runStart as number + e), runEnd]) {
      const segment = segmentOf(text, from, end, false)
      if (segment !== undefined) segments.push(segment)
      from = end
    }
    runStart = undefined
  }
  lines.forEach((line, i) => {
    if (isHeading(lines, i, title)) {
      flush()
      segments.push(segmentOf(text, line.start, line.end, true) as Segment)
      return
    }
    if (BULLET.test(line.text)) flush()
    runStart ??= line.start
    runEnd = line.end
    if (line.blankAfter) flush()
  })
  flush()
  return segments
}
