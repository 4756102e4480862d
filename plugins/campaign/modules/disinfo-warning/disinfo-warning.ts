// The disinfo warning: analyze-disinfo scores a text's risk of being disinformation from weighted
// signals and stores the analysis; counter-messaging answers its claims from the knowledge base, cited,
// composed extractively or, when [campaign].generator_url is set, by the generative provider.
import { BadRequest, NotFound } from '../../../../kernel/index.js'
import { Type } from '../../../../kernel/schema.js'
import { moduleFunction, type ModuleFunction, generated, loadPrompt, answeringPassages, composeExtractive, counterPrompt, readGenerated, type CounterTone, COUNTER_TONES, RecordStore, TextArg, checkText, timeKey, type ModuleKit } from '../../module-kit.js'
import { analyzeDisinfo, claimSentences, isUrgent, type DisinfoAnalysis } from './disinfo-signals.js'


export interface StoredDisinfo extends DisinfoAnalysis {
  analysis_id: string
  source: string
  /** The text's first 500 characters. */
  excerpt: string
  analyzed_at: string
  analyzed_by: string
}

const AnalyzeArgs = Type.Object({
  text: TextArg('the post, message or article to assess'),
  source: Type.Optional(Type.String({ maxLength: 500, description: 'where it was seen' }))
}, { additionalProperties: false })

const CounterArgs = Type.Object({
  analysis_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'an analysis of analyze-disinfo' })),
  text: Type.Optional(TextArg('the claim, when there is no analysis')),
  tone: Type.Union(COUNTER_TONES.map(t => Type.Literal(t)), { default: 'neutral' })
}, { additionalProperties: false })

export function disinfoWarningFunctions (kit: ModuleKit): ModuleFunction[] {
  const store = new RecordStore<StoredDisinfo>(kit.store, 'disinfo-analyses', kit.maxRecords)
  const prompt = loadPrompt(import.meta.url, 'counter-messaging')
  return [
    moduleFunction({
      name: 'analyze-disinfo',
      args: AnalyzeArgs,
      handler: async ({ text, source }, { session }) => {
        checkText('text', text)
        const engine = await kit.language()
        const now = new Date()
        const analysis: StoredDisinfo = {
          analysis_id: timeKey(now),
          source: source ?? '',
          excerpt: text.slice(0, 500),
          analyzed_at: now.toISOString(),
          analyzed_by: session?.email ?? '',
          ...analyzeDisinfo(engine, kit.kb, text)
        }
        await store.put(analysis.analysis_id, analysis)
        return { ...analysis, engine: engine.name }
      }
    }),
    moduleFunction({
      name: 'counter-messaging',
      args: CounterArgs,
      handler: async ({ analysis_id: id, text, tone }) => {
        if ((id === undefined) === (text === undefined)) throw new BadRequest('invalid arguments: /analysis_id: give either analysis_id or text, not both or neither')
        const engine = await kit.language()
        let claims: string[]
        if (id !== undefined) {
          const analysis = await store.get(id)
          if (analysis === undefined) throw new NotFound(`no disinfo analysis "${id}"`)
          claims = analysis.claims.length > 0 ? analysis.claims : [analysis.excerpt]
        } else {
          checkText('text', text as string)
          const found = claimSentences(engine, engine.sentences(text as string)).filter(s => !isUrgent(s)).slice(0, 3)
          claims = found.length > 0 ? found : [(text as string).trim()]
        }
        const sources = answeringPassages(engine, kit.kb, claims)
        const base = { ...(id !== undefined ? { analysis_id: id } : {}), claims, tone, contradicted: sources.some(s => s.contradiction !== undefined), citations: sources, citation_lines: sources.map(s => `[${s.cite}] ${s.title}, passage ${s.passage + 1}`) }
        if (sources.length === 0) {
          return {
            ...base, addressed: false, short: '', long: '', engine: engine.name,
            note: 'The knowledge base has nothing relevant to this claim: no passage addresses it, so no counter-message was written. Add a document that does (kb-ingest), or answer it by hand.'
          }
        }
        const answer = await generated(kit.generator, () => counterPrompt(prompt, claims.join(' '), sources, tone as CounterTone))
        if (answer !== undefined) return { ...base, addressed: true, ...readGenerated(answer.text), engine: answer.engine }
        return { ...base, addressed: true, ...composeExtractive(claims[0], sources, tone as CounterTone), engine: engine.name }
      }
    })
  ]
}
