// One numbered list of what a composed result drew on — knowledge-base passages, posts, commitments,
// regulatory analyses, donations, compliance checks — so that its text and evidence can cite [n] and
// its `sources` lists each once, as kb-query's citations do ("[1] Title, passage 2").
import type { CitedSource } from './counter-message.js'
import type { Post } from '../records/posts.js'

export type SourceKind = 'passage' | 'post' | 'commitment' | 'regulation' | 'donations' | 'compliance-check' | 'glossary' | 'document' | 'template'

export interface ListedSource {
  cite: number
  kind: SourceKind
  id: string
  line: string
  /** The text itself, when a prompt needs it (a passage). */
  text?: string
}

/** At most this many characters of a post quoted in its source line. */
const POST_QUOTE = 80

const quote = (text: string, max: number): string => {
  const plain = text.replace(/\s+/g, ' ').trim()
  return plain.length <= max ? plain : `${plain.slice(0, max - 1).replace(/\s+\S*$/, '')}…`
}

export class SourceList {
  readonly #items: ListedSource[] = []

  /** The cite number of a source, added when new (the same kind and id are one source). */
  add (kind: SourceKind, id: string, line: string, text?: string): number {
    const known = this.#items.find(s => s.kind === kind && s.id === id)
    if (known !== undefined) return known.cite
    const cite = this.#items.length + 1
    this.#items.push({ cite, kind, id, line, ...(text !== undefined ? { text } : {}) })
    return cite
  }

  /** A knowledge-base passage, cited as kb-query cites it. */
  passage (source: Pick<CitedSource, 'document_id' | 'passage' | 'title' | 'text'>): number {
    return this.add('passage', `${source.document_id}#${source.passage}`, `${source.title}, passage ${source.passage + 1}`, source.text)
  }

  post (post: Pick<Post, 'post_id' | 'text' | 'source' | 'author' | 'posted_at'>): number {
    const who = post.author !== '' ? `${post.author} on ${post.source}` : post.source
    return this.add('post', post.post_id, `post by ${who}, ${post.posted_at.slice(0, 10)}: “${quote(post.text, POST_QUOTE)}”`)
  }

  get items (): readonly ListedSource[] {
    return this.#items
  }

  /** "[n] …" lines, in cite order. */
  get lines (): string[] {
    return this.#items.map(s => `[${s.cite}] ${s.line}`)
  }
}
