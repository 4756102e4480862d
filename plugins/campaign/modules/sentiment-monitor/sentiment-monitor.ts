// Sentiment monitor: ingest-posts analyses and stores posts; sentiment-summary aggregates them by hour
// or day and by source (from the counts the post stream keeps as posts are written); detect-spikes
// finds hours whose mean sentiment or volume departs from the rolling baseline of the hours before (a z-score).
import { Type } from '../../../../kernel/schema.js'
import { moduleFunction, type ModuleFunction, mean, round, standardDeviation, bucketPosts, type BucketStats, LABELS, type Label, type Mood, type Tally, checkText, instant, type ModuleKit, TextArg, timeRange, TimeRangeArgs, type Post } from '../../module-kit.js'

/** Longest single post, in characters. */
export const MAX_POST_CHARS = 5_000
/** Smallest standard deviation of the baseline: a flat baseline would make every wobble a spike. */
const POLARITY_SD_FLOOR = 0.05

const Range = {
  ...TimeRangeArgs,
  source: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  term: Type.Optional(Type.String({ minLength: 1, maxLength: 60, description: 'only posts holding this word' }))
}

const IngestArgs = Type.Object({
  posts: Type.Array(Type.Object({
    text: TextArg('the post'),
    source: Type.String({ minLength: 1, maxLength: 100, default: 'unknown' }),
    author: Type.String({ maxLength: 200, default: '' }),
    location: Type.String({ maxLength: 200, default: '' }),
    posted_at: Type.Optional(Type.String())
  }, { additionalProperties: false }), { minItems: 1, maxItems: 1000 })
}, { additionalProperties: false })

const SummaryArgs = Type.Object({ ...Range, bucket: Type.Union([Type.Literal('hour'), Type.Literal('day')], { default: 'day' }) }, { additionalProperties: false })

const SpikeArgs = Type.Object({
  ...Range,
  window: Type.Integer({ minimum: 3, maximum: 168, default: 24, description: 'baseline: this many earlier hours with posts' }),
  threshold: Type.Number({ minimum: 1, maximum: 10, default: 2.5, description: '|z| from which an hour is a spike' }),
  min_posts: Type.Integer({ minimum: 1, maximum: 1000, default: 3, description: 'hours with fewer posts are not judged' })
}, { additionalProperties: false })

interface RangeArgs { from?: string, to?: string, source?: string, term?: string }

async function postsIn (kit: ModuleKit, args: RangeArgs): Promise<Post[]> {
  const { from, to } = timeRange(args)
  return await kit.posts.list(from, to, { source: args.source, term: args.term })
}

/** How many posts hold each term (of three characters or more). */
function termPosts (posts: readonly Post[]): Map<string, number> {
  const counts = new Map<string, number>()
  for (const post of posts) for (const term of post.terms) if (term.length >= 3) counts.set(term, (counts.get(term) ?? 0) + 1)
  return counts
}

/** Terms held by at least two of `here`'s posts, by share here − share there, best first. */
function overRepresented (here: ReadonlyMap<string, number>, hereTotal: number, there: (term: string) => number, thereTotal: number, limit: number): string[] {
  return [...here].filter(([, n]) => n >= 2)
    .map(([term, n]) => ({ term, lift: n / hereTotal - there(term) / Math.max(1, thereTotal) }))
    .sort((a, b) => b.lift - a.lift || a.term.localeCompare(b.term))
    .slice(0, limit).map(t => t.term)
}

/** Terms most over-represented in `posts` against `baseline`: share here − share there, at least two posts. */
export function distinctiveTerms (posts: readonly Post[], baseline: readonly Post[], limit: number): string[] {
  const there = termPosts(baseline)
  return overRepresented(termPosts(posts), posts.length, term => there.get(term) ?? 0, baseline.length, limit)
}

/** The distinctive terms of positive posts against the others, and of negative ones, counting terms once. */
function termsOfMoods (tally: Tally, limit: number): { positive: string[], negative: string[] } {
  const of = (label: Label): string[] => {
    const others = LABELS.filter(other => other !== label)
    const there = (term: string): number => others.reduce((n, other) => n + (tally.terms[other].get(term) ?? 0), 0)
    return overRepresented(tally.terms[label], tally.all[label], there, tally.all.count - tally.all[label], limit)
  }
  return { positive: of('positive'), negative: of('negative') }
}

/** The mean polarity of a mood's posts to three decimals (0 without posts), from the exact sum of their thousandths. */
const meanOf = (mood: Mood): number => mood.count === 0 ? 0 : Math.round(mood.polarity / mood.count) / 1000

/** sentiment-summary's answer from the counts of its range. */
export function summaryOf (tally: Tally): object {
  return {
    total: tally.all.count,
    positive: tally.all.positive,
    negative: tally.all.negative,
    neutral: tally.all.neutral,
    mean_polarity: meanOf(tally.all),
    bucket: tally.bucket,
    series: [...tally.slots].sort(([a], [b]) => a.localeCompare(b))
      .map(([start, mood]) => ({ bucket_start: start, count: mood.count, mean_polarity: meanOf(mood), positive: mood.positive, negative: mood.negative, neutral: mood.neutral })),
    by_source: [...tally.sources].map(([source, mood]) => ({ source, count: mood.count, mean_polarity: meanOf(mood) }))
      .sort((a, b) => b.count - a.count || a.source.localeCompare(b.source)),
    terms: termsOfMoods(tally, 8)
  }
}

export interface Spike {
  bucket_start: string
  kind: 'sentiment' | 'volume'
  direction: 'negative' | 'positive' | 'surge'
  count: number
  value: number
  baseline_mean: number
  baseline_sd: number
  z: number
  terms: string[]
  sample_posts: Array<{ post_id: string, text: string, source: string, polarity: number }>
}

/** The documented spike rule, over hourly buckets: see docs/campaign.md, "Sentiment monitor". */
export function findSpikes (hours: readonly BucketStats[], options: { window: number, threshold: number, minPosts: number }): Spike[] {
  const judged = hours.filter(h => h.count >= options.minPosts)
  const spikes: Spike[] = []
  judged.forEach((hour, i) => {
    const baseline = judged.slice(Math.max(0, i - options.window), i)
    if (baseline.length < 3) return
    const baselinePosts = baseline.flatMap(h => h.posts)
    const sample = (order: (a: Post, b: Post) => number): Spike['sample_posts'] => [...hour.posts].sort(order).slice(0, 3)
      .map(p => ({ post_id: p.post_id, text: p.text, source: p.source, polarity: p.polarity }))
    const polarities = baseline.map(h => h.mean_polarity)
    const sentimentMean = mean(polarities)
    const sentimentSd = Math.max(POLARITY_SD_FLOOR, standardDeviation(polarities))
    const sentimentZ = (hour.mean_polarity - sentimentMean) / sentimentSd
    if (Math.abs(sentimentZ) >= options.threshold) {
      const negative = sentimentZ < 0
      spikes.push({
        bucket_start: hour.bucket_start,
        kind: 'sentiment',
        direction: negative ? 'negative' : 'positive',
        count: hour.count,
        value: round(hour.mean_polarity),
        baseline_mean: round(sentimentMean),
        baseline_sd: round(sentimentSd),
        z: round(sentimentZ, 2),
        terms: distinctiveTerms(hour.posts, baselinePosts, 5),
        sample_posts: sample((a, b) => negative ? a.polarity - b.polarity : b.polarity - a.polarity)
      })
    }
    const counts = baseline.map(h => h.count)
    const countMean = mean(counts)
    // Counts are at least Poisson-noisy: the deviation is never taken below √mean.
    const countSd = Math.max(Math.sqrt(countMean), standardDeviation(counts))
    const volumeZ = (hour.count - countMean) / countSd
    if (volumeZ >= options.threshold) {
      spikes.push({
        bucket_start: hour.bucket_start,
        kind: 'volume',
        direction: 'surge',
        count: hour.count,
        value: hour.count,
        baseline_mean: round(countMean),
        baseline_sd: round(countSd),
        z: round(volumeZ, 2),
        terms: distinctiveTerms(hour.posts, baselinePosts, 5),
        sample_posts: sample((a, b) => a.posted_at.localeCompare(b.posted_at))
      })
    }
  })
  return spikes
}

export function sentimentMonitorFunctions (kit: ModuleKit): ModuleFunction[] {
  return [
    moduleFunction({
      name: 'ingest-posts',
      args: IngestArgs,
      handler: async ({ posts }) => {
        const now = new Date()
        const incoming = posts.map((post, i) => {
          checkText(`posts/${i}/text`, post.text, MAX_POST_CHARS)
          return { ...post, posted_at: post.posted_at === undefined ? now : instant(`posts/${i}/posted_at`, post.posted_at) }
        })
        const engine = await kit.language()
        const result = await kit.posts.ingest(incoming, engine)
        return { ...result, stored: await kit.posts.count(), engine: engine.name }
      }
    }),
    moduleFunction({
      name: 'sentiment-summary',
      args: SummaryArgs,
      handler: async args => {
        const engine = await kit.language()
        const { from, to } = timeRange(args)
        return { ...summaryOf(await kit.posts.tally(from, to, { source: args.source, term: args.term }, args.bucket)), engine: engine.name }
      }
    }),
    moduleFunction({
      name: 'detect-spikes',
      args: SpikeArgs,
      handler: async args => {
        const engine = await kit.language()
        const hours = bucketPosts(await postsIn(kit, args), 'hour')
        const spikes = findSpikes(hours, { window: args.window, threshold: args.threshold, minPosts: args.min_posts })
        return { hours: hours.length, window: args.window, threshold: args.threshold, spikes, engine: engine.name }
      }
    })
  ]
}
