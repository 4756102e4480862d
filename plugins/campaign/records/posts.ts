// The post stream the sentiment monitor ingests (social posts, comments, messages), analysed once on
// the way in and kept in the campaign store in posting order, bounded by [campaign].max_posts. Other modules
// (narratives, local issues, factions) read it from here.
import { createHash } from 'node:crypto'
import type { LanguageEngine } from '../language/engine.js'
import { timeKey, type RecordStore } from '../modules/kit.js'

export interface Post {
  post_id: string
  text: string
  source: string
  author: string
  location: string
  /** ISO 8601 UTC. */
  posted_at: string
  language: string
  /** AFINN sum, polarity in (−1, 1) and its label, as the engine gave them at ingest. */
  score: number
  polarity: number
  label: 'positive' | 'negative' | 'neutral'
  /** Distinct content terms (at most 40). */
  terms: string[]
}

export interface IncomingPost {
  text: string
  source: string
  author: string
  location: string
  posted_at: Date
}

/** Posts keyed by posting time and a hash of source, author and text: the same post twice is one post. */
export class PostStore {
  readonly #store: RecordStore<Post>

  constructor (store: RecordStore<Post>) {
    this.#store = store
  }

  async count (): Promise<number> {
    return await this.#store.count()
  }

  static keyOf (post: IncomingPost): string {
    const digest = createHash('sha256').update(`${post.source}\0${post.author}\0${post.text}`).digest('hex').slice(0, 12)
    return timeKey(post.posted_at, digest)
  }

  /** Analyse and store `posts`; answers how many were new and how many were already stored. */
  async ingest (posts: readonly IncomingPost[], engine: LanguageEngine): Promise<{ ingested: number, duplicates: number }> {
    const fresh = new Map<string, Post>()
    for (const post of posts) {
      const key = PostStore.keyOf(post)
      if (fresh.has(key) || await this.#store.has(key)) continue
      const mood = engine.sentiment(post.text)
      fresh.set(key, {
        post_id: key,
        text: post.text,
        source: post.source,
        author: post.author,
        location: post.location,
        posted_at: post.posted_at.toISOString(),
        language: engine.language(post.text).language,
        score: mood.score,
        polarity: mood.polarity,
        label: mood.label,
        terms: [...new Set(engine.terms(post.text))].slice(0, 40)
      })
    }
    await this.#store.putAll([...fresh])
    return { ingested: fresh.size, duplicates: posts.length - fresh.size }
  }

  /** The same posts, all at once (faster when every one of them is needed). */
  async list (from: Date | undefined, to: Date | undefined, filter: PostFilter = {}): Promise<Post[]> {
    const term = filter.term?.toLowerCase()
    return (await this.#store.list(from, to)).filter(post => (filter.source === undefined || post.source === filter.source) && (term === undefined || post.terms.includes(term)))
  }

  /** Posts posted between `from` and `to` (inclusive), oldest first, matching the filter. */
  async * between (from: Date | undefined, to: Date | undefined, filter: PostFilter = {}): AsyncIterable<Post> {
    const term = filter.term?.toLowerCase()
    for await (const post of this.#store.between(from, to)) {
      if (filter.source !== undefined && post.source !== filter.source) continue
      if (term !== undefined && !post.terms.includes(term)) continue
      yield post
    }
  }
}

export interface PostFilter {
  source?: string
  /** One content term the post must hold (lower-cased). */
  term?: string
}
