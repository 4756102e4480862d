// The campaign glossary (data/campaign-glossary.toml) applied to a text: its phrases translated whole,
// people's names, numbers and punctuation kept, every other run of words left as written and marked
// untranslated. translate-content uses it without a generative provider, and sends its terms to one.
import { Type } from '../../../../kernel/schema.js'
import { round, loadDataFile, escapeRegExp } from '../../module-kit.js'

const Phrase = Type.Union([Type.String({ minLength: 1 }), Type.Array(Type.String({ minLength: 1 }), { minItems: 1 })])
export const GlossaryFile = Type.Object({
  languages: Type.Array(Type.String({ pattern: '^[a-z]{2}$' }), { minItems: 2 }),
  entry: Type.Array(Type.Record(Type.String({ pattern: '^[a-z]{2}$' }), Phrase), { minItems: 1 })
})

/** Marks around a run of words the glossary does not cover, in `translation`. */
export const UNTRANSLATED_OPEN = '⟦'
export const UNTRANSLATED_CLOSE = '⟧'

export interface Segment {
  /** The source text of the segment, as written. */
  text: string
  /** glossary: a phrase translated; kept: a name, number, punctuation or space carried over; untranslated: words the glossary does not cover. */
  kind: 'glossary' | 'kept' | 'untranslated'
  /** What the translation holds for it. */
  output: string
}

export interface GlossaryTranslation {
  translation: string
  translated: 'full' | 'partial' | 'none'
  /** Words of glossary phrases / (those + untranslated words); names are not counted. 3 decimals. */
  coverage: number
  segments: Segment[]
  applied: Array<{ source: string, target: string }>
  untranslated: string[]
}

interface Span { start: number, end: number, kind: 'glossary' | 'kept', output: string }

/** A phrase as a pattern: whole words, any case, any run of spaces between words, either apostrophe. */
const phrasePattern = (phrase: string): RegExp => new RegExp(
  `(?<![\\p{L}\\p{N}])${escapeRegExp(phrase).replace(/\s+/g, '\\s+').replace(/['’]/g, '[\'’]')}(?![\\p{L}\\p{N}])`, 'giu')

/** A run of words with what may sit between them (spaces, digits, hyphens, apostrophes), starting with a letter. */
const WORD_RUN = /\p{L}(?:[\p{L}\p{N}'’\- ]*[\p{L}\p{N}])?/gu
const wordCount = (text: string): number => (text.match(/\p{L}+/gu) ?? []).length

/** Capitalise the target when the source phrase starts with a capital (Title Case, sentence start). */
function caseLike (source: string, target: string): string {
  const first = /\p{L}/u.exec(source)?.[0]
  if (first === undefined || first === first.toLowerCase()) return target
  return target.replace(/\p{L}/u, letter => letter.toUpperCase())
}

export class Glossary {
  readonly languages: readonly string[]
  /** Per entry, per language, its spellings (the first is written). */
  readonly entries: ReadonlyArray<Readonly<Record<string, readonly string[]>>>

  constructor (file: { languages: string[], entry: Array<Record<string, string | string[]>> }) {
    this.languages = file.languages
    this.entries = file.entry.map((entry, i) => {
      const missing = file.languages.find(language => entry[language] === undefined)
      if (missing !== undefined) throw new Error(`campaign glossary: entry ${i + 1} has no "${missing}" phrase`)
      return Object.fromEntries(file.languages.map(language => [language, ([] as string[]).concat(entry[language])]))
    })
  }

  static load (file?: string): Glossary {
    return new Glossary(loadDataFile('campaign-glossary', GlossaryFile, file))
  }

  covers (language: string): boolean {
    return this.languages.includes(language)
  }

  /** The glossary phrases found in `text` (language `source`), longest first, without overlaps, with their `target` phrase. */
  find (text: string, source: string, target: string): Array<{ start: number, end: number, source: string, target: string }> {
    const variants = this.entries.flatMap(entry => entry[source].map(phrase => ({ phrase, target: entry[target][0] })))
      .sort((a, b) => b.phrase.length - a.phrase.length)
    const found: Array<{ start: number, end: number, source: string, target: string }> = []
    for (const { phrase, target: output } of variants) {
      for (const match of text.matchAll(phrasePattern(phrase))) {
        const start = match.index
        const end = start + match[0].length
        if (found.some(f => start < f.end && f.start < end)) continue
        found.push({ start, end, source: match[0], target: caseLike(match[0], output) })
      }
    }
    return found.sort((a, b) => a.start - b.start)
  }

  /**
   * `text` (language `source`) in `target` as far as the glossary goes: its phrases translated, the
   * `names` (people's, kept as written) and everything without letters carried over, the other runs
   * of words left as written between ⟦ ⟧.
   */
  translate (text: string, source: string, target: string, names: readonly string[] = []): GlossaryTranslation {
    const spans: Span[] = this.find(text, source, target).map(f => ({ start: f.start, end: f.end, kind: 'glossary', output: f.target }))
    for (const name of [...names].sort((a, b) => b.length - a.length)) {
      for (const match of text.matchAll(phrasePattern(name))) {
        const start = match.index
        const end = start + match[0].length
        if (!spans.some(s => start < s.end && s.start < end)) spans.push({ start, end, kind: 'kept', output: match[0] })
      }
    }
    spans.sort((a, b) => a.start - b.start)
    const segments: Segment[] = []
    const gap = (from: number, to: number): void => {
      const piece = text.slice(from, to)
      let at = 0
      for (const run of piece.matchAll(WORD_RUN)) {
        if (run.index > at) segments.push({ text: piece.slice(at, run.index), kind: 'kept', output: piece.slice(at, run.index) })
        segments.push({ text: run[0], kind: 'untranslated', output: `${UNTRANSLATED_OPEN}${run[0]}${UNTRANSLATED_CLOSE}` })
        at = run.index + run[0].length
      }
      if (at < piece.length) segments.push({ text: piece.slice(at), kind: 'kept', output: piece.slice(at) })
    }
    let at = 0
    for (const span of spans) {
      gap(at, span.start)
      segments.push({ text: text.slice(span.start, span.end), kind: span.kind, output: span.output })
      at = span.end
    }
    gap(at, text.length)
    const covered = segments.filter(s => s.kind === 'glossary').reduce((n, s) => n + wordCount(s.text), 0)
    const missing = segments.filter(s => s.kind === 'untranslated')
    const uncovered = missing.reduce((n, s) => n + wordCount(s.text), 0)
    return {
      translation: segments.map(s => s.output).join(''),
      translated: missing.length === 0 ? 'full' : covered === 0 ? 'none' : 'partial',
      coverage: covered + uncovered === 0 ? 1 : round(covered / (covered + uncovered)),
      segments,
      applied: segments.filter(s => s.kind === 'glossary').map(s => ({ source: s.text, target: s.output })),
      untranslated: missing.map(s => s.text)
    }
  }
}
