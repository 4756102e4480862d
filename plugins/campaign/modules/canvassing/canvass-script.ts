// Canvassing's method: the issues of a door-knocking or phone script (given, or the most urgent local
// issues of the post stream at a place, by local-issues.ts), talking points quoted from the knowledge
// base per issue, and the wording of templates/canvassing.json: greeting, questions, objections, close.
import { Type, type Static } from '../../../../kernel/schema.js'
import { type LanguageEngine, fillTemplate, type KbLike, groundedSentences, marked, type Citations, type GroundedSentence, findIssues, mentions, type Post } from '../../module-kit.js'
import { analyzeLocalIssues, type IssueReport, type LocalText } from '../local-issues/index.js'

/** Most issues of a script taken from the post stream, and most given ones. */
export const LOCAL_ISSUES = 3
export const MAX_GIVEN_ISSUES = 5
/** Talking points per issue (one sentence from each of the best passages). */
export const POINTS_PER_ISSUE = 2
/** Most posts of a place read (the latest). */
export const MAX_PLACE_POSTS = 5_000
/** The most counted cues of a local issue that make its knowledge-base query. */
const QUERY_CUES = 3

export type ScriptMode = 'door' | 'phone'

const ByMode = Type.Object({ door: Type.String(), phone: Type.String() }, { additionalProperties: false })
const ByOrigin = Type.Object({ local: Type.String(), given: Type.String() }, { additionalProperties: false })

/** The schema of templates/canvassing.json. */
export const ScriptTemplates = Type.Object({
  about: Type.Optional(Type.String()),
  greeting: ByMode,
  audience: Type.String(),
  intro: ByOrigin,
  question: ByOrigin,
  no_points: Type.String(),
  objections: Type.Array(Type.Object({ objection: Type.String(), response: Type.String(), response_without_point: Type.Optional(Type.String()) }, { additionalProperties: false })),
  close: ByMode
}, { additionalProperties: false })
export type ScriptTemplates = Static<typeof ScriptTemplates>

/** What the post stream says about an issue at the place. */
export interface LocalSignal { mentions: number, share: number, urgency: number, polarity: number, quote: string | null }

export interface ScriptIssue {
  issue: string
  from: 'given' | 'local'
  local: LocalSignal | null
  intro: string
  talking_points: GroundedSentence[]
  question: string
  note?: string
}

export interface Script {
  greeting: string
  audience_line: string
  issues: ScriptIssue[]
  objections: Array<{ objection: string, response: string }>
  close: string
}

/** Whether a post is from the place: its location contains the place's name, or its text names it (any case). */
export function fromPlace (post: Pick<Post, 'location' | 'text'>, place: string): boolean {
  return post.location.toLowerCase().includes(place.toLowerCase()) || mentions(post.text, place)
}

/** The latest posts of the place, at most MAX_PLACE_POSTS, oldest first. */
export function placePosts (posts: Iterable<Post>, place: string): LocalText[] {
  const found: LocalText[] = []
  for (const post of posts) {
    if (!fromPlace(post, place)) continue
    found.push({ text: post.text, location: post.location })
    if (found.length > MAX_PLACE_POSTS) found.shift()
  }
  return found
}

const signalOf = (report: IssueReport): LocalSignal =>
  ({ mentions: report.mentions, share: report.share, urgency: report.urgency, polarity: report.polarity, quote: report.quotes[0]?.text ?? null })

/**
 * The issues of a script: the given ones (each with the place's signal when it names a lexicon issue
 * the place raises), or else the place's LOCAL_ISSUES most urgent issues; each with the query its
 * talking points are retrieved with: a given issue as written; a local issue's QUERY_CUES most counted
 * cues, each repeated as often as the place's posts hold it (what people there actually talk about).
 */
export function scriptIssues (engine: LanguageEngine, given: readonly string[], placeTexts: readonly LocalText[] | undefined): Array<{ issue: string, from: 'given' | 'local', query: string, local: LocalSignal | null }> {
  const reports = placeTexts === undefined ? [] : analyzeLocalIssues(engine, placeTexts).issues
  if (given.length > 0) {
    return given.map(issue => {
      const lexical = findIssues(issue)[0]?.issue
      const report = reports.find(r => r.issue === lexical)
      return { issue, from: 'given', query: issue, local: report === undefined ? null : signalOf(report) }
    })
  }
  return reports.slice(0, LOCAL_ISSUES).map(report => ({
    issue: report.issue,
    from: 'local',
    query: report.cues.slice(0, QUERY_CUES).flatMap(c => new Array<string>(c.count).fill(c.cue)).join(' '),
    local: signalOf(report)
  }))
}

/** The script: greeting, each issue with its talking points and question, objections and their answers, the close. */
export function composeScript (
  engine: LanguageEngine, kb: KbLike, templates: ScriptTemplates, citations: Citations,
  request: { mode: ScriptMode, volunteer: string, location?: string, audience?: string },
  issues: ReturnType<typeof scriptIssues>
): Script {
  const base = { volunteer: request.volunteer, location: request.location ?? '', in_location: request.location === undefined ? '' : ` in ${request.location}`, audience: request.audience ?? '' }
  const scripted: ScriptIssue[] = issues.map(({ issue, from, query, local }) => {
    const values = { ...base, issue }
    const points = groundedSentences(engine, kb, query, { passages: POINTS_PER_ISSUE, perPassage: 1, total: POINTS_PER_ISSUE }, citations)
    const origin = local !== null ? 'local' : 'given'
    return {
      issue,
      from,
      local,
      intro: fillTemplate(templates.intro[origin], values),
      talking_points: points,
      question: fillTemplate(templates.question[origin], values),
      ...(points.length === 0 ? { note: fillTemplate(templates.no_points, values) } : {})
    }
  })
  const firstPoint = scripted.flatMap(i => i.talking_points)[0]
  const values = { ...base, issue: scripted[0]?.issue ?? 'the issues that matter here', first_point: firstPoint === undefined ? '' : marked(firstPoint) }
  const objections = templates.objections.flatMap(o => {
    const wording = o.response.includes('{{first_point}}') && firstPoint === undefined ? o.response_without_point : o.response
    return wording === undefined ? [] : [{ objection: o.objection, response: fillTemplate(wording, values) }]
  })
  return {
    greeting: fillTemplate(templates.greeting[request.mode], values),
    audience_line: request.audience === undefined ? '' : fillTemplate(templates.audience, values),
    issues: scripted,
    objections,
    close: fillTemplate(templates.close[request.mode], values)
  }
}

/** The script as a volunteer reads it. */
export function scriptText (script: Script, citationLines: readonly string[]): string {
  const blocks = [[script.greeting, script.audience_line].filter(l => l !== '').join(' ')]
  script.issues.forEach((issue, i) => {
    const lines = [`${i + 1}. ${issue.issue}`, issue.intro]
    if (issue.local !== null && issue.local.quote !== null) lines.push(`Heard here: “${issue.local.quote}”`)
    lines.push(...issue.talking_points.map(p => `• ${marked(p)}`))
    if (issue.note !== undefined) lines.push(`(${issue.note})`)
    lines.push(`Ask: ${issue.question}`)
    blocks.push(lines.join('\n'))
  })
  if (script.objections.length > 0) blocks.push(['If they say…', ...script.objections.map(o => `“${o.objection}” → ${o.response}`)].join('\n'))
  blocks.push(`Close: ${script.close}`)
  if (citationLines.length > 0) blocks.push(`Sources: ${citationLines.join('; ')}`)
  return blocks.join('\n\n')
}
