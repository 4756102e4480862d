// The post stream the sentiment monitor ingests (social posts, comments, messages), analysed once on
// the way in and kept in the campaign store in posting order, bounded by [campaign].max_posts. Other modules
// (narratives, local issues, factions) read it from here. The buckets of post-buckets.ts change in the
// transaction that writes or evicts posts, and sentiment summaries are tallied from them.
import { createHash } from 'node:crypto'
import type { LanguageEngine } from '../language/engine.js'
import { RecordStore, timeKey } from '../modules/kit.js'
import type { CampaignStore } from '../store/contract.js'
import type { Bucket } from './hourly.js'
import { BucketChanges, bucketsReady, buildBuckets, planRange, Tally, tallyBuckets } from './post-buckets.js'

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

const POSTS = 'posts'
/** What every transaction writing posts holds: one writer of the stream at a time. */
const SUBJECT = `records:${POSTS}`

/** Posts keyed by posting time and a hash of source, author and text: the same post twice is one post. */
export class PostStore {
  readonly #store: CampaignStore
  readonly #records: RecordStore<Post>
  readonly #max: number
  readonly #buildFailed: (err: unknown) => void
  #building: Promise<void> | undefined

  /** `max`: the most posts kept; `buildFailed` hears of a build of the buckets that failed (the next summary tries again). */
  constructor (store: CampaignStore, max: number, buildFailed: (err: unknown) => void = () => {}) {
    this.#store = store
    this.#records = new RecordStore<Post>(store, POSTS, max)
    this.#max = max
    this.#buildFailed = buildFailed
  }

  async count (): Promise<number> {
    return await this.#records.count()
  }

  static keyOf (post: IncomingPost): string {
    const digest = createHash('sha256').update(`${post.source}\0${post.author}\0${post.text}`).digest('hex').slice(0, 12)
    return timeKey(post.posted_at, digest)
  }

  /**
   * Analyse and store `posts`; answers how many were new and how many were already stored. The new
   * posts, the oldest evicted beyond the bound and the buckets change in one transaction.
   */
  async ingest (posts: readonly IncomingPost[], engine: LanguageEngine): Promise<{ ingested: number, duplicates: number }> {
    const analysed = new Map<string, Post>()
    for (const post of posts) {
      const key = PostStore.keyOf(post)
      if (analysed.has(key) || await this.#records.has(key)) continue
      const mood = engine.sentiment(post.text)
      analysed.set(key, {
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
    return await this.#store.transaction(SUBJECT, async tx => {
      const table = tx.table<Post>(POSTS)
      const fresh: Post[] = []
      for (const post of analysed.values()) if (!await table.has(post.post_id)) fresh.push(post)
      // The oldest beyond the bound, stored or new (a new post may be older than every stored one): those stored go, those new are not written.
      const excess = await table.count() + fresh.length - this.#max
      const oldest = excess <= 0
        ? []
        : [...(await table.list({ limit: excess })).map(({ value }) => ({ post: value, stored: true })), ...fresh.map(post => ({ post, stored: false }))]
            .sort((a, b) => a.post.post_id < b.post.post_id ? -1 : 1).slice(0, excess)
      const skipped = new Set(oldest.filter(o => !o.stored).map(o => o.post.post_id))
      const changes = await bucketsReady(tx) ? new BucketChanges(tx) : undefined
      for (const post of fresh) {
        if (skipped.has(post.post_id)) continue
        await table.put(post.post_id, post)
        await changes?.post(post, 1)
      }
      for (const { post } of oldest.filter(o => o.stored)) {
        await table.remove(post.post_id)
        await changes?.post(post, -1)
      }
      await changes?.write()
      return { ingested: fresh.length, duplicates: posts.length - fresh.length }
    })
  }

  /** Build the buckets from the stored posts unless they are built; one build at a time in this process. */
  async prepare (): Promise<void> {
    this.#building ??= this.#store.transaction(SUBJECT, async tx => {
      if (await bucketsReady(tx)) return
      const posts = tx.table<Post>(POSTS)
      await buildBuckets(tx, (async function * () { for await (const { value } of posts.range()) yield value })())
    }).finally(() => { this.#building = undefined })
    await this.#building
  }

  /**
   * The counts of a sentiment summary over the posts posted between `from` and `to` (inclusive)
   * matching the filter: from the buckets and the posts of the hours the range starts or ends inside;
   * from the posts themselves with a term to match, or while the buckets are not built (a build then starts).
   */
  async tally (from: Date | undefined, to: Date | undefined, filter: PostFilter, bucket: Bucket): Promise<Tally> {
    const tally = new Tally(bucket)
    if (filter.term !== undefined || !await bucketsReady(this.#store)) {
      if (filter.term === undefined) this.prepare().catch(this.#buildFailed)
      for (const post of await this.list(from, to, filter)) tally.addPost(post)
      return tally
    }
    const plan = planRange(from?.getTime(), to?.getTime())
    await tallyBuckets(this.#store, plan, tally, filter.source)
    for (const edge of plan.posts) for (const post of await this.list(new Date(edge.from), new Date(edge.to), filter)) tally.addPost(post)
    return tally
  }

  /** The same posts, all at once (faster when every one of them is needed). */
  async list (from: Date | undefined, to: Date | undefined, filter: PostFilter = {}): Promise<Post[]> {
    const term = filter.term?.toLowerCase()
    return (await this.#records.list(from, to)).filter(post => (filter.source === undefined || post.source === filter.source) && (term === undefined || post.terms.includes(term)))
  }

  /** Posts posted between `from` and `to` (inclusive), oldest first, matching the filter. */
  async * between (from: Date | undefined, to: Date | undefined, filter: PostFilter = {}): AsyncIterable<Post> {
    const term = filter.term?.toLowerCase()
    for await (const post of this.#records.between(from, to)) {
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
