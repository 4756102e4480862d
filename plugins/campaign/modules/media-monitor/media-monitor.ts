// The media monitor: analyze-article analyses a news article and stores it (bounded, keyed by its
// publication time); compare-coverage compares how outlets covered a topic across the stored articles.
import { BadRequest } from '../../../../kernel/index.js'
import { Type } from '../../../../kernel/schema.js'
import { moduleFunction, type ModuleFunction, checkText, instant, type ModuleKit, PageArgs, RecordStore, TextArg, timeKey, timeRange, TimeRangeArgs } from '../../module-kit.js'
import { analyzeArticle, compareOutlets, storedTerms, topicRelevance, TOPIC_MATCH, type ArticleAnalysis } from './media-coverage.js'

/** Most matching articles (the newest) the outlet comparison reads per call. */
export const MAX_COMPARED = 5000

export interface StoredArticle extends ArticleAnalysis {
  article_id: string
  title: string
  outlet: string
  url: string
  published_at: string
  analyzed_at: string
  analyzed_by: string
  /** The most frequent distinct terms of title and text with their counts. */
  terms: Record<string, number>
}

const AnalyzeArgs = Type.Object({
  title: Type.String({ minLength: 1, maxLength: 300 }),
  text: TextArg('the article body'),
  outlet: Type.String({ minLength: 1, maxLength: 200, description: 'the publication, e.g. "Daily Ledger"' }),
  url: Type.Optional(Type.String({ maxLength: 2000 })),
  published_at: Type.Optional(Type.String({ maxLength: 40, description: 'ISO 8601; the time of analysis when absent' }))
}, { additionalProperties: false })

const CompareArgs = Type.Object({
  topic: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
  outlets: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { minItems: 1, maxItems: 50 })),
  ...TimeRangeArgs,
  ...PageArgs
}, { additionalProperties: false })

/** The stored articles (the `media-articles` database), which other modules read too. */
export const articleStore = (kit: Pick<ModuleKit, 'store' | 'maxRecords'>): RecordStore<StoredArticle> => new RecordStore<StoredArticle>(kit.store, 'media-articles', kit.maxRecords)

export function mediaMonitorFunctions (kit: ModuleKit): ModuleFunction[] {
  const store = articleStore(kit)
  return [
    moduleFunction({
      name: 'analyze-article',
      args: AnalyzeArgs,
      handler: async (args, { session }) => {
        checkText('text', args.text)
        const outlet = args.outlet.trim()
        if (outlet === '') throw new BadRequest('invalid arguments: /outlet: must name the outlet')
        const now = new Date()
        const published = args.published_at === undefined ? now : instant('published_at', args.published_at)
        const engine = await kit.language()
        const article: StoredArticle = {
          article_id: timeKey(published),
          title: args.title,
          outlet,
          url: args.url ?? '',
          published_at: published.toISOString(),
          analyzed_at: now.toISOString(),
          analyzed_by: session?.email ?? '',
          ...analyzeArticle(engine, args.title, args.text),
          terms: storedTerms(engine, args.title, args.text)
        }
        await store.put(article.article_id, article)
        const { terms: _terms, ...shown } = article
        return { ...shown, engine: engine.name }
      }
    }),
    moduleFunction({
      name: 'compare-coverage',
      args: CompareArgs,
      handler: async (args) => {
        const { from, to } = timeRange(args)
        const engine = await kit.language()
        const topicTerms = args.topic === undefined ? [] : engine.terms(args.topic)
        if (args.topic !== undefined && topicTerms.length === 0) throw new BadRequest('invalid arguments: /topic: holds no content words')
        const outlets = args.outlets === undefined ? undefined : new Set(args.outlets.map(o => o.trim().toLowerCase()))
        const inRange = (a: StoredArticle): boolean => (from === undefined || Date.parse(a.published_at) >= from.getTime()) && (to === undefined || Date.parse(a.published_at) <= to.getTime())
        const matches = (a: StoredArticle): boolean => inRange(a) && (outlets === undefined || outlets.has(a.outlet.toLowerCase())) &&
          (topicTerms.length === 0 || topicRelevance(topicTerms, a.terms) >= TOPIC_MATCH)
        let matched = 0
        for await (const article of store.between(from, to)) if (matches(article)) matched++
        const compared = (await store.page(MAX_COMPARED, undefined, matches)).items
        const { outlets: coverage, similarity } = compareOutlets(compared.map(a => ({
          outlet: a.outlet,
          polarity: a.sentiment.mean_sentence_polarity,
          entities: [...a.entities.people, ...a.entities.organizations, ...a.entities.places],
          terms: a.terms
        })))
        const page = await store.page(args.limit, args.cursor, matches)
        return {
          topic: args.topic ?? '',
          matched,
          compared: compared.length,
          outlets: coverage,
          similarity,
          articles: {
            items: page.items.map(a => ({
              article_id: a.article_id,
              title: a.title,
              outlet: a.outlet,
              url: a.url,
              published_at: a.published_at,
              polarity: a.sentiment.mean_sentence_polarity,
              tone: a.tone,
              relevance: topicRelevance(topicTerms, a.terms)
            })),
            next_cursor: page.next_cursor
          },
          engine: engine.name
        }
      }
    })
  ]
}
