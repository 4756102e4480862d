// The knowledge base: kb-ingest splits a document into passages and stores them; kb-query ranks the
// passages with BM25 and answers with the best ones, each cited by number, document and passage.
import { createHash } from 'node:crypto'
import type { Database } from 'lmdb'
import { BadRequest } from '../../../../kernel/index.js'
import { Type } from '../../../../kernel/schema.js'
import { moduleFunction, type ModuleFunction } from '../../functions.js'
import { localEngine } from '../../language/local-engine.js'
import { Bm25Index } from '../../text/bm25.js'

export interface KbDocument {
  document_id: string
  title: string
  source: string
  ingested_at: string
  passage_count: number
}

export type KbDocumentDb = Database<KbDocument, string>
/** Passage texts by [document_id, passage index]. */
export type KbPassageDb = Database<string, [string, number]>

/** Passages are paragraphs, cut at sentence ends when longer than this many words. */
export const MAX_PASSAGE_WORDS = 120

/**
 * Paragraphs (blank-line separated), long ones cut at sentence ends into pieces of at most
 * MAX_PASSAGE_WORDS words. Sentences come from the language engine's segmenter, which keeps "$17.25",
 * "3.4 percent", "Dr. Smith", "U.S.", URLs and e-mail addresses whole; the text is kept as written.
 */
export async function splitPassages (text: string): Promise<string[]> {
  const engine = await localEngine()
  const passages: string[] = []
  for (const paragraph of text.split(/\n\s*\n/).map(p => p.replace(/\s+/g, ' ').trim()).filter(p => p !== '')) {
    let current: string[] = []
    let words = 0
    for (const sentence of engine.sentences(paragraph)) {
      const count = sentence.split(' ').filter(word => word !== '').length
      if (current.length > 0 && words + count > MAX_PASSAGE_WORDS) {
        passages.push(current.join(' '))
        current = []
        words = 0
      }
      current.push(sentence.trim())
      words += count
    }
    if (current.length > 0) passages.push(current.join(' '))
  }
  return passages
}

const IngestArgs = Type.Object({
  title: Type.String({ minLength: 1, maxLength: 200 }),
  text: Type.String({ minLength: 1, maxLength: 200_000 }),
  source: Type.String({ maxLength: 500, default: '' })
}, { additionalProperties: false })

const QueryArgs = Type.Object({
  query: Type.String({ minLength: 1, maxLength: 500 }),
  limit: Type.Integer({ minimum: 1, maximum: 20, default: 5 })
}, { additionalProperties: false })

const passageKey = (documentId: string, index: number): string => `${documentId}#${index}`

export class KnowledgeBase {
  readonly #documents: KbDocumentDb
  readonly #passages: KbPassageDb
  readonly #index = new Bm25Index()

  constructor (documents: KbDocumentDb, passages: KbPassageDb) {
    this.#documents = documents
    this.#passages = passages
    for (const { key, value } of passages.getRange()) this.#index.add(passageKey(key[0], key[1]), value)
  }

  get documentCount (): number {
    return this.#documents.getCount()
  }

  /** A stored document and its text (its passages, blank-line separated), or undefined. */
  document (documentId: string): { document: KbDocument, text: string } | undefined {
    const document = this.#documents.get(documentId)
    if (document === undefined) return undefined
    const passages = Array.from({ length: document.passage_count }, (_, i) => this.#passages.get([documentId, i]) ?? '')
    return { document, text: passages.join('\n\n') }
  }

  /** Store a document (the same title and text replace the earlier copy) and index its passages. */
  async ingest (title: string, text: string, source: string): Promise<KbDocument> {
    const documentId = createHash('sha256').update(title).update('\0').update(text).digest('hex').slice(0, 16)
    const passages = await splitPassages(text)
    if (passages.length === 0) throw new BadRequest('text holds no words to index')
    const document: KbDocument = { document_id: documentId, title, source, ingested_at: new Date().toISOString(), passage_count: passages.length }
    const previous = this.#documents.get(documentId)
    await this.#documents.transaction(() => {
      for (let i = 0; i < (previous?.passage_count ?? 0); i++) void this.#passages.remove([documentId, i])
      passages.forEach((passage, i) => { void this.#passages.put([documentId, i], passage) })
      void this.#documents.put(documentId, document)
    })
    for (let i = 0; i < (previous?.passage_count ?? 0); i++) this.#index.remove(passageKey(documentId, i))
    passages.forEach((passage, i) => { this.#index.add(passageKey(documentId, i), passage) })
    return document
  }

  /** The best `limit` passages for `query`, of the documents `keep` accepts (all when not given). */
  query (query: string, limit: number, keep?: (document: KbDocument) => boolean): Array<{ cite: number, document_id: string, title: string, source: string, passage: number, text: string, score: number }> {
    const documentOf = (id: string): string => id.slice(0, id.lastIndexOf('#'))
    const accepts = keep === undefined ? undefined : (id: string): boolean => { const d = this.#documents.get(documentOf(id)); return d !== undefined && keep(d) }
    return this.#index.search(query, limit, accepts).map(({ id, score }, i) => {
      const [documentId, index] = [documentOf(id), Number(id.slice(id.lastIndexOf('#') + 1))]
      const document = this.#documents.get(documentId) as KbDocument
      return {
        cite: i + 1,
        document_id: documentId,
        title: document.title,
        source: document.source,
        passage: index,
        text: this.#passages.get([documentId, index]) ?? '',
        score: Math.round(score * 1e4) / 1e4
      }
    })
  }
}

export function knowledgeBaseFunctions (kb: KnowledgeBase): ModuleFunction[] {
  return [
    moduleFunction({
      name: 'kb-ingest',
      args: IngestArgs,
      handler: async ({ title, text, source }) => {
        return await kb.ingest(title, text, source)
      }
    }),
    moduleFunction({
      name: 'kb-query',
      args: QueryArgs,
      handler: ({ query, limit }) => {
        const results = kb.query(query, limit)
        return { query, results, citations: results.map(r => `[${r.cite}] ${r.title}, passage ${r.passage + 1}`) }
      }
    })
  ]
}
