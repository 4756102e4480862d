// What the briefing modules read from other modules' stores about a subject: posts of the post stream
// carrying it, stored media articles covering it (with their tone toward it), commitments on it.
import type { LanguageEngine, RecordStore, Post, PostStore } from '../../module-kit.js'
import type { Commitment } from '../accountability/index.js'
import { topicRelevance, TOPIC_MATCH, type StoredArticle } from '../media-monitor/index.js'
import { carries } from '../narrative-contagion/index.js'

/** Most posts about a subject read (the latest). */
export const MAX_SUBJECT_POSTS = 5_000

/** Posts since `from` carrying the subject's terms (at least 60 % of them, as narratives are matched), the latest MAX_SUBJECT_POSTS, oldest first. */
export async function postsAbout (posts: PostStore, terms: readonly string[], from: Date): Promise<Post[]> {
  const found: Post[] = []
  for await (const post of posts.between(from, undefined)) {
    if (!carries(post, terms)) continue
    found.push(post)
    if (found.length > MAX_SUBJECT_POSTS) found.shift()
  }
  return found
}

export interface Coverage {
  /** Articles covering the subject. */
  matched: number
  /** The newest of them, newest first. */
  newest: StoredArticle[]
}

/** Stored articles covering the subject: relevance (share of its terms among the article's) ≥ `min` (TOPIC_MATCH; 1 for a name: all its words). */
export async function articlesAbout (articles: RecordStore<StoredArticle>, terms: readonly string[], newest: number, min = TOPIC_MATCH): Promise<Coverage> {
  let matched = 0
  const kept: StoredArticle[] = []
  for await (const article of articles.between()) {
    if (topicRelevance(terms, article.terms) < min) continue
    matched++
    kept.push(article)
    if (kept.length > newest) kept.shift()
  }
  return { matched, newest: kept.reverse() }
}

/** The article's polarity toward `name` when it names it as an entity (any case), else its mean sentence polarity. */
export function polarityToward (article: StoredArticle, name: string): number {
  const needle = name.trim().toLowerCase()
  const entity = article.entity_sentiment.find(e => e.entity.toLowerCase() === needle) ?? article.entity_sentiment.find(e => e.entity.toLowerCase().includes(needle) || needle.includes(e.entity.toLowerCase()))
  return entity?.polarity ?? article.sentiment.mean_sentence_polarity
}

/** Commitments made by the subject (actor contains it, any case) or about it (their text holds ≥ 60 % of its terms). */
export function commitmentsOn (engine: LanguageEngine, commitments: Iterable<Commitment>, subject: string, terms: readonly string[]): Commitment[] {
  const needle = subject.trim().toLowerCase()
  const found: Commitment[] = []
  for (const c of commitments) {
    if (c.actor.toLowerCase().includes(needle) || carries({ terms: engine.terms(c.text) }, terms)) found.push(c)
  }
  return found
}

/** How a post is cited in a section's sources. */
export const postLine = (p: Pick<Post, 'post_id' | 'source' | 'posted_at'>): string => `post ${p.post_id} (${p.source}, ${p.posted_at.slice(0, 10)})`
/** How an article is cited. */
export const articleLine = (a: Pick<StoredArticle, 'article_id' | 'title' | 'outlet' | 'published_at'>): string => `article ${a.article_id}: “${a.title}”, ${a.outlet}, ${a.published_at.slice(0, 10)}`
/** How a commitment is cited. */
export const commitmentLine = (c: Pick<Commitment, 'commitment_id' | 'actor' | 'said_on'>): string => `commitment ${c.commitment_id} (${c.actor}, ${c.said_on})`
