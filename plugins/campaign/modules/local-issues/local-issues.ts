// Local issues: analyze-local-issues tags texts (given, or the post stream) with the issues of the
// shared issue lexicon, clause by clause, and ranks the issues by urgency = share × negativity, with
// the places each is raised in (the text's location and the places the engine finds) and quotes.
import { Type } from '../../../../kernel/schema.js'
import { moduleFunction, type ModuleFunction, type LanguageEngine, mean, round, findIssues, checkText, TextArg, type ModuleKit, analyseClauses, positionOf, stanceSign, type Clause, postRange, RangeArgs } from '../../module-kit.js'

/** Places and quotes listed per issue. */
export const TOP_PLACES = 5
export const TOP_QUOTES = 3
/** Most posts of the stream analysed in one call: the latest in the range. */
export const MAX_POSTS = 5_000

export interface LocalText { text: string, location: string }

export interface IssueReport {
  issue: string
  /** Texts raising the issue. */
  mentions: number
  /** mentions / texts analysed. */
  share: number
  /** Mean over those texts of their polarity on the issue. */
  polarity: number
  /** (1 − polarity) / 2: 0 all praise, 0.5 neutral, 1 all complaint. */
  negativity: number
  /** Share of those texts whose polarity on the issue is ≤ −0.1. */
  negative_share: number
  urgency: number
  cues: Array<{ cue: string, count: number }>
  places: Array<{ place: string, mentions: number, polarity: number }>
  quotes: Array<{ text: string, polarity: number, place: string }>
}

interface Hit { polarity: number, places: string[], clauses: Clause[] }

/** The text's places: its location, then the places the engine names in it (case-insensitively distinct). */
function placesOf (engine: LanguageEngine, item: LocalText): string[] {
  const seen = new Map<string, string>()
  for (const place of [item.location, ...engine.entities(item.text).places]) {
    const name = place.trim()
    if (name !== '' && !seen.has(name.toLowerCase())) seen.set(name.toLowerCase(), name)
  }
  return [...seen.values()]
}

/**
 * Issues of `texts`, most urgent first (ties: more mentions, then name). A text raises an issue when
 * one of its clauses holds a cue of the lexicon; its polarity on the issue is the mean opinion polarity
 * of those clauses that hold an opinion (0 when none does).
 */
export function analyzeLocalIssues (engine: LanguageEngine, texts: readonly LocalText[]): { texts: number, texts_with_issues: number, issues: IssueReport[] } {
  const hits = new Map<string, Hit[]>()
  const cueCounts = new Map<string, Map<string, number>>()
  let withIssues = 0
  for (const item of texts) {
    if (findIssues(item.text).length === 0) continue // cheap: spares the clause split of texts raising nothing
    const byIssue = new Map<string, Clause[]>()
    for (const clause of analyseClauses(engine, [item.text])) {
      for (const mention of findIssues(clause.text)) {
        byIssue.set(mention.issue, [...(byIssue.get(mention.issue) ?? []), clause])
        const cues = cueCounts.get(mention.issue) ?? new Map<string, number>()
        for (const cue of mention.cues) cues.set(cue, (cues.get(cue) ?? 0) + 1)
        cueCounts.set(mention.issue, cues)
      }
    }
    if (byIssue.size === 0) continue
    withIssues++
    const places = placesOf(engine, item)
    for (const [issue, clauses] of byIssue) {
      const hit = { polarity: positionOf(clauses).stance, places, clauses }
      const found = hits.get(issue)
      if (found === undefined) hits.set(issue, [hit])
      else found.push(hit)
    }
  }
  const issues = [...hits].map(([issue, found]): IssueReport => {
    const polarity = round(mean(found.map(h => h.polarity)))
    const share = round(found.length / texts.length)
    const negativity = round((1 - polarity) / 2)
    return {
      issue,
      mentions: found.length,
      share,
      polarity,
      negativity,
      negative_share: round(found.filter(h => stanceSign(h.polarity) < 0).length / found.length),
      urgency: round(found.length / texts.length * (1 - polarity) / 2),
      cues: [...(cueCounts.get(issue) ?? [])].map(([cue, count]) => ({ cue, count })).sort((a, b) => b.count - a.count || a.cue.localeCompare(b.cue)),
      places: topPlaces(found),
      quotes: quotes(found)
    }
  }).sort((a, b) => b.urgency - a.urgency || b.mentions - a.mentions || a.issue.localeCompare(b.issue))
  return { texts: texts.length, texts_with_issues: withIssues, issues }
}

/** Places by texts raising the issue there, then by lower polarity, then name. */
function topPlaces (found: readonly Hit[]): IssueReport['places'] {
  const byPlace = new Map<string, { place: string, polarities: number[] }>()
  for (const hit of found) {
    for (const place of hit.places) {
      const entry = byPlace.get(place.toLowerCase()) ?? { place, polarities: [] }
      entry.polarities.push(hit.polarity)
      byPlace.set(place.toLowerCase(), entry)
    }
  }
  return [...byPlace.values()].map(({ place, polarities }) => ({ place, mentions: polarities.length, polarity: round(mean(polarities)) }))
    .sort((a, b) => b.mentions - a.mentions || a.polarity - b.polarity || a.place.localeCompare(b.place))
    .slice(0, TOP_PLACES)
}

/** The most negative distinct sentences raising the issue (in text order on ties). */
function quotes (found: readonly Hit[]): IssueReport['quotes'] {
  const all = found.flatMap(hit => hit.clauses.map(clause => ({ text: clause.sentence, polarity: clause.polarity, place: hit.places[0] ?? '' })))
  const ordered = all.map((quote, index) => ({ quote, index })).sort((a, b) => a.quote.polarity - b.quote.polarity || a.index - b.index)
  const distinct = new Map<string, IssueReport['quotes'][number]>()
  for (const { quote } of ordered) if (!distinct.has(quote.text)) distinct.set(quote.text, quote)
  return [...distinct.values()].slice(0, TOP_QUOTES)
}

const IssueArgs = Type.Object({
  texts: Type.Optional(Type.Array(Type.Object({
    text: TextArg('a post, a comment, a canvassing note'),
    location: Type.String({ maxLength: 200, default: '' })
  }, { additionalProperties: false }), { minItems: 1, maxItems: 1000 })),
  ...RangeArgs
}, { additionalProperties: false })

export function localIssueFunctions (kit: ModuleKit): ModuleFunction[] {
  return [
    moduleFunction({
      name: 'analyze-local-issues',
      args: IssueArgs,
      handler: async args => {
        const range = postRange(args, 'texts', args.texts !== undefined)
        args.texts?.forEach((item, i) => { checkText(`texts/${i}/text`, item.text) })
        const texts: LocalText[] = args.texts ?? (await kit.posts.list(range.from, range.to, { source: range.source })).slice(-MAX_POSTS).map(p => ({ text: p.text, location: p.location }))
        const engine = await kit.language()
        return { texts_from: args.texts !== undefined ? 'texts' : 'posts', ...analyzeLocalIssues(engine, texts), engine: engine.name }
      }
    })
  ]
}
