// Narrative contagion: extract-narratives groups the post stream into narratives (a frequent term
// carried by several sources, with the terms that travel with it); predict-virality scores how fast
// a narrative spreads: its growth between two windows and the number of sources carrying it.
import { createHash } from 'node:crypto'
import { BadRequest } from '../../../../kernel/index.js'
import { Type } from '../../../../kernel/schema.js'
import { moduleFunction, type ModuleFunction, mean, round, checkText, instant, type ModuleKit, TextArg, timeRange, TimeRangeArgs, type Post } from '../../module-kit.js'

/** A term in more than this share of the posts is the conversation itself, not a narrative (with 20 posts or more). */
const MAX_ANCHOR_SHARE = 0.5
/** Terms in at least this share of an anchor's posts travel with it. */
const CO_TERM_SHARE = 0.6
/** Clusters overlapping an earlier narrative this much (Jaccard) are that narrative. */
const SAME_NARRATIVE = 0.5

export interface Narrative {
  narrative_id: string
  label: string
  terms: string[]
  post_count: number
  sources: Array<{ source: string, count: number }>
  first_seen: string
  last_seen: string
  mean_polarity: number
  sample_posts: Array<{ post_id: string, text: string, source: string, posted_at: string }>
}

function counted (items: Iterable<string>): Map<string, number> {
  const counts = new Map<string, number>()
  for (const item of items) counts.set(item, (counts.get(item) ?? 0) + 1)
  return counts
}

const isTerm = (term: string): boolean => term.length >= 3 && !/^\d+$/.test(term)

export function extractNarratives (posts: readonly Post[], options: { minPosts: number, minSources: number }): Narrative[] {
  const holders = new Map<string, Post[]>()
  for (const post of posts) {
    for (const term of post.terms) {
      if (!isTerm(term)) continue
      const list = holders.get(term)
      if (list === undefined) holders.set(term, [post])
      else list.push(post)
    }
  }
  const anchors = [...holders].filter(([, held]) => held.length >= options.minPosts &&
    new Set(held.map(p => p.source)).size >= options.minSources &&
    (posts.length < 20 || held.length <= MAX_ANCHOR_SHARE * posts.length))
    .sort((a, b) => b[1].length - a[1].length || a[0].localeCompare(b[0]))
  const found: Array<{ terms: string[], ids: Set<string>, posts: Post[] }> = []
  for (const [anchor, cluster] of anchors) {
    const ids = new Set(cluster.map(p => p.post_id))
    const absorbed = found.some(n => {
      let shared = 0
      for (const id of ids) if (n.ids.has(id)) shared++
      return shared / (ids.size + n.ids.size - shared) >= SAME_NARRATIVE
    })
    if (absorbed) continue
    const coTerms = [...counted(cluster.flatMap(p => p.terms.filter(t => t !== anchor && isTerm(t))))]
      .filter(([, n]) => n >= CO_TERM_SHARE * cluster.length)
      .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
      .slice(0, 4).map(([term]) => term)
    found.push({ terms: [anchor, ...coTerms], ids, posts: cluster })
  }
  return found.map(({ terms, posts: held }) => {
    const ordered = [...held].sort((a, b) => a.posted_at.localeCompare(b.posted_at))
    return {
      narrative_id: createHash('sha256').update([...terms].sort().join(' ')).digest('hex').slice(0, 12),
      label: terms.slice(0, 3).join(' · '),
      terms,
      post_count: held.length,
      sources: [...counted(held.map(p => p.source))].map(([source, count]) => ({ source, count })).sort((a, b) => b.count - a.count || a.source.localeCompare(b.source)),
      first_seen: ordered[0].posted_at,
      last_seen: ordered[ordered.length - 1].posted_at,
      mean_polarity: round(mean(held.map(p => p.polarity))),
      sample_posts: ordered.slice(0, 3).map(p => ({ post_id: p.post_id, text: p.text, source: p.source, posted_at: p.posted_at }))
    }
  }).sort((a, b) => b.post_count - a.post_count || a.label.localeCompare(b.label))
}

/** Whether a post carries a narrative: at least 60 % of its terms (at least one). */
export function carries (post: Pick<Post, 'terms'>, terms: readonly string[]): boolean {
  const needed = Math.max(1, Math.ceil(terms.length * CO_TERM_SHARE))
  return terms.filter(term => post.terms.includes(term)).length >= needed
}

export interface Virality {
  recent_posts: number
  previous_posts: number
  growth: number
  sources_recent: number
  posts_per_hour: number
  doubling_time_hours: number | null
  projected_posts: number
  score: number
  level: 'low' | 'medium' | 'high'
}

/**
 * r1, r0: posts in the last window and the one before; growth g = (r1 + 1) / (r0 + 1); s: sources in
 * the last window. z = ln g + 0.5·ln(1 + r1) + 0.5·(s − 1) − 1.5, score = 1 / (1 + e^−z).
 */
export function virality (posts: readonly Post[], at: Date, windowHours: number, horizonHours: number): Virality {
  const windowMs = windowHours * 3_600_000
  const age = (p: Post): number => at.getTime() - Date.parse(p.posted_at)
  const recent = posts.filter(p => age(p) >= 0 && age(p) < windowMs)
  const previous = posts.filter(p => age(p) >= windowMs && age(p) < 2 * windowMs)
  const growth = (recent.length + 1) / (previous.length + 1)
  const sources = new Set(recent.map(p => p.source)).size
  const z = Math.log(growth) + 0.5 * Math.log(1 + recent.length) + 0.5 * (sources - 1) - 1.5
  const score = round(1 / (1 + Math.exp(-z)))
  const rate = recent.length / windowHours
  return {
    recent_posts: recent.length,
    previous_posts: previous.length,
    growth: round(growth),
    sources_recent: sources,
    posts_per_hour: round(rate),
    doubling_time_hours: growth > 1 ? round(windowHours * Math.LN2 / Math.log(growth), 1) : null,
    projected_posts: Math.round(rate * horizonHours * Math.min(growth, 4)),
    score,
    level: score >= 0.7 ? 'high' : score >= 0.4 ? 'medium' : 'low'
  }
}

export function narrativeFunctions (kit: ModuleKit): ModuleFunction[] {
  return [
    moduleFunction({
      name: 'extract-narratives',
      args: Type.Object({
        ...TimeRangeArgs,
        min_posts: Type.Integer({ minimum: 2, maximum: 1000, default: 3 }),
        min_sources: Type.Integer({ minimum: 1, maximum: 100, default: 2 }),
        limit: Type.Integer({ minimum: 1, maximum: 50, default: 10 })
      }, { additionalProperties: false }),
      handler: async args => {
        const engine = await kit.language()
        const { from, to } = timeRange(args)
        const posts = (await kit.posts.list(from, to))
        const narratives = extractNarratives(posts, { minPosts: args.min_posts, minSources: args.min_sources })
        return { posts: posts.length, narratives: narratives.slice(0, args.limit), engine: engine.name }
      }
    }),
    moduleFunction({
      name: 'predict-virality',
      args: Type.Object({
        terms: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 60 }), { minItems: 1, maxItems: 10, description: 'a narrative\'s terms' })),
        text: Type.Optional(TextArg('a message whose spread to predict (its keywords stand for the narrative)')),
        at: Type.Optional(Type.String({ description: 'the moment to predict from (ISO 8601); default now' })),
        window_hours: Type.Integer({ minimum: 1, maximum: 168, default: 6 }),
        horizon_hours: Type.Integer({ minimum: 1, maximum: 168, default: 24 })
      }, { additionalProperties: false }),
      handler: async args => {
        const engine = await kit.language()
        if (args.text !== undefined) checkText('text', args.text)
        const terms = args.terms?.map(t => t.toLowerCase()) ?? (args.text === undefined ? [] : engine.keywords(args.text, 5).map(k => k.term))
        if (terms.length === 0) throw new BadRequest('invalid arguments: /terms: give the narrative\'s terms, or a text with words to match')
        const at = args.at === undefined ? new Date() : instant('at', args.at)
        const since = new Date(at.getTime() - 2 * args.window_hours * 3_600_000)
        const posts = (await kit.posts.list(since, at)).filter(p => carries(p, terms))
        return {
          terms,
          at: at.toISOString(),
          window_hours: args.window_hours,
          horizon_hours: args.horizon_hours,
          ...virality(posts, at, args.window_hours, args.horizon_hours),
          method: 'growth between two windows and the number of sources carrying it (see docs/campaign.md)',
          engine: engine.name
        }
      }
    })
  ]
}
