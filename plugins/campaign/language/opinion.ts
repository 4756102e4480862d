// The opinion scorer of the local engine: AFINN-165 word scores with the campaign lexicon
// (opinion-lexicon.ts), read in context: names, phrases, burdens and goods raised or lowered, critics reported,
// hedged claims, negation ("not realistic", "no plan") and contrast ("…, but…" weighting the clause
// after it). Deterministic and word-based: the rules are in docs/campaign.md, "Language engine".
import { BURDEN_FIGHTS, BURDENS, CLAUSE_NEGATORS, COMPARATIVES, CRITICISM_VERBS, CRITICS, DECREASES, DENIALS, EXPECTATIONS, EXPECTED, FAILURES, GOODS, HEDGES, INCREASES, NEGATION_SKIPS, NEGATORS,
  PHRASE_SCORES, REPORTING_VERBS, TOPIC_MARKERS, WORD_SCORES } from './opinion-lexicon.js'

export interface OpinionScore {
  score: number
  positive_words: string[]
  negative_words: string[]
}

/** A word or phrase of a sentence, with its score once read in context. */
interface Unit {
  text: string
  /** Lower-cased words, one or more (a phrase). */
  key: string
  score: number
  /** A capitalised word inside a sentence: part of a name ("Department of Justice", "Safe Routes"), never an opinion. */
  name: boolean
  /** A clause break (comma, semicolon, colon, dash, bracket, quote) follows this unit. */
  breakAfter: boolean
}

/** A negated opinion word keeps this share of its score, sign flipped (VADER's −0.74, rounded). */
export const NEGATION_FACTOR = -0.75
/** An expected thing negated ("no plan", "never consulted"), a denial at a clause's end ("it is not"), a critic's frame. */
export const FAULT_SCORE = -2
/** A burden or a good raised or lowered ("raise taxes", "crime fell", "cut funding"). */
export const DIRECTION_SCORE = 2
/** A "no one … better than" comparison. */
export const COMPARISON_SCORE = 2
/** Weights of the clause before a contrast (a concession) and of the clause after it. */
export const CONCESSION_WEIGHT = 0.5
export const MAIN_WEIGHT = 1.5
/** How far (in words looked at) a hedge or a critic's verb is looked for. */
const HEDGE_REACH = 3
const CRITIC_REACH = 3
/** How far apart a burden or a good and the verb raising or lowering it may be, in units. */
const DIRECTION_REACH = 5
const LONGEST_PHRASE = 4

const PHRASES = new Set([...Object.keys(PHRASE_SCORES), ...NEGATORS, ...CLAUSE_NEGATORS, ...HEDGES, ...DENIALS].filter(p => p.includes(' ')))
/** Modal verbs: a burden or a good is never raised or lowered across one ("the cuts will put lives at risk"). */
const MODALS = new Set(['will', 'would', 'could', 'should', 'may', 'might', 'must', 'can'])

/**
 * The score of a word the lexicons lack, read from its stem: "helped" as "help", "protects" as
 * "protect", "funded" as "fund" (the lexicons list a base form more often than its inflections).
 */
function stemScore (key: string, lexicon: Readonly<Record<string, number>>): number | undefined {
  const stems = /^\p{L}{3,}(?:ed|es|s|ing)$/u.test(key)
    ? [key.replace(/(?:ed|ing)$/, ''), key.replace(/(?:d|ing)$/, '') + (key.endsWith('ing') ? 'e' : ''), key.replace(/e?s$/, ''), key.replace(/s$/, '')]
    : []
  for (const stem of stems) {
    const score = WORD_SCORES[stem] ?? lexicon[stem]
    if (stem !== key && score !== undefined) return score
  }
  return undefined
}

/** Whether a lower-cased word or phrase negates what follows it. */
export const isNegator = (key: string): boolean => NEGATORS.has(key) || /n['’]t$/.test(key)

/**
 * The combined score of a concession and the main clause that contrasts with it: the main clause
 * weighs three times as much and, when the two disagree, alone decides ("impressive, yet empty");
 * a main clause without opinion turns the concession around ("She promised a vote, yet nothing
 * happened"; "Polished, but it offered nothing new").
 */
function contrasted (concession: number, main: number): number {
  if (main === 0) return -CONCESSION_WEIGHT * concession
  return Math.sign(main) === Math.sign(concession) ? CONCESSION_WEIGHT * concession + MAIN_WEIGHT * main : MAIN_WEIGHT * main
}

/** Whether a sentence opens by contrasting with the one before ("However, …", "But …", "Yet …", "Still, …"). */
export const opensWithContrast = (sentence: string): boolean => /^\W*(?:(?:however|still|nevertheless|nonetheless)\s*,|but\b|yet\b)/i.test(sentence)

/** Whether a sentence turns to the other side of what came before: a contrast, "At the same time", "On the other hand", ", however,". */
export const turnsFromPrevious = (sentence: string): boolean =>
  opensWithContrast(sentence) || /^\W*(?:at the same time|on the other hand|meanwhile)\b|,\s*however\s*,/i.test(sentence)

/** Words, phrases and clause breaks of a sentence, as units (phrases read first, longest first). */
function unitsOf (sentence: string, afinn: Readonly<Record<string, number>>): Unit[] {
  const tokens = [...sentence.matchAll(/([\p{L}\p{N}]+(?:['’-][\p{L}\p{N}]+)*)|([,;:()"“”—–]|\s-\s)/gu)]
  const units: Unit[] = []
  let initial = true
  for (let i = 0; i < tokens.length; i++) {
    if (tokens[i][1] === undefined) {
      if (units.length > 0) units[units.length - 1].breakAfter = true
      initial ||= /["“(]/.test(tokens[i][0])
      continue
    }
    let length = Math.min(LONGEST_PHRASE, tokens.length - i)
    for (; length > 1; length--) {
      const run = tokens.slice(i, i + length)
      if (run.every(t => t[1] !== undefined) && PHRASES.has(run.map(t => t[1].toLowerCase().replace(/’/g, "'")).join(' '))) break
    }
    const raw = tokens.slice(i, i + length).map(t => t[1]).join(' ')
    const key = raw.toLowerCase().replace(/’/g, "'")
    // A name: capitalised inside a sentence, or opening it before another capitalised word ("Grace Okafor").
    const capitalised = (word: string | undefined): boolean => word !== undefined && /^\p{Lu}/u.test(word) && /\p{Ll}/u.test(word)
    const name = capitalised(raw) && (!initial || capitalised(tokens[i + length]?.[1]))
    const score = name ? 0 : PHRASE_SCORES[key] ?? WORD_SCORES[key] ?? afinn[key] ?? stemScore(key, afinn) ?? 0
    units.push({ text: raw, key, score, name, breakAfter: false })
    initial = false
    i += length - 1
  }
  return units
}

/** Indexes of the units after `from` in its clause (up to the next break), at most `reach` that are not skipped. */
function clauseAfter (units: readonly Unit[], from: number, reach: number, skip: (u: Unit) => boolean = () => false): number[] {
  const found: number[] = []
  for (let i = from + 1; i < units.length && !units[i - 1].breakAfter && found.length < reach; i++) if (!skip(units[i])) found.push(i)
  return found
}

/** The score of one clause group (no contrast inside), its units' scores adjusted in place. */
function scoreUnits (units: Unit[]): number {
  let extra = 0
  const done = new Set<number>()
  // "No one has worked harder … than X": a comparison, not a negation.
  units.forEach((u, i) => {
    if (!['no one', 'nobody', 'none', 'nothing'].includes(u.key)) return
    const rest = units.slice(i + 1)
    const end = rest.findIndex(x => x.breakAfter)
    const clause = end === -1 ? rest : rest.slice(0, end + 1)
    const comparative = clause.findIndex(x => COMPARATIVES.has(x.key))
    if (comparative !== -1 && clause.slice(comparative + 1).some(x => x.key === 'than')) {
      extra += COMPARISON_SCORE
      done.add(i)
    }
  })
  // A burden (or anything scored negative) raised or lowered: "raise taxes", "crime fell", "reduce crime";
  // a good raised or lowered by a change of amount: "jobs grew", "cut funding" (fighting one is no news).
  const burden = (u: Unit): boolean => !u.name && (BURDENS.has(u.key) || (u.score < 0 && !INCREASES.has(u.key) && !DECREASES.has(u.key) && !isNegator(u.key)))
  const paired = new Set<number>()
  units.forEach((u, i) => {
    if (u.name || (!INCREASES.has(u.key) && !DECREASES.has(u.key))) return
    const good = (x: Unit): boolean => !x.name && GOODS.has(x.key) && !BURDEN_FIGHTS.has(u.key)
    const candidates = units.map((x, j) => ({ x, j, d: Math.abs(j - i) }))
      .filter(({ x, j, d }) => d > 0 && d <= DIRECTION_REACH && !paired.has(j) && (burden(x) || good(x)) && !crossesBreak(units, i, j) && !crossesModal(units, i, j))
      .sort((a, b) => a.d - b.d || b.j - a.j)
    const target = candidates[0]
    // Raising alone judges nothing ("a hearing on the rate increase"); a cut alone keeps its score ("the cuts").
    if (target === undefined) {
      if (INCREASES.has(u.key)) u.score = 0
      return
    }
    // What is joined to the target by "and" / "or" moves with it ("reduced arrests and injuries").
    for (let j = target.j; j === target.j || (['and', 'or'].includes(units[j - 1]?.key) && (burden(units[j]) || good(units[j]))); j += 2) {
      paired.add(j)
      units[j].score = (DECREASES.has(u.key) === good(units[j]) ? -1 : 1) * DIRECTION_SCORE
      if (units[j].breakAfter) break
    }
    u.score = 0
  })
  // Reported criticism: "critics say …", or anyone's verb of criticism ("auditors questioned …");
  // praise words after the verb are the criticised claims, not praise.
  const framed = new Set<number>()
  const frame = (verb: number): void => {
    framed.add(verb)
    units[verb].score = Math.min(units[verb].score, FAULT_SCORE)
    for (let j = verb + 1; j < units.length; j++) if (units[j].score > 0) units[j].score = 0
  }
  units.forEach((u, i) => {
    if (CRITICS.has(u.key)) {
      const verb = clauseAfter(units, i, CRITIC_REACH).find(j => REPORTING_VERBS.has(units[j].key) || CRITICISM_VERBS.has(units[j].key))
      if (verb === undefined) return
      u.score = 0
      units[verb].score = 0
      frame(verb)
    } else if ((CRITICISM_VERBS.has(u.key) || DENIALS.has(u.key)) && !u.name && !framed.has(i)) frame(i)
  })
  // Excess is a complaint: "too tall", "too late", "too good to be true".
  units.forEach((u, i) => {
    const next = units[i + 1]
    if (u.key !== 'too' || u.breakAfter || next === undefined || NEGATION_SKIPS.has(next.key) || next.score < 0) return
    u.score = -1
    next.score = 0
  })
  // A hedge empties the praise after it: "claims to help", "touted as bold".
  units.forEach((u, i) => {
    if (!HEDGES.has(u.key)) return
    const next = clauseAfter(units, i, HEDGE_REACH).find(j => units[j].score > 0)
    if (next !== undefined) units[next].score = 0
    u.score = Math.min(u.score, 0)
  })
  // Negation, up to the clause's end: the first opinion word or expected thing, or every one after a
  // clause negator; a failure ("failed to", "lacks") with neither scores −2. A negated expectation
  // ("nobody expected it to be this good") denies the expectation, not what follows; what comes after
  // "about" is the topic, not what is negated ("said nothing about the layoffs" is a negator ending its clause).
  units.forEach((u, i) => {
    if (done.has(i)) return
    const clause = CLAUSE_NEGATORS.has(u.key)
    if (!clause && !isNegator(u.key)) return
    u.score = 0
    const inClause = clauseAfter(units, i, Infinity, x => NEGATION_SKIPS.has(x.key))
    const topic = inClause.findIndex(j => TOPIC_MARKERS.has(units[j].key))
    const looked = topic === -1 ? inClause : inClause.slice(0, topic)
    if (looked.length > 0 && EXPECTATIONS.has(units[looked[0]].key)) return
    const targets = looked.filter(j => units[j].score !== 0 || (EXPECTED.has(units[j].key) && !units[j].name))
    // An expected thing denied is a fault whatever its own score ("no warning", "no notice").
    for (const j of clause ? targets : targets.slice(0, 1)) units[j].score = units[j].score === 0 || EXPECTED.has(units[j].key) ? FAULT_SCORE : NEGATION_FACTOR * units[j].score
    if (looked.length === 0 || (targets.length === 0 && FAILURES.has(u.key))) u.score = FAULT_SCORE
  })
  return extra + units.reduce((sum, x) => sum + x.score, 0)
}

function crossesBreak (units: readonly Unit[], a: number, b: number): boolean {
  for (let k = Math.min(a, b); k < Math.max(a, b); k++) if (units[k].breakAfter) return true
  return false
}

function crossesModal (units: readonly Unit[], a: number, b: number): boolean {
  for (let k = Math.min(a, b) + 1; k < Math.max(a, b); k++) if (MODALS.has(units[k].key)) return true
  return false
}

/**
 * A sentence's units split into a concession and its main clause: before "but" / "however" / ", yet"
 * and after them; or the clause an opening or inner "although" / "though" / "despite", or an opening
 * "while", governs (up to
 * its clause break) and the rest. Undefined when nothing contrasts.
 */
function contrastSplit (units: readonly Unit[]): { concession: Unit[], main: Unit[] } | undefined {
  for (let i = 0; i < units.length; i++) {
    const key = units[i].key
    const afterBreak = i === 0 || units[i - 1].breakAfter || units[i - 1].key === 'and'
    if ((key === 'but' && units[i + 1]?.key !== 'also' && !['nothing', 'all', 'anything'].includes(units[i - 1]?.key ?? '')) ||
      (key === 'however' && i > 0) || (key === 'yet' && i > 0 && afterBreak && units[i + 1]?.key !== 'to') ||
      (key === 'still' && i > 0 && afterBreak && units[i].breakAfter)) {
      return i === 0 ? undefined : { concession: units.slice(0, i), main: units.slice(i + 1) }
    }
    if ((['although', 'though', 'despite', 'even though'].includes(key) && afterBreak) || (key === 'while' && i === 0)) {
      let end = i
      while (end < units.length - 1 && !units[end].breakAfter) end++
      const concession = units.slice(i + 1, end + 1)
      return { concession, main: [...units.slice(0, i), ...units.slice(end + 1)] }
    }
  }
  return undefined
}

/** The score of one sentence: its clause groups scored, a concession and its main clause combined by `contrasted`. */
function scoreSentence (units: Unit[]): number {
  const split = contrastSplit(units)
  if (split === undefined) return scoreUnits(units)
  return contrasted(scoreUnits(split.concession), scoreSentence(split.main))
}

/** The opinion of a text: its sentences scored, a sentence opening with "However…" contrasting with the one before. */
export function scoreOpinion (text: string, afinn: Readonly<Record<string, number>>): OpinionScore {
  const sentences = text.split(/(?<=[.!?])\s+|\n+/).filter(s => /[\p{L}\p{N}]/u.test(s))
  const all: Unit[] = []
  let score = 0
  let previous = 0
  for (const sentence of sentences) {
    const units = unitsOf(sentence, afinn)
    let own = scoreSentence(units)
    all.push(...units)
    if (opensWithContrast(sentence) && previous !== 0) {
      own = contrasted(previous, own) - previous
    }
    score += own
    previous = own
  }
  const rounded = Math.round(score * 100) / 100
  const distinct = (items: Unit[]): string[] => [...new Set(items.map(u => u.key))]
  return { score: rounded === 0 ? 0 : rounded, positive_words: distinct(all.filter(u => u.score > 0)), negative_words: distinct(all.filter(u => u.score < 0)) }
}
