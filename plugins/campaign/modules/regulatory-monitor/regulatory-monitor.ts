// The regulatory monitor: analyze-regulation reads a bill or rule into its obligations, deadlines,
// penalties, affected parties, campaign topics and impact, and stores the analysis (bounded).
import { Type } from '../../../../kernel/schema.js'
import { moduleFunction, type ModuleFunction, RecordStore, TextArg, checkText, timeKey, type ModuleKit } from '../../module-kit.js'
import { analyzeRegulation, type RegulationAnalysis } from './regulation-parse.js'


export interface StoredRegulation extends RegulationAnalysis {
  regulation_id: string
  title: string
  jurisdiction: string
  analyzed_at: string
  analyzed_by: string
}

const AnalyzeArgs = Type.Object({
  title: Type.String({ minLength: 1, maxLength: 300 }),
  text: TextArg('the bill, rule or guidance'),
  jurisdiction: Type.Optional(Type.String({ maxLength: 200, description: 'e.g. "State of Ohio", "FEC"' }))
}, { additionalProperties: false })

export function regulatoryMonitorFunctions (kit: ModuleKit): ModuleFunction[] {
  const store = new RecordStore<StoredRegulation>(kit.store, 'regulatory-analyses', kit.maxRecords)
  return [
    moduleFunction({
      name: 'analyze-regulation',
      args: AnalyzeArgs,
      handler: async ({ title, text, jurisdiction }, { session }) => {
        checkText('text', text)
        const engine = await kit.language()
        const now = new Date()
        const analysis: StoredRegulation = {
          regulation_id: timeKey(now),
          title,
          jurisdiction: jurisdiction ?? '',
          analyzed_at: now.toISOString(),
          analyzed_by: session?.email ?? '',
          ...analyzeRegulation(engine, text, now)
        }
        await store.put(analysis.regulation_id, analysis)
        return { ...analysis, engine: engine.name }
      }
    })
  ]
}
