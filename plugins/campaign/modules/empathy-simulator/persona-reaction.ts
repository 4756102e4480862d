// The empathy simulator's method, a heuristic simulation and not a model of voters: how much a message
// addresses a persona's concerns (issue-lexicon cues), how the persona would feel about its clauses
// (opinion polarity, moved by what the message raises or cuts of what the persona pays or gains), the
// objections it would raise, and a quote-like reaction written from the templates (personas.ts loads them).
import { createHash } from 'node:crypto'
import { type LanguageEngine, isNegator, round, cueMatcher, ISSUE_LEXICON, type IssueMention, fillTemplate, foldTerm, opinionPolarity, splitClauses, words } from '../../module-kit.js'
import type { Persona, PersonaBook, Reaction } from './personas.js'

/** Weight of a priority concern (other concerns weigh 1). */
export const PRIORITY_WEIGHT = 2
/** How far a raise or a cut of what the persona pays or gains moves a clause's polarity. */
export const EFFECT_SHIFT = 0.5
/** Feeling at or beyond ± this is positive or negative (supportive or opposed). */
export const FEELING_BAND = 0.15
/** Most objections per persona. */
export const MAX_OBJECTIONS = 3
/** Words before a cue, then after it, searched for a raise or a cut. */
const LOOK_BEHIND = 4
const LOOK_AHEAD = 3

/** Words that raise what follows or precedes them, folded (foldTerm). */
export const UP_WORDS = new Set(['raise', 'raising', 'raised', 'increase', 'increasing', 'increased', 'hike', 'higher', 'boost', 'boosting', 'expand',
  'expanding', 'double', 'doubling', 'more', 'add', 'adding', 'extra', 'build', 'building', 'fund', 'funding', 'invest', 'investing', 'hire',
  'hiring', 'rise', 'rising', 'grow', 'growing', 'protect', 'protecting', 'strengthen', 'improve', 'improving', 'new', 'restore'])
/** Words that cut what follows or precedes them, folded. */
export const DOWN_WORDS = new Set(['cut', 'cutting', 'lower', 'lowering', 'reduce', 'reducing', 'reduced', 'freeze', 'freezing', 'slash', 'slashing',
  'eliminate', 'eliminating', 'scrap', 'scrapping', 'end', 'ending', 'close', 'closing', 'relief', 'less', 'fewer', 'drop', 'repeal', 'shrink',
  'remove', 'abolish', 'cap', 'capping', 'privatize', 'privatise'])

/** A raise or a cut of a `pays` or `gains` word: `said` is the words as written, `effect` +1 good for the persona, −1 bad. */
export interface Effect { cue: string, said: string, kind: 'pays' | 'gains', direction: 'up' | 'down', effect: 1 | -1, clause: string }

export interface ClauseFeeling { clause: string, concerns: string[], polarity: number, effect: number, weight: number, value: number }

export interface PersonaReaction {
  persona: Pick<Persona, 'id' | 'name' | 'description' | 'concerns' | 'priorities'>
  addressed: Array<{ concern: string, priority: boolean, count: number, cues: string[] }>
  /** Concerns the message leaves out, priorities first. */
  missing: string[]
  /** Σ weight of the addressed concerns / Σ weight of all, 0 to 1. */
  relevance: number
  /** Weighted mean of the clause values, −1 to 1 (0 when no clause touches the persona). */
  feeling: number
  feeling_label: 'positive' | 'negative' | 'neutral'
  reaction: Reaction
  clauses: ClauseFeeling[]
  effects: Effect[]
  objections: string[]
  quote: string
}

/** The cue words of a concern: the issue lexicon's, the book's `concernCues`, or the concern's own words and their -s plural. */
export function concernCues (book: Pick<PersonaBook, 'concernCues'>, concern: string): readonly string[] {
  const key = concern.trim().toLowerCase()
  return ISSUE_LEXICON[key] ?? book.concernCues[key] ?? [key, `${key}s`]
}

const foldedWords = (text: string): string[] => words(text.replace(/’/g, "'")).map(w => foldTerm(w.toLowerCase()))

/** Words a look-ahead does not cross: they start another clause or item ("homes near transit and freeze rents"). */
const AHEAD_STOPS = new Set(['and', 'or', 'but', 'while', 'so', 'then', 'than'])

/**
 * The direction of the nearest raise or cut word before the cue (up to LOOK_BEHIND words), else after
 * it (up to LOOK_AHEAD words, not past and / or / but…: "taxes will rise"); a negation in the two words
 * before the raise or cut word flips it.
 */
function directionAt (folded: readonly string[], start: number, end: number): 1 | -1 | 0 {
  const at = (i: number): 1 | -1 | 0 => {
    const d = UP_WORDS.has(folded[i]) ? 1 : DOWN_WORDS.has(folded[i]) ? -1 : 0
    if (d === 0) return 0
    const negated = [folded[i - 1], folded[i - 2]].some(w => w !== undefined && isNegator(w))
    return negated ? (-d as 1 | -1) : d
  }
  for (let i = start - 1; i >= Math.max(0, start - LOOK_BEHIND); i--) { const d = at(i); if (d !== 0) return d }
  for (let i = end; i < Math.min(folded.length, end + LOOK_AHEAD) && !AHEAD_STOPS.has(folded[i]); i++) { const d = at(i); if (d !== 0) return d }
  return 0
}

/** What a clause raises or cuts of the persona's `pays` and `gains` words (longest cues matched first, each word counted once), in text order. */
export function effectsIn (clause: string, persona: Pick<Persona, 'pays' | 'gains'>): Effect[] {
  const written = words(clause.replace(/’/g, "'"))
  const folded = written.map(w => foldTerm(w.toLowerCase()))
  const used = new Array<boolean>(folded.length).fill(false)
  const cues = [...persona.pays.map(cue => ({ cue, kind: 'pays' as const })), ...persona.gains.map(cue => ({ cue, kind: 'gains' as const }))]
    .map(c => ({ ...c, seq: foldedWords(c.cue) })).filter(c => c.seq.length > 0).sort((a, b) => b.seq.length - a.seq.length)
  const effects: Array<Effect & { at: number }> = []
  for (const { cue, kind, seq } of cues) {
    for (let i = 0; i + seq.length <= folded.length; i++) {
      if (!seq.every((w, j) => folded[i + j] === w && !used[i + j])) continue
      for (let j = 0; j < seq.length; j++) used[i + j] = true
      const direction = directionAt(folded, i, i + seq.length)
      if (direction === 0) continue
      effects.push({ at: i, cue, said: written.slice(i, i + seq.length).join(' ').toLowerCase(), kind, direction: direction === 1 ? 'up' : 'down', effect: (kind === 'pays' ? -direction : direction) as 1 | -1, clause })
    }
  }
  return effects.sort((a, b) => a.at - b.at).map(({ at: _at, ...e }) => e)
}

const isDirectionWord = (word: string): boolean => { const w = foldTerm(word.toLowerCase()); return UP_WORDS.has(w) || DOWN_WORDS.has(w) }
const withoutDirectionWords = (clause: string): string => clause.replace(/[\p{L}'’]+/gu, w => isDirectionWord(w) ? '' : w)

/** The template with its {{placeholders}} filled, or undefined when one has no value. */
const fill = (template: string, values: Readonly<Record<string, string | undefined>>): string | undefined => {
  const text = fillTemplate(template, Object.fromEntries(Object.entries(values).filter((e): e is [string, string] => e[1] !== undefined && e[1] !== '')))
  return /\{\{\w+\}\}/.test(text) ? undefined : text
}

/** The first template of the rotation (fixed by persona and message) whose placeholders can all be filled. */
function quoteOf (templates: readonly string[], seed: string, values: Readonly<Record<string, string | undefined>>): string {
  const start = createHash('sha256').update(seed).digest().readUInt32BE(0) % templates.length
  for (let i = 0; i < templates.length; i++) {
    const text = fill(templates[(start + i) % templates.length], values)
    if (text !== undefined) return text
  }
  return ''
}

/**
 * One persona's simulated reaction to `message`:
 * - addressed concerns: a cue of the concern occurs in the message (cueMatcher on the concern's cues);
 *   relevance = Σ weight addressed / Σ weight, priorities weighing PRIORITY_WEIGHT;
 * - each clause (stance.ts splitClauses of each sentence) that mentions a concern or raises or cuts a
 *   `pays`/`gains` word is valued clamp(polarity + EFFECT_SHIFT × sign(Σ effects), −1, 1), weighted
 *   PRIORITY_WEIGHT when it mentions a priority; feeling = the weighted mean;
 * - reaction: indifferent when no clause touches the persona, else supportive (feeling ≥ FEELING_BAND),
 *   opposed (≤ −FEELING_BAND) or mixed;
 * - objections: each harm (a pays word raised, a gains word cut), then each missing concern, at most
 *   MAX_OBJECTIONS; the quote: a reaction template of the book filled with the top addressed concern
 *   (for opposed, the word that harms) and the top missing one.
 */
export function simulateReaction (engine: LanguageEngine, book: PersonaBook, message: string, persona: Persona): PersonaReaction {
  const priorities = new Set(persona.priorities.map(p => p.toLowerCase()))
  const weight = (concern: string): number => priorities.has(concern.toLowerCase()) ? PRIORITY_WEIGHT : 1
  const match = cueMatcher(Object.fromEntries(persona.concerns.map(c => [c, concernCues(book, c)])))
  const mentioned = new Map<string, IssueMention>(match(message).map(m => [m.issue, m]))
  const addressed = persona.concerns.filter(c => mentioned.has(c))
    .map(c => ({ concern: c, priority: priorities.has(c.toLowerCase()), count: mentioned.get(c)?.count ?? 0, cues: mentioned.get(c)?.cues ?? [] }))
    .sort((a, b) => weight(b.concern) - weight(a.concern) || b.count - a.count)
  const missing = persona.concerns.filter(c => !mentioned.has(c)).sort((a, b) => weight(b) - weight(a))
  const total = persona.concerns.reduce((sum, c) => sum + weight(c), 0)
  const relevance = total === 0 ? 0 : round(addressed.reduce((sum, a) => sum + weight(a.concern), 0) / total)

  const clauses: ClauseFeeling[] = []
  const effects: Effect[] = []
  for (const sentence of engine.sentences(message)) {
    for (const clause of splitClauses(engine, sentence)) {
      const concerns = match(clause).map(m => m.issue)
      const found = effectsIn(clause, persona)
      if (concerns.length === 0 && found.length === 0) continue
      effects.push(...found)
      // The raise and cut words mean what the effects say: left out of the polarity ("cut" is negative in AFINN).
      const polarity = opinionPolarity(engine, found.length === 0 ? clause : withoutDirectionWords(clause))
      const effect = Math.sign(found.reduce((sum, e) => sum + e.effect, 0))
      const w = concerns.some(c => priorities.has(c.toLowerCase())) ? PRIORITY_WEIGHT : 1
      clauses.push({ clause, concerns, polarity, effect, weight: w, value: round(Math.max(-1, Math.min(1, polarity + EFFECT_SHIFT * effect))) })
    }
  }
  const weights = clauses.reduce((sum, c) => sum + c.weight, 0)
  const feeling = weights === 0 ? 0 : round(clauses.reduce((sum, c) => sum + c.weight * c.value, 0) / weights)
  const feelingLabel = feeling >= FEELING_BAND ? 'positive' : feeling <= -FEELING_BAND ? 'negative' : 'neutral'
  const reaction: Reaction = clauses.length === 0 ? 'indifferent' : feelingLabel === 'positive' ? 'supportive' : feelingLabel === 'negative' ? 'opposed' : 'mixed'

  const harms = effects.filter(e => e.effect < 0).map(e => fill(book.harmObjections[e.kind], { cue: e.said }) ?? '')
  const asks = missing.map(c => fill(book.objections[c.toLowerCase()] ?? book.objections['*'], { concern: c }) ?? '')
  const objections = [...new Set([...harms, ...asks])].filter(o => o !== '').slice(0, MAX_OBJECTIONS)
  const harmed = effects.find(e => e.effect < 0)?.said
  const topic = reaction === 'opposed' && harmed !== undefined ? harmed : addressed[0]?.concern ?? effects[0]?.said
  const quote = quoteOf(book.reactions[reaction], `${persona.id}\n${message}`, { topic, missing: missing[0] })

  return {
    persona: { id: persona.id, name: persona.name, description: persona.description, concerns: persona.concerns, priorities: persona.priorities },
    addressed,
    missing,
    relevance,
    feeling,
    feeling_label: feelingLabel,
    reaction,
    clauses,
    effects,
    objections,
    quote
  }
}
