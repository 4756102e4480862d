// The policy-diff method: two policy texts split into clauses (the regulatory monitor's sections and
// clauses), clauses aligned greedily by similarity, each classified added / removed / changed /
// unchanged, and for a changed clause its word changes and what changed in substance: figures, modal
// strength (may → must), negation and stance.
import { type LanguageEngine, cosine, round, termCounts, negatedTerms, AMOUNT, classifyClause, SECTION_LINE, splitLegalClauses, splitSections, type ProvisionKind, type Section, opinionPolarity, stanceSign, matchesOf } from '../../module-kit.js'

/** Two clauses this similar (cosine of their term counts) or more may be aligned. */
export const MATCH_SIMILARITY = 0.5
/** A stance moving this much (or changing sign) is a change in substance. */
export const STANCE_CHANGE = 0.3
/** Word diffs are computed up to this many token pairs (n × m); beyond, the clause counts as rewritten whole. */
const MAX_DIFF_CELLS = 250_000

export interface PolicyClause { index: number, section: string, text: string }

export interface WordOp { op: '=' | '-' | '+', text: string }

export type ModalKind = ProvisionKind | 'recommendation'
export interface Modal { kind: ModalKind, modal: string }

export interface Substance {
  /** Figures (amounts, percentages, dates, periods, numbers) of one side only. */
  figures?: { before: string[], after: string[] }
  modal?: { before: Modal | null, after: Modal | null, change: 'strengthened' | 'weakened' | 'reversed' | 'added' | 'removed' }
  /** Terms negated in the new clause and not in the old (negated), and the reverse (unnegated). */
  negation?: { negated: string[], unnegated: string[] }
  stance?: { before: number, after: number, change: 'more positive' | 'more negative' }
}

export interface ClauseChange {
  status: 'added' | 'removed' | 'changed' | 'unchanged'
  section_a: string | null
  section_b: string | null
  a: string | null
  b: string | null
  similarity: number | null
  words: WordOp[]
  removed_words: string[]
  added_words: string[]
  substance: Substance
  substantive: boolean
}

export interface PolicyDiff {
  clauses: ClauseChange[]
  counts: { clauses_a: number, clauses_b: number, added: number, removed: number, changed: number, unchanged: number, substantive: number }
  /** Cosine of the two whole texts' term counts. */
  similarity: number
}

/** A section's title: a first sentence of at most this many words, without a modal verb, followed by more text. */
const TITLE_WORDS = 5

/**
 * A section opened by a marker ("SECTION 2.") as `marker title` and its text: the title, when there is
 * one, is not a clause. The same whether the title sits on the marker's line or runs on with the text
 * (as in a knowledge-base passage, where lines are joined).
 */
function titled (section: Section): Section {
  const marker = SECTION_LINE.exec(section.heading)
  if (marker === null) return section
  const text = `${section.heading.slice(marker[0].length).trim()} ${section.body}`.trim()
  const first = /^[^.;:!?]+[.;:!?]/.exec(text)?.[0]
  const isTitle = first !== undefined && first.length < text.length && first.trim().split(/\s+/).length <= TITLE_WORDS && modalOf(first) === null
  return isTitle
    ? { heading: `${marker[0].trim()} ${first.trim()}`, body: text.slice(first.length).trim() }
    : { heading: marker[0].trim(), body: text }
}

/** The clauses of a policy: the regulatory monitor's sections (or paragraphs) and clauses, numbered; section titles are not clauses. */
export function policyClauses (engine: LanguageEngine, text: string): PolicyClause[] {
  return splitLegalClauses(engine, splitSections(text).map(titled)).map((c, index) => ({ index, section: c.section, text: c.text }))
}

const collapse = (text: string): string => text.replace(/\s+/g, ' ').trim()
/** A token as compared: lower case, without the punctuation around it. */
const bare = (token: string): string => token.toLowerCase().replace(/^[^\p{L}\p{N}$€£%]+|[^\p{L}\p{N}%]+$/gu, '')

/** The words of `b` against `a`: a longest common subsequence of whitespace-separated tokens, compared bare. */
export function wordDiff (a: string, b: string): WordOp[] {
  const x = collapse(a).split(' ').filter(t => t !== '')
  const y = collapse(b).split(' ').filter(t => t !== '')
  if (x.length * y.length > MAX_DIFF_CELLS) return [...x.map(text => ({ op: '-' as const, text })), ...y.map(text => ({ op: '+' as const, text }))]
  const bx = x.map(bare)
  const by = y.map(bare)
  // lengths[i][j]: the LCS of x[i…] and y[j…].
  const lengths = Array.from({ length: x.length + 1 }, () => new Array<number>(y.length + 1).fill(0))
  for (let i = x.length - 1; i >= 0; i--) {
    for (let j = y.length - 1; j >= 0; j--) lengths[i][j] = bx[i] === by[j] ? lengths[i + 1][j + 1] + 1 : Math.max(lengths[i + 1][j], lengths[i][j + 1])
  }
  const ops: WordOp[] = []
  const push = (op: WordOp['op'], text: string): void => {
    const last = ops[ops.length - 1]
    if (last?.op === op) last.text += ` ${text}`
    else ops.push({ op, text })
  }
  let i = 0
  let j = 0
  while (i < x.length || j < y.length) {
    if (i < x.length && j < y.length && bx[i] === by[j]) { push('=', y[j]); i++; j++ } else if (i < x.length && (j === y.length || lengths[i + 1][j] >= lengths[i][j + 1])) { push('-', x[i]); i++ } else { push('+', y[j]); j++ }
  }
  return ops
}

const NUMBER_WORDS = 'one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|fifty|sixty|ninety|hundred'
const MONTHS = 'january|february|march|april|may|june|july|august|september|october|november|december'
/** Dates, percentages, periods and plain numbers (amounts are AMOUNT, matched first). */
const FIGURE = new RegExp([
  `\\b(?:${MONTHS})\\s+\\d{1,2}(?:st|nd|rd|th)?(?:,?\\s+\\d{4})?\\b`,
  `\\b\\d{1,2}(?:st|nd|rd|th)?\\s+(?:of\\s+)?(?:${MONTHS})(?:,?\\s+\\d{4})?\\b`,
  '\\b\\d{4}-\\d{2}-\\d{2}\\b',
  '\\b\\d+(?:[.,]\\d+)?\\s?(?:%|percent\\b)',
  `\\b(?:\\d[\\d,]*|${NUMBER_WORDS})\\s+(?:calendar\\s+|business\\s+)?(?:days?|weeks?|months?|years?|hours?)\\b`,
  '\\b\\d[\\d,]*(?:\\.\\d+)?\\b'
].join('|'), 'gi')

/** The figures of a clause: amounts first, then dates, percentages, periods and numbers not inside them. */
export function figuresOf (text: string): string[] {
  const amounts = matchesOf(text, AMOUNT).map(a => a.trim())
  let rest = text
  for (const amount of amounts) rest = rest.replace(amount, ' ')
  return [...amounts, ...matchesOf(rest, FIGURE).map(f => f.trim())].map(f => f.toLowerCase().replace(/\s+/g, ' '))
}

/** Items of `a` not in `b`, as multisets. */
function minus (a: readonly string[], b: readonly string[]): string[] {
  const left = [...b]
  return a.filter(item => {
    const at = left.indexOf(item)
    if (at === -1) return true
    left.splice(at, 1)
    return false
  })
}

const RECOMMENDING = /\b(should|ought to|is encouraged to|are encouraged to|is expected to|are expected to)\b/i
/** Strength of a modal: 0 none, 1 permission, 2 recommendation, 3 obligation; prohibition stands apart. */
const STRENGTH: Record<ModalKind, number> = { permission: 1, recommendation: 2, obligation: 3, prohibition: 3 }

/** The clause's modal: the regulatory monitor's classification, or a recommendation (should, ought to…). */
export function modalOf (text: string): Modal | null {
  const provision = classifyClause({ section: '', text })
  const recommended = RECOMMENDING.exec(text)
  if (provision !== undefined && (recommended === null || text.indexOf(provision.modal) <= recommended.index)) return { kind: provision.kind, modal: provision.modal.toLowerCase() }
  return recommended === null ? null : { kind: 'recommendation', modal: recommended[1].toLowerCase() }
}

function modalChange (before: Modal | null, after: Modal | null): Substance['modal'] {
  if (before?.kind === after?.kind) return undefined
  if (before === null) return { before, after, change: 'added' }
  if (after === null) return { before, after, change: 'removed' }
  if ((before.kind === 'prohibition') !== (after.kind === 'prohibition')) return { before, after, change: 'reversed' }
  return { before, after, change: STRENGTH[after.kind] > STRENGTH[before.kind] ? 'strengthened' : 'weakened' }
}

/** What changed in substance between two aligned clauses. */
export function substanceOf (engine: LanguageEngine, a: string, b: string): Substance {
  const substance: Substance = {}
  const [fa, fb] = [figuresOf(a), figuresOf(b)]
  const before = minus(fa, fb)
  const after = minus(fb, fa)
  if (before.length > 0 || after.length > 0) substance.figures = { before, after }
  const modal = modalChange(modalOf(a), modalOf(b))
  if (modal !== undefined) substance.modal = modal
  const [na, nb] = [negatedTerms(engine, a), negatedTerms(engine, b)]
  const negated = [...nb].filter(t => !na.has(t))
  const unnegated = [...na].filter(t => !nb.has(t))
  if (negated.length > 0 || unnegated.length > 0) substance.negation = { negated, unnegated }
  const [sa, sb] = [opinionPolarity(engine, a), opinionPolarity(engine, b)]
  if (stanceSign(sa) !== stanceSign(sb) || Math.abs(sb - sa) >= STANCE_CHANGE) substance.stance = { before: sa, after: sb, change: sb > sa ? 'more positive' : 'more negative' }
  return substance
}

/**
 * Greedy alignment: every pair of clauses sharing a term with similarity ≥ MATCH_SIMILARITY, best
 * first (ties: the closer relative position, then text order), each clause used once.
 */
export function alignClauses (engine: LanguageEngine, a: readonly PolicyClause[], b: readonly PolicyClause[]): Map<number, { j: number, similarity: number }> {
  const vectors = (clauses: readonly PolicyClause[]): Array<Map<string, number>> => clauses.map(c => termCounts(engine.terms(c.text)))
  const [va, vb] = [vectors(a), vectors(b)]
  const holders = new Map<string, number[]>()
  va.forEach((vector, i) => { for (const term of vector.keys()) holders.set(term, [...(holders.get(term) ?? []), i]) })
  const pairs: Array<{ i: number, j: number, similarity: number, offset: number }> = []
  vb.forEach((vector, j) => {
    const seen = new Set<number>()
    for (const term of vector.keys()) {
      for (const i of holders.get(term) ?? []) {
        if (seen.has(i)) continue
        seen.add(i)
        const similarity = collapse(a[i].text) === collapse(b[j].text) ? 1 : cosine(va[i], vector)
        if (similarity >= MATCH_SIMILARITY) pairs.push({ i, j, similarity, offset: Math.abs(i / Math.max(1, a.length) - j / Math.max(1, b.length)) })
      }
    }
  })
  pairs.sort((x, y) => y.similarity - x.similarity || x.offset - y.offset || x.i - y.i || x.j - y.j)
  const matched = new Map<number, { j: number, similarity: number }>()
  const usedB = new Set<number>()
  for (const pair of pairs) {
    if (matched.has(pair.i) || usedB.has(pair.j)) continue
    matched.set(pair.i, { j: pair.j, similarity: round(pair.similarity) })
    usedB.add(pair.j)
  }
  return matched
}

const EMPTY: Pick<ClauseChange, 'words' | 'removed_words' | 'added_words' | 'substance' | 'substantive'> = { words: [], removed_words: [], added_words: [], substance: {}, substantive: false }

/**
 * The clause diff of `b` against `a`, in the order of `b`; a removed clause follows the clause of `b`
 * aligned with the closest clause before it in `a` (or comes first).
 */
export function diffPolicies (engine: LanguageEngine, textA: string, textB: string): PolicyDiff {
  const a = policyClauses(engine, textA)
  const b = policyClauses(engine, textB)
  const matched = alignClauses(engine, a, b)
  const byB = new Map([...matched].map(([i, m]) => [m.j, { i, similarity: m.similarity }]))
  const placed: Array<{ at: number, change: ClauseChange }> = []
  b.forEach((clause, j) => {
    const match = byB.get(j)
    if (match === undefined) {
      placed.push({ at: j, change: { status: 'added', section_a: null, section_b: clause.section, a: null, b: clause.text, similarity: null, ...EMPTY } })
      return
    }
    const old = a[match.i]
    const base = { section_a: old.section, section_b: clause.section, a: old.text, b: clause.text, similarity: match.similarity }
    if (collapse(old.text) === collapse(clause.text)) {
      placed.push({ at: j, change: { status: 'unchanged', ...base, ...EMPTY } })
      return
    }
    const words = wordDiff(old.text, clause.text)
    const substance = substanceOf(engine, old.text, clause.text)
    placed.push({
      at: j,
      change: {
        status: 'changed',
        ...base,
        words,
        removed_words: words.filter(w => w.op === '-').map(w => w.text),
        added_words: words.filter(w => w.op === '+').map(w => w.text),
        substance,
        substantive: Object.keys(substance).length > 0
      }
    })
  })
  a.forEach((clause, i) => {
    if (matched.has(i)) return
    let before = -1
    for (let k = i - 1; k >= 0 && before === -1; k--) before = matched.get(k)?.j ?? -1
    placed.push({ at: before + 0.5, change: { status: 'removed', section_a: clause.section, section_b: null, a: clause.text, b: null, similarity: null, ...EMPTY } })
  })
  const clauses = placed.map((p, order) => ({ ...p, order })).sort((x, y) => x.at - y.at || x.order - y.order).map(p => p.change)
  const count = (status: ClauseChange['status']): number => clauses.filter(c => c.status === status).length
  return {
    clauses,
    counts: {
      clauses_a: a.length,
      clauses_b: b.length,
      added: count('added'),
      removed: count('removed'),
      changed: count('changed'),
      unchanged: count('unchanged'),
      substantive: clauses.filter(c => c.substantive).length
    },
    similarity: round(cosine(termCounts(engine.terms(textA)), termCounts(engine.terms(textB))))
  }
}

const list = (items: readonly string[]): string => items.length === 0 ? 'nothing' : items.join(', ')

/** What changed in substance in a clause, e.g. `“may” → “must” (strengthened); $200 → $500`. */
export function substanceLine (substance: Substance): string {
  const parts: string[] = []
  const { modal, figures, negation, stance } = substance
  if (modal !== undefined) parts.push(`“${modal.before?.modal ?? 'no modal'}” → “${modal.after?.modal ?? 'no modal'}” (${modal.change})`)
  if (figures !== undefined) parts.push(`${list(figures.before)} → ${list(figures.after)}`)
  if (negation !== undefined && negation.negated.length > 0) parts.push(`now negates ${negation.negated.join(', ')}`)
  if (negation !== undefined && negation.unnegated.length > 0) parts.push(`no longer negates ${negation.unnegated.join(', ')}`)
  if (stance !== undefined) parts.push(`stance ${stance.before} → ${stance.after} (${stance.change})`)
  return parts.join('; ')
}

/** One line per clause changed in substance, with its section: `SECTION 3. Disclosure. — “may” → “must” (strengthened)`. */
export const substanceLines = (diff: PolicyDiff): string[] =>
  diff.clauses.filter(c => c.substantive).map(c => `${c.section_b ?? c.section_a ?? ''} — ${substanceLine(c.substance)}`)
