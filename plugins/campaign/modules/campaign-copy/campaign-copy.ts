// Campaign copy: generate-copy writes copy for a channel (SMS, social post, email, flyer, speech) on a
// topic from the knowledge base's cited passages, extractively (copy-composer.ts) or with the generative
// provider (prompts/generate-copy.md), and stores it; list-copy-history pages through what was written.
// An SMS tells readers to reply STOP only while the campaign receives replies (kit.replies).
import { BadRequest } from '../../../../kernel/index.js'
import { Type } from '../../../../kernel/schema.js'
import { moduleFunction, type ModuleFunction, generated, labelledSections, loadPrompt, promptMessages, loadTemplates, Citations, type CitedPassage, clip, type GroundedSentence, groundedSentences, nothingInKb, resourceHash, sourceLines, PageArgs, RecordStore, timeKey, type ModuleKit } from '../../module-kit.js'
import {
  callToAction, CHANNELS, composeCopy, copyValues, CopyTemplates, headlinePhrase, LENGTHS, SHAPES, TONES, withoutOptOutPromise,
  type Channel, type CopyLength, type CopyTone
} from './copy-composer.js'

/** Passages retrieved per copy, and sentences quoted from one passage. */
export const COPY_PASSAGES = 5
export const COPY_PER_PASSAGE = 2

export interface CopyRecord {
  copy_id: string
  topic: string
  channel: Channel
  audience: string
  tone: CopyTone
  length: CopyLength
  headline: string
  text: string
  call_to_action: string
  characters: number
  limit: number
  /** Whether the text was cut to the channel's limit. */
  clipped: boolean
  /** The sentences quoted (extractive copy; empty when generated). */
  sentences: GroundedSentence[]
  sources: CitedPassage[]
  citation_lines: string[]
  method: 'extractive' | 'generative'
  engine: string
  created_by: string
  created_at: string
}

const CopyArgs = Type.Object({
  topic: Type.String({ minLength: 1, maxLength: 500, description: 'what the copy is about, e.g. "public transit"' }),
  channel: Type.Union(CHANNELS.map(c => Type.Literal(c))),
  audience: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'who it is for, e.g. "young families"' })),
  tone: Type.Union(TONES.map(t => Type.Literal(t)), { default: 'neutral' }),
  length: Type.Union(LENGTHS.map(l => Type.Literal(l)), { default: 'medium' })
}, { additionalProperties: false })

const HistoryArgs = Type.Object({
  channel: Type.Optional(Type.Union(CHANNELS.map(c => Type.Literal(c)))),
  topic: Type.Optional(Type.String({ minLength: 1, maxLength: 500, description: 'keeps copies whose topic contains it (any case)' })),
  ...PageArgs
}, { additionalProperties: false })

export function campaignCopyFunctions (kit: ModuleKit): ModuleFunction[] {
  const templates = loadTemplates(import.meta.url, 'campaign-copy', CopyTemplates)
  const prompt = loadPrompt(import.meta.url, 'generate-copy')
  const store = new RecordStore<CopyRecord>(kit.store, 'campaign-copy', kit.maxRecords)
  return [
    moduleFunction({
      name: 'generate-copy',
      args: CopyArgs,
      handler: async (args, { session }) => {
        const engine = await kit.language()
        if (engine.terms(args.topic).length === 0) throw new BadRequest('invalid arguments: /topic: holds no content words')
        const request = { topic: args.topic.trim(), channel: args.channel, tone: args.tone, length: args.length, audience: args.audience?.trim() }
        const shape = SHAPES[request.channel]
        const citations = new Citations()
        const candidates = groundedSentences(engine, kit.kb, request.topic, { passages: COPY_PASSAGES, perPassage: COPY_PER_PASSAGE, total: 2 * shape.sentences[request.length] }, citations)
        const now = new Date()
        const base = { topic: request.topic, channel: request.channel, audience: request.audience ?? '', tone: request.tone, length: request.length, limit: shape.limit, created_by: session?.email ?? '', created_at: now.toISOString() }
        if (candidates.length === 0) {
          return {
            ...base, copy_id: null, resource_id: resourceHash('copy', request), grounded: false, method: 'none', headline: '', text: '', call_to_action: '',
            characters: 0, clipped: false, sentences: [], sources: [], citation_lines: [], note: nothingInKb(request.topic), engine: engine.name
          }
        }
        const phrase = headlinePhrase(engine, request.topic, candidates)
        let written: Pick<CopyRecord, 'headline' | 'text' | 'call_to_action' | 'clipped' | 'sentences' | 'sources' | 'citation_lines' | 'method' | 'engine'>
        // Without replies received, an SMS may not tell anyone to reply STOP: nobody would act on it.
        const optOut = kit.replies.enabled
        const noOptOut = request.channel === 'sms' && !optOut
        const cta = callToAction(templates, request, phrase, optOut)
        const rules = noOptOut ? `${shape.rules}; no opt-out instructions (no "Reply STOP"): this campaign does not receive them` : shape.rules
        const answer = await generated(kit.generator, () => promptMessages(prompt, {
          ...copyValues(request, phrase), channel: request.channel, channel_rules: rules, tone: request.tone, length: request.length, call_to_action: cta, sources: sourceLines(citations.passages)
        }), 900)
        if (answer !== undefined) {
          const sections = labelledSections(answer.text, ['HEADLINE', 'TEXT'])
          const answered = sections?.TEXT ?? answer.text.trim()
          const wrote = noOptOut ? withoutOptOutPromise(answered) : answered
          const text = clip(wrote, shape.limit)
          const headline = shape.headline === 0 || sections === undefined || /^none\.?$/i.test(sections.HEADLINE) ? '' : clip(sections.HEADLINE, shape.headline)
          written = { headline, text, call_to_action: cta, clipped: text !== wrote, sentences: [], sources: citations.passages, citation_lines: citations.lines, method: 'generative', engine: answer.engine }
        } else {
          const composed = composeCopy(templates, request, phrase, candidates, cites => citations.linesOf(cites), optOut)
          const quoted = new Set(composed.sentences.map(s => s.cite))
          written = { ...composed, sources: citations.passages.filter(p => quoted.has(p.cite)), citation_lines: citations.linesOf(quoted), method: 'extractive', engine: engine.name }
        }
        const record: CopyRecord = { ...base, copy_id: timeKey(now), ...written, characters: written.text.length }
        await store.put(record.copy_id, record)
        return { ...record, resource_id: record.copy_id, grounded: true }
      }
    }),
    moduleFunction({
      name: 'list-copy-history',
      args: HistoryArgs,
      handler: async args => {
        const engine = await kit.language()
        const needle = args.topic?.trim().toLowerCase()
        const page = await store.page(args.limit, args.cursor, c => (args.channel === undefined || c.channel === args.channel) && (needle === undefined || c.topic.toLowerCase().includes(needle)))
        return {
          total: await store.count(),
          items: page.items.map(({ id: _id, ...c }) => ({ ...c, resource_id: c.copy_id })),
          next_cursor: page.next_cursor,
          engine: engine.name
        }
      }
    })
  ]
}
