// The sentiment monitor on a planted post stream (fixtures/post-stream.ts) through the API: posts
// stored once, sentiment by hour, day and source, and the negative spike at hour 30. The summary read
// from the buckets kept as posts are written against the same summary counted from the posts, over
// ranges starting and ending anywhere, while the bound evicts posts, and after the buckets are built
// again for a store that has posts but no buckets (or buckets of another layout).
import t, { type Test } from 'tap'
import type { Kernel } from '../../../../kernel/index.js'
import { summaryOf } from '../../../../plugins/campaign/modules/sentiment-monitor/sentiment-monitor.js'
import { planRange, POST_BUCKET_TABLES, POST_BUCKETS_STATE, POST_HOURS, Tally } from '../../../../plugins/campaign/records/post-buckets.js'
import type { Post } from '../../../../plugins/campaign/records/posts.js'
import { arrayFrom } from '../../../../plugins/campaign/store/contract.js'
import { campaignApp, statusOf } from '../../../support/campaign.js'
import { hour, START, stream, type PostIn } from '../fixtures/post-stream.js'

t.test('sentiment monitor through the API', async t => {
  const { login: cookie, call } = await campaignApp(t)

  const posts = stream()
  const first = await call<{ ingested: number, duplicates: number, engine: string }>('ingest-posts', { posts: posts.slice(0, 200) })
  const second = await call<{ ingested: number, duplicates: number }>('ingest-posts', { posts: posts.slice(150) })
  t.same([first.ingested, second.ingested, second.duplicates], [200, posts.length - 200, 50], 'a post sent twice is stored once')
  t.match(first.engine, /^local/)

  const summary = await call<{ total: number, negative: number, series: Array<{ bucket_start: string, count: number, mean_polarity: number }>, by_source: Array<{ source: string }>, terms: { negative: string[] } }>(
    'sentiment-summary', { bucket: 'hour' })
  t.equal(summary.total, posts.length)
  t.equal(summary.series.length, 48)
  const worst = [...summary.series].sort((a, b) => a.mean_polarity - b.mean_polarity)[0]
  t.equal(worst.bucket_start, hour(30), 'the most negative hour is the planted one')
  t.ok(summary.terms.negative.includes('water'), `negative posts are about the water: ${summary.terms.negative.join(', ')}`)
  t.same(summary.by_source.map(s => s.source).sort(), ['city-news', 'facebook', 'forum', 'twitter'])
  const daily = await call<{ series: unknown[] }>('sentiment-summary', { bucket: 'day', source: 'forum' })
  t.equal(daily.series.length, 2, 'two days, one source')

  const { spikes } = await call<{ spikes: Array<{ bucket_start: string, kind: string, direction: string, z: number, terms: string[] }> }>('detect-spikes', { to: hour(35, 59) })
  const negative = spikes.filter(s => s.kind === 'sentiment' && s.direction === 'negative')
  t.same(negative.map(s => s.bucket_start), [hour(30)], 'one negative spike, at hour 30')
  t.ok(negative[0].z <= -2.5)
  t.ok(negative[0].terms.includes('water'))
  t.ok(spikes.some(s => s.kind === 'volume' && s.bucket_start === hour(30)), 'and a surge of posts in that hour')

  t.equal(await statusOf(call('ingest-posts', { posts: [{ text: 'x', posted_at: 'yesterday' }] })), 400, 'a time that is not ISO 8601')
  t.equal(await statusOf(call('ingest-posts', { posts: [{ text: 'x'.repeat(5001) }] })), 413, 'a post over 5,000 characters')
  t.equal(await statusOf(call('ingest-posts', { posts: [] })), 400, 'no posts')
  t.equal(await statusOf(call('ingest-posts', { posts: [{ text: 'hello' }] }, await cookie('readonly'))), 403, 'readonly never writes')
  t.equal(await statusOf(call('sentiment-summary', {}, await cookie('readonly'))), 200, 'readonly reads')
})

t.test('means from exact sums: an exact half rounds up, whatever order the posts came in', async t => {
  const post = (polarity: number, at: string): Post => ({ post_id: at, text: '', source: 's', author: '', location: '', posted_at: at, language: 'en', score: 1, polarity, label: 'positive', terms: [] })
  const tally = new Tally('hour')
  tally.addPost(post(0.578, hour(1, 10)))
  tally.addPost(post(0.577, hour(1, 20)))
  // The sum of the floats 0.577 and 0.578, halved, is 0.57749999…: rounding it gave 0.577.
  t.match(summaryOf(tally), { mean_polarity: 0.578, series: [{ count: 2, mean_polarity: 0.578 }], by_source: [{ source: 's', mean_polarity: 0.578 }] })
})

t.test('a range read as buckets and the posts of the hours it starts or ends inside', async t => {
  const at = (h: number, minute = 0, ms = 0): number => Date.parse(hour(h, minute)) + ms
  t.same(planRange(undefined, undefined), { posts: [], hours: { start: undefined, end: undefined }, dayTerms: { start: undefined, end: undefined }, hourTerms: [] }, 'everything: every bucket, no post')
  t.same(planRange(at(5, 17), at(52, 33)), {
    posts: [{ from: at(5, 17), to: at(6) - 1 }, { from: at(52), to: at(52, 33) }],
    hours: { start: '2026-05-04T06', end: '2026-05-06T04' },
    dayTerms: { start: '2026-05-05', end: '2026-05-06' },
    hourTerms: [{ start: '2026-05-04T06', end: '2026-05-05T00' }, { start: '2026-05-06T00', end: '2026-05-06T04' }]
  }, 'a whole day between two partial ones')
  t.same(planRange(at(3), at(4) - 1), { posts: [], hours: { start: '2026-05-04T03', end: '2026-05-04T04' }, hourTerms: [{ start: '2026-05-04T03', end: '2026-05-04T04' }] }, 'one whole hour, inclusive to its last millisecond')
  t.same(planRange(at(3, 10), at(3, 50)), { posts: [{ from: at(3, 10), to: at(3, 50) }], hourTerms: [] }, 'inside one hour: its posts')
  t.same(planRange(at(24), undefined), { posts: [], hours: { start: '2026-05-05T00', end: undefined }, dayTerms: { start: '2026-05-05', end: undefined }, hourTerms: [] }, 'from a midnight on')
})

/** A seeded generator of numbers in [0, 1). */
function seeded (seed: number): () => number {
  let state = seed
  return () => {
    state = (state * 1103515245 + 12345) % 2147483648
    return state / 2147483648
  }
}

const MOOD_WORDS = ['great', 'wonderful', 'love', 'happy', 'proud', 'terrible', 'awful', 'angry', 'broken', 'shameful', 'fine', 'okay']
const TOPICS = ['transit', 'housing', 'water', 'schools', 'parks', 'budget', 'bridge', 'library', 'constructor', 'toString']

/**
 * `count` posts over five days (from a day before the fixture's start), each of a few topic and mood
 * words, an id of its own (a term one post holds), and now and then a rare word another post far
 * away in time holds too; topics and sources include names every object has (constructor, __proto__).
 */
function variedPosts (count: number, random: () => number): PostIn[] {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]
  return Array.from({ length: count }, (_, i) => {
    const words = [pick(TOPICS), pick(MOOD_WORDS), pick(TOPICS), ...(random() < 0.5 ? [pick(MOOD_WORDS)] : []), `id${i}x`, ...(i % 7 === 0 ? [`rare${i % 35}`] : [])]
    return { text: words.join(' '), source: pick(['twitter', 'forum', 'news', '__proto__']), author: `a${i % 13}`, posted_at: new Date(START - 86_400_000 + Math.floor(random() * 5 * 86_400_000)).toISOString() }
  })
}

/** The summary of the posts stored in a range, counted from the posts themselves. */
async function summaryFromPosts (kernel: Kernel, args: { bucket: 'hour' | 'day', from?: string, to?: string, source?: string }): Promise<object> {
  const tally = new Tally(args.bucket)
  const from = args.from === undefined ? undefined : new Date(args.from)
  const to = args.to === undefined ? undefined : new Date(args.to)
  for (const post of await kernel.service('campaign').posts.list(from, to, { source: args.source })) tally.addPost(post)
  return summaryOf(tally)
}

type Call = <T>(name: string, args: object) => Promise<T>

/** sentiment-summary's answer (without the engine's name) against the summary counted from the posts, for each of `cases`. */
async function agrees (t: Test, kernel: Kernel, call: Call, cases: ReadonlyArray<{ bucket: 'hour' | 'day', from?: string, to?: string, source?: string }>, what: string): Promise<void> {
  const differing: string[] = []
  for (const args of cases) {
    const { engine: _engine, ...answer } = await call<{ engine: string }>('sentiment-summary', args)
    if (JSON.stringify(answer) !== JSON.stringify(await summaryFromPosts(kernel, args))) differing.push(JSON.stringify(args))
  }
  t.same(differing, [], `${what}: ${cases.length} summaries as counted from the posts`)
}

/** Summaries of the whole stream, of ranges starting and ending anywhere (inside hours, on hours, on days), by hour and day, for all sources and one. */
function summaryCases (random: () => number): Array<{ bucket: 'hour' | 'day', from?: string, to?: string, source?: string }> {
  const span = 5 * 86_400_000
  const anywhere = (): number => START - 86_400_000 + Math.floor(random() * span)
  const ranges: Array<{ from?: string, to?: string }> = [{}, { from: hour(0) }, { to: hour(30, 7) }, { from: hour(24), to: new Date(Date.parse(hour(48)) - 1).toISOString() }, { from: hour(29, 59), to: hour(31) }, { from: hour(30, 6), to: hour(30, 9) }]
  for (let i = 0; i < 8; i++) {
    const [a, b] = [anywhere(), anywhere()].sort((x, y) => x - y)
    ranges.push({ from: new Date(a).toISOString(), to: new Date(b).toISOString() })
  }
  return ranges.flatMap(range => (['hour', 'day'] as const).flatMap(bucket => [{ bucket, ...range }, { bucket, ...range, source: '__proto__' }, { bucket, ...range, source: 'forum' }]))
}

t.test('the summary from the buckets is the summary counted from the posts', async t => {
  const random = seeded(20260504)
  const { kernel, call } = await campaignApp(t)
  const posts = [...stream(), ...variedPosts(400, random)].sort(() => random() - 0.5)
  for (let i = 0; i < posts.length; i += 90) await call('ingest-posts', { posts: posts.slice(i, i + 90) })
  await agrees(t, kernel, call, summaryCases(random), 'posts written in no particular order')
  const { engine: _engine, ...byTerm } = await call<{ engine: string, total: number }>('sentiment-summary', { bucket: 'hour', term: 'Water' })
  t.ok(byTerm.total > 0)
  const tally = new Tally('hour')
  for (const post of await kernel.service('campaign').posts.list(undefined, undefined, { term: 'water' })) tally.addPost(post)
  t.same(byTerm, summaryOf(tally), 'a summary of the posts holding a term')
})

t.test('the buckets follow the posts the bound evicts, new posts older than every stored one included', async t => {
  const random = seeded(7)
  const { kernel, call } = await campaignApp(t, { max_posts: 100 })
  const posts = variedPosts(360, random)
  for (let i = 0; i < posts.length; i += 45) {
    await call('ingest-posts', { posts: posts.slice(i, i + 45) })
    await agrees(t, kernel, call, summaryCases(random).filter((_, k) => k % 9 === 0), `after ${i + 45} posts written`)
  }
  t.equal(await kernel.service('campaign').posts.count(), 100, 'the bound holds')
})

t.test('buckets built again for posts stored without them, or for another layout', async t => {
  const random = seeded(99)
  const { kernel, call } = await campaignApp(t)
  const { store, posts } = kernel.service('campaign')
  for (const batch of [variedPosts(150, random), stream()]) await call('ingest-posts', { posts: batch })
  const cases = summaryCases(random).filter((_, k) => k % 5 === 0)
  const hours = store.table<{ sources: Array<{ count: number }> }>(POST_HOURS)
  const counted = async (): Promise<number> => (await arrayFrom(hours.range())).reduce((n, { value }) => n + value.sources.reduce((m, s) => m + s.count, 0), 0)
  t.equal(await counted(), await posts.count(), 'the buckets count every post')

  // What a store written before the buckets holds: its posts alone.
  await store.transaction('records:posts', async tx => {
    for (const name of POST_BUCKET_TABLES) {
      const table = tx.table(name)
      for (const { key } of await table.list()) await table.remove(key)
    }
  })
  await agrees(t, kernel, call, cases, 'without buckets, from the posts')
  await posts.prepare()
  t.equal(await counted(), await posts.count(), 'built from the stored posts')
  await agrees(t, kernel, call, cases, 'from the buckets built')

  // A summary reads the buckets: one changed by hand shows in it, until a store of another layout builds them again.
  const [first] = await hours.list({ limit: 1 })
  await hours.put(first.key, { sources: first.value.sources.map(s => ({ ...s, count: s.count + 5 })) })
  const { total } = await call<{ total: number }>('sentiment-summary', {})
  t.equal(total, await posts.count() + 5 * first.value.sources.length, 'read from the buckets')
  await store.table(POST_BUCKETS_STATE).put('state', { version: 0 })
  await posts.prepare()
  t.equal(await counted(), await posts.count())
  await agrees(t, kernel, call, cases, 'after the build for another layout')
})
