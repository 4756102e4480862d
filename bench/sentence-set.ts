// The labelled sentence set of test/fixtures/sentences/boundaries.txt, read into texts with their
// sentences and headings, and the scoring of a segmenter on it: texts segmented exactly right, and
// the precision and recall of its sentence boundaries and of its headings. Shared by bench/sentences.ts
// (the figures in docs/benchmarks.md) and the language test that keeps the held-out floor.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { PACKAGE_ROOT } from '../kernel/paths.js'

export const SENTENCE_SET = join(PACKAGE_ROOT, 'test', 'fixtures', 'sentences', 'boundaries.txt')

export interface LabelledText {
  /** Its line in the file, for messages. */
  line: number
  category: string
  /** Every fourth text (the 4th, 8th, 12th… of the file) is held out: never read while writing rules. */
  heldOut: boolean
  text: string
  /** The sentences and headings, whitespace collapsed. */
  segments: string[]
  headings: boolean[]
  /** Line breaks inside a sentence (wrapped lines). */
  softBreaks: number
}

/** " | " a boundary at a space, " |n " at a line break, " |nn " at a blank line, " ~n " a line break inside a sentence; "^" opens a heading. */
const MARKERS = / (\|nn|\|n|\||~n) /u
const SEPARATORS: Readonly<Record<string, string>> = { '|': ' ', '|n': '\n', '|nn': '\n\n', '~n': '\n' }

export function readSentenceSet (file = SENTENCE_SET): LabelledText[] {
  const texts: LabelledText[] = []
  let category = ''
  readFileSync(file, 'utf8').split('\n').forEach((raw, i) => {
    if (raw.trim() === '' || raw.startsWith(';;')) return
    const heading = /^\[(.+)\]$/u.exec(raw.trim())
    if (heading !== null) {
      category = heading[1]
      return
    }
    const parts = raw.split(MARKERS)
    let text = ''
    const segments: string[] = []
    const headings: boolean[] = []
    let open = true
    let softBreaks = 0
    for (let p = 0; p < parts.length; p += 2) {
      const isHeading = open && parts[p].startsWith('^')
      const piece = isHeading ? parts[p].slice(1) : parts[p]
      text += piece
      if (open) {
        segments.push(piece)
        headings.push(isHeading)
      } else {
        segments[segments.length - 1] += ` ${piece}`
      }
      const marker = parts[p + 1]
      if (marker !== undefined) text += SEPARATORS[marker]
      open = marker !== '~n'
      if (!open) softBreaks += 1
    }
    texts.push({ line: i + 1, category, heldOut: (texts.length + 1) % 4 === 0, text, segments: segments.map(collapse), headings, softBreaks })
  })
  return texts
}

const collapse = (s: string): string => s.replace(/\s+/gu, ' ').trim()

/** Where each segment but the last ends, counted in characters that are not white space (so that any spacing compares). */
function boundaries (segments: readonly string[]): number[] {
  const out: number[] = []
  let at = 0
  for (const s of segments.slice(0, -1)) {
    at += s.replace(/\s+/gu, '').length
    out.push(at)
  }
  return out
}

export interface SegmenterScore {
  texts: number
  exact: number
  /** Boundaries in the labels, found by the segmenter, and found that are labelled. */
  boundaries: { labelled: number, found: number, right: number }
  /** Places a full stop, "!", "?" or ellipsis, or a line break, is labelled as no boundary. */
  nonBoundaries: number
  headings: { labelled: number, found: number, right: number }
  wrong: Array<{ line: number, expected: string[], got: string[] }>
}

/** A full stop, "!", "?" or ellipsis (closing quotes and brackets with it) before more of the same sentence. */
const INNER_MARKS = /(?:(?:\.\s){2,}\.|\.{2,}|…+|[.!?]+)["'”’)\]]*\s/gu

export interface Segmented { text: string, heading?: boolean }

export function scoreSegmenter (texts: readonly LabelledText[], segment: (text: string) => Segmented[]): SegmenterScore {
  const score: SegmenterScore = { texts: texts.length, exact: 0, boundaries: { labelled: 0, found: 0, right: 0 }, nonBoundaries: 0, headings: { labelled: 0, found: 0, right: 0 }, wrong: [] }
  for (const t of texts) {
    const got = segment(t.text).map(s => ({ text: collapse(s.text), heading: s.heading === true })).filter(s => s.text !== '')
    const gold = boundaries(t.segments)
    const found = boundaries(got.map(s => s.text))
    score.boundaries.labelled += gold.length
    score.boundaries.found += found.length
    score.boundaries.right += found.filter(b => gold.includes(b)).length
    score.nonBoundaries += t.softBreaks + t.segments.reduce((n, s) => n + (s.match(INNER_MARKS)?.length ?? 0), 0)
    const goldHeadings = t.segments.filter((_, i) => t.headings[i])
    const gotHeadings = got.filter(s => s.heading).map(s => s.text)
    score.headings.labelled += goldHeadings.length
    score.headings.found += gotHeadings.length
    score.headings.right += gotHeadings.filter(h => goldHeadings.includes(h)).length
    const exact = got.length === t.segments.length && got.every((s, i) => s.text === t.segments[i] && s.heading === t.headings[i])
    if (exact) score.exact += 1
    else score.wrong.push({ line: t.line, expected: t.segments.map((s, i) => t.headings[i] ? `^${s}` : s), got: got.map(s => s.heading ? `^${s.text}` : s.text) })
  }
  return score
}


export const precision = (b: { found: number, right: number }): number => b.found === 0 ? 1 : b.right / b.found
export const recall = (b: { labelled: number, right: number }): number => b.labelled === 0 ? 1 : b.right / b.labelled
