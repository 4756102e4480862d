// The knowledge base: kb-ingest splits a document into passages and stores them; kb-query ranks the
// passages with BM25 and answers with the best ones, each cited by number, document and passage.
import { createHash } from 'node:crypto'
import { BadRequest } from '../../../../kernel/index.js'
import { Type } from '../../../../kernel/schema.js'
import { moduleFunction, type ModuleFunction, localEngine, Bm25Index, type CampaignStore } from '../../module-kit.js'

export interface KbDocument {
  document_id: string
  title: string
  source: string
  ingested_at: string
  passage_count: number
}

/** Tables of the campaign store: documents by id, passage texts by [document_id, passage index]. */
const DOCUMENTS = 'kb-documents'
const PASSAGES = 'kb-passages'
/** The knowledge base's version, counted up by every ingest: an instance whose copy is older reloads. */
const STATE = 'kb-state'
const VERSION = 'version'

/** Passages are paragraphs, cut at sentence ends when longer than this many words. */
export const MAX_PASSAGE_WORDS = 120

/**
 * Paragraphs (blank-line separated), long ones cut at sentence ends into pieces of at most
 * MAX_PASSAGE_WORDS words. Sentences and headings come from the language engine's segmenter, which
 * keeps "$17.25", "3.4 percent", "Dr. Smith", "Sec. 4", "U.S.", URLs and e-mail addresses whole. A
 * heading (a title line, a section name; `title` is the document's, its first line when it repeats it)
 * is no passage of its own and never part of a sentence: it opens the passage after it as its label,
 * followed by a blank line, so that it is indexed with that passage and read again as a heading.
 */
export async function splitPassages (text: string, title?: string): Promise<string[]> {
  const engine = await localEngine()
  const breaks = [...text.matchAll(/\n[^\S\n]*\n/g)].map(m => m.index)
  const paragraphOf = (offset: number): number => breaks.filter(b => b < offset).length
  const passages: string[] = []
  let labels: string[] = []
  let current: string[] = []
  let words = 0
  let paragraph = -1
  const close = (): void => {
    if (current.length > 0) {
      passages.push([...labels, current.join(' ')].join('\n\n'))
      labels = []
    }
    current = []
    words = 0
  }
  for (const segment of engine.segments(text, title)) {
    const sentence = segment.text.replace(/\s+/g, ' ')
    if (segment.heading) {
      close()
      labels.push(sentence)
      continue
    }
    const count = sentence.split(' ').length
    if (paragraphOf(segment.start) !== paragraph || (current.length > 0 && words + count > MAX_PASSAGE_WORDS)) close()
    paragraph = paragraphOf(segment.start)
    current.push(sentence)
    words += count
  }
  close()
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

/**
 * The documents, their passages and the BM25 index are held in memory (loaded from the store at
 * start) and written through to the store: queries read memory only. `refresh()` reloads them when
 * another instance sharing the store ingested since (the stored version differs).
 */
export class KnowledgeBase {
  readonly #store: CampaignStore
  #documents = new Map<string, KbDocument>()
  #passages = new Map<string, string>()
  #index = new Bm25Index()
  #version = 0

  private constructor (store: CampaignStore) {
    this.#store = store
  }

  /** The knowledge base of the campaign store, loaded. */
  static async open (store: CampaignStore): Promise<KnowledgeBase> {
    const kb = new KnowledgeBase(store)
    await kb.#load(await kb.#storedVersion())
    return kb
  }

  /** Reload when the stored version is not the one in memory. */
  async refresh (): Promise<void> {
    const stored = await this.#storedVersion()
    if (stored !== this.#version) await this.#load(stored)
  }

  async #storedVersion (): Promise<number> {
    return await this.#store.table<number>(STATE).get(VERSION) ?? 0
  }

  async #load (version: number): Promise<void> {
    const documents = new Map<string, KbDocument>()
    const passages = new Map<string, string>()
    const index = new Bm25Index()
    for await (const { value } of this.#store.table<KbDocument>(DOCUMENTS).range()) documents.set(value.document_id, value)
    for await (const { key, value } of this.#store.table<string, [string, number]>(PASSAGES).range()) {
      passages.set(passageKey(key[0], key[1]), value)
      index.add(passageKey(key[0], key[1]), value)
    }
    this.#documents = documents
    this.#passages = passages
    this.#index = index
    this.#version = version
  }

  get documentCount (): number {
    return this.#documents.size
  }

  /** A stored document and its text (its passages, blank-line separated), or undefined. */
  document (documentId: string): { document: KbDocument, text: string } | undefined {
    const document = this.#documents.get(documentId)
    if (document === undefined) return undefined
    const passages = Array.from({ length: document.passage_count }, (_, i) => this.#passages.get(passageKey(documentId, i)) ?? '')
    return { document, text: passages.join('\n\n') }
  }

  /** Store a document (the same title and text replace the earlier copy) and index its passages. */
  async ingest (title: string, text: string, source: string): Promise<KbDocument> {
    const documentId = createHash('sha256').update(title).update('\0').update(text).digest('hex').slice(0, 16)
    const passages = await splitPassages(text, title)
    if (passages.length === 0) throw new BadRequest('text holds no words to index')
    const document: KbDocument = { document_id: documentId, title, source, ingested_at: new Date().toISOString(), passage_count: passages.length }
    // One ingest at a time: each counts the version up once.
    const { previous, version } = await this.#store.transaction('kb', async tx => {
      const documents = tx.table<KbDocument>(DOCUMENTS)
      const stored = tx.table<string, [string, number]>(PASSAGES)
      const previous = await documents.get(documentId)
      for (let i = 0; i < (previous?.passage_count ?? 0); i++) await stored.remove([documentId, i])
      for (const [i, passage] of passages.entries()) await stored.put([documentId, i], passage)
      await documents.put(documentId, document)
      const state = tx.table<number>(STATE)
      const version = (await state.get(VERSION) ?? 0) + 1
      await state.put(VERSION, version)
      return { previous, version }
    })
    if (version !== this.#version + 1) {
      // Another instance ingested since this one loaded: take everything from the store.
      await this.#load(version)
      return document
    }
    this.#version = version
    for (let i = 0; i < (previous?.passage_count ?? 0); i++) this.#forget(passageKey(documentId, i))
    passages.forEach((passage, i) => { this.#remember(passageKey(documentId, i), passage) })
    this.#documents.set(documentId, document)
    return document
  }

  #remember (key: string, passage: string): void {
    this.#passages.set(key, passage)
    this.#index.add(key, passage)
  }

  #forget (key: string): void {
    this.#passages.delete(key)
    this.#index.remove(key)
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
        text: this.#passages.get(passageKey(documentId, index)) ?? '',
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

declare module '../../module-kit.js' {
  interface ModuleKit {
    /** The knowledge base: the documents answers cite. */
    kb: KnowledgeBase
  }
}
