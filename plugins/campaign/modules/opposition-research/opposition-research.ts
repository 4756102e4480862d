// Opposition research: generate-opposition-briefing stores the opponent statements it is given and
// assembles a briefing from all of them (topics and stances, contradictions, media coverage; summary
// extractive or by the generative provider); list-opponents and detect-contradictions read the store.
import { createHash } from 'node:crypto'
import { BadRequest, NotFound } from '../../../../kernel/index.js'
import { Type } from '../../../../kernel/schema.js'
import { moduleFunction, type ModuleFunction, type LanguageEngine, generated, loadPrompt, promptMessages, Citations, type GroundedSentence, groundedSentences, resourceHash, sourceLines, checkText, instant, RecordStore, TextArg, timeKey, type ModuleKit } from '../../module-kit.js'
import { articlesAbout, mediaSection } from '../candidate-briefings/index.js'
import { articleStore } from '../media-monitor/index.js'
import { analyseStatements, chronological, opponentKey, sameText, statementLine, type Statement, type StatementAnalysis } from './opponent-statements.js'

/** Most statements given in one call, opponents listed, articles and contradictions in a briefing. */
export const MAX_GIVEN_STATEMENTS = 100
export const MAX_OPPONENTS = 200
export const BRIEFING_ARTICLES = 5
export const BRIEFING_CONTRADICTIONS = 5

const OpponentArg = Type.String({ minLength: 1, maxLength: 200, description: 'the opponent (a person or an organisation)' })

const BriefingArgs = Type.Object({
  opponent: OpponentArg,
  statements: Type.Optional(Type.Array(Type.Object({
    text: TextArg('what the opponent said or wrote'),
    said_on: Type.Optional(Type.String({ maxLength: 40, description: 'YYYY-MM-DD' })),
    source: Type.String({ maxLength: 500, default: '', description: 'where it was said: a URL, "debate, Channel 4"…' })
  }, { additionalProperties: false }), { minItems: 1, maxItems: MAX_GIVEN_STATEMENTS, description: 'statements to add before the briefing is assembled' }))
}, { additionalProperties: false })

const ContradictionArgs = Type.Object({
  opponent: OpponentArg,
  topic: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'keeps contradictions on a topic containing it' })),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 })
}, { additionalProperties: false })

const ListArgs = Type.Object({
  search: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'keeps opponents whose name contains it' }))
}, { additionalProperties: false })

/** The extractive summary: one factual line per finding. */
function briefingFacts (name: string, statements: readonly Statement[], analysis: StatementAnalysis, media: { matched: number, tones: Record<string, number> }): string[] {
  const dated = statements.map(s => s.said_on).filter(d => d !== null).sort()
  const by = (label: string): string => analysis.topics.filter(t => t.label === label).map(t => t.topic).join(', ')
  const lines = [`${name}: ${statements.length} statement(s)${dated.length > 0 ? `, ${dated[0]} to ${dated[dated.length - 1]}` : ''}.`]
  for (const [label, words] of [['supports', 'Supports'], ['opposes', 'Opposes'], ['shifting', 'Shifting on'], ['neutral', 'Speaks without a clear stance on']]) {
    if (by(label) !== '') lines.push(`${words}: ${by(label)}.`)
  }
  const top = analysis.contradictions[0]
  lines.push(top === undefined ? 'No contradiction found.' : `${analysis.contradictions.length} possible contradiction(s), the strongest on ${top.topic} (strength ${top.strength}).`)
  lines.push(media.matched > 0 ? `Media: ${media.matched} article(s), ${media.tones.critical} critical and ${media.tones.favourable} favourable among the newest.` : 'No stored article covers them.')
  return lines
}

function promptValues (name: string, facts: readonly string[], analysis: StatementAnalysis, media: ReturnType<typeof mediaSection>, citations: Citations): Record<string, string> {
  const quote = (q: { statement_id: string, quote: string, stance: number, said_on: string | null, source: string }): string => `“${q.quote}” (${q.statement_id}, ${q.source === '' ? 'no source' : q.source}, ${q.said_on ?? 'date unknown'}, stance ${q.stance})`
  return {
    opponent: name,
    facts: facts.join('\n'),
    topics: analysis.topics.length === 0 ? 'none shared by two statements' : analysis.topics.map(t => `${t.topic} (${t.label}):\n${t.statements.map(q => `- ${quote(q)}`).join('\n')}`).join('\n'),
    contradictions: analysis.contradictions.length === 0 ? 'none' : analysis.contradictions.slice(0, BRIEFING_CONTRADICTIONS).map(c => `- on ${c.topic}: ${quote(c.earlier)} vs ${quote(c.later)}`).join('\n'),
    media: media.items.length === 0 ? 'none' : media.items.map(a => `- “${a.title}”, ${a.outlet}, ${a.published_at.slice(0, 10)}, ${a.tone}`).join('\n'),
    sources: citations.passages.length === 0 ? 'none' : sourceLines(citations.passages)
  }
}

export function oppositionFunctions (kit: ModuleKit): ModuleFunction[] {
  const prompt = loadPrompt(import.meta.url, 'generate-opposition-briefing')
  const store = new RecordStore<Statement>(kit.store, 'opposition-statements', kit.maxRecords)
  const articles = articleStore(kit)
  /** The opponent's stored statements, oldest first; 404 when there are none. */
  const statementsOf = async (opponent: string): Promise<Statement[]> => {
    const key = opponentKey(opponent)
    const found = (await store.list()).filter(s => s.opponent_key === key).sort(chronological)
    if (found.length === 0) throw new NotFound(`no statements of opponent "${opponent.trim()}": add them with generate-opposition-briefing`)
    return found
  }
  const checkedName = (opponent: string): string => {
    const name = opponent.trim().replace(/\s+/g, ' ')
    if (name === '') throw new BadRequest('invalid arguments: /opponent: must name the opponent')
    return name
  }
  const contradictionsOf = async (engine: LanguageEngine, opponent: string): Promise<{ statements: Statement[], analysis: StatementAnalysis }> => {
    const statements = await statementsOf(opponent)
    return { statements, analysis: analyseStatements(engine, statements) }
  }
  return [
    moduleFunction({
      name: 'list-opponents',
      args: ListArgs,
      handler: async args => {
        const engine = await kit.language()
        const needle = args.search?.trim().toLowerCase()
        const byKey = new Map<string, Statement[]>()
        for await (const s of store.between()) {
          if (needle !== undefined && !s.opponent_key.includes(needle)) continue
          byKey.set(s.opponent_key, [...(byKey.get(s.opponent_key) ?? []), s])
        }
        const opponents = [...byKey.values()].map(held => {
          const dated = held.map(s => s.said_on).filter(d => d !== null).sort()
          const first = [...held].sort((a, b) => a.added_at.localeCompare(b.added_at))[0]
          return {
            opponent: first.opponent,
            statements: held.length,
            first_said_on: dated[0] ?? null,
            last_said_on: dated[dated.length - 1] ?? null,
            last_added_at: held.map(s => s.added_at).sort().reverse()[0],
            sources: new Set(held.map(s => s.source).filter(s => s !== '')).size,
            keywords: engine.keywords(held.map(s => s.text).join('\n'), 5).map(k => k.term)
          }
        }).sort((a, b) => a.opponent.localeCompare(b.opponent))
        return { total: opponents.length, opponents: opponents.slice(0, MAX_OPPONENTS), engine: engine.name }
      }
    }),
    moduleFunction({
      name: 'generate-opposition-briefing',
      args: BriefingArgs,
      handler: async (args, { session }) => {
        const name = checkedName(args.opponent)
        const key = opponentKey(name)
        const given = (args.statements ?? []).map((s, i) => {
          checkText(`statements/${i}/text`, s.text)
          if (s.text.trim() === '') throw new BadRequest(`invalid arguments: /statements/${i}/text: must not be blank`)
          return { text: s.text.trim(), said_on: s.said_on === undefined ? null : instant(`statements/${i}/said_on`, s.said_on), source: s.source.trim() }
        })
        const engine = await kit.language()
        const known = (await store.list()).filter(s => s.opponent_key === key)
        const now = new Date()
        const fresh: Statement[] = []
        for (const s of given) {
          if ([...known, ...fresh].some(k => sameText(k.text, s.text))) continue
          const said = s.said_on?.toISOString().slice(0, 10) ?? null
          const statementId = timeKey(s.said_on ?? now, createHash('sha256').update(`${key}\0${s.text}`).digest('hex').slice(0, 12))
          fresh.push({ statement_id: statementId, opponent: known[0]?.opponent ?? name, opponent_key: key, text: s.text, said_on: said, source: s.source, added_by: session?.email ?? '', added_at: now.toISOString() })
        }
        await store.putAll(fresh.map(s => [s.statement_id, s] as const))
        const statements = await statementsOf(name)
        const display = statements[0].opponent
        const analysis = analyseStatements(engine, statements)
        const citations = new Citations()
        const ours = new Map<string, GroundedSentence[]>(analysis.topics.map(t => [t.topic, groundedSentences(engine, kit.kb, t.topic, { passages: 1, perPassage: 1, total: 1 }, citations)]))
        const coverage = await articlesAbout(articles, [...new Set(engine.terms(display))], BRIEFING_ARTICLES, 1)
        const media = mediaSection(coverage, display)
        const facts = briefingFacts(display, statements, analysis, media)
        let summary = facts.join(' ')
        let method: 'extractive' | 'generative' = 'extractive'
        let producedBy = engine.name
        const answer = await generated(kit.generator, () => promptMessages(prompt, promptValues(display, facts, analysis, media, citations)), 500)
        if (answer !== undefined) {
          summary = answer.text
          method = 'generative'
          producedBy = answer.engine
        }
        return {
          resource_id: resourceHash('opposition', { key, statements: statements.map(s => s.statement_id), articles: coverage.newest.map(a => a.article_id) }),
          opponent: display,
          added: fresh.length,
          duplicates: given.length - fresh.length,
          statement_count: statements.length,
          summary,
          summary_method: method,
          topics: analysis.topics.map(t => ({ ...t, our_position: ours.get(t.topic) ?? [], sources: t.statements.map(q => statementLine(q)) })),
          other_statements: analysis.other.map(g => ({ ...g, sources: g.statements.map(q => statementLine(q)) })),
          contradictions: analysis.contradictions.slice(0, BRIEFING_CONTRADICTIONS),
          contradiction_count: analysis.contradictions.length,
          media,
          sources: citations.passages,
          citation_lines: citations.lines,
          engine: producedBy
        }
      }
    }),
    moduleFunction({
      name: 'detect-contradictions',
      args: ContradictionArgs,
      handler: async args => {
        const engine = await kit.language()
        const { statements, analysis } = await contradictionsOf(engine, checkedName(args.opponent))
        const needle = args.topic?.trim().toLowerCase()
        const kept = analysis.contradictions.filter(c => needle === undefined || c.topics.some(t => t.includes(needle)))
        return {
          resource_id: resourceHash('contradictions', { opponent: opponentKey(args.opponent), statements: statements.map(s => s.statement_id), topic: needle ?? '' }),
          opponent: statements[0].opponent,
          statements: statements.length,
          topics: analysis.topics.length,
          total: kept.length,
          contradictions: kept.slice(0, args.limit).map(c => ({ ...c, resource_id: c.contradiction_id, sources: [statementLine(c.earlier), statementLine(c.later)] })),
          engine: engine.name
        }
      }
    })
  ]
}
