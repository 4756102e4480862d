// The charts' regular time axis (plugins/campaign/ui/src/series.ts) over series as the server makes
// them: the sentiment summary's hourly and daily buckets and call-trends' days and ISO weeks, which
// leave out every bucket without data. Each step between the first bucket and the last gets a slot, so a
// stretch without data is a gap rather than a line joining its two sides.
import t from 'tap'
import { callBucket } from '../../../plugins/campaign/modules/call-intelligence/call-intelligence.js'
import { bucketPosts } from '../../../plugins/campaign/records/hourly.js'
import type { Post } from '../../../plugins/campaign/records/posts.js'
import { isolated, regularSlots, STEP_SECONDS } from '../../../plugins/campaign/ui/src/series.js'

const post = (posted_at: string, polarity: number): Post => ({
  post_id: posted_at, text: '', source: 'feed', author: 'a', location: '', posted_at, language: 'en',
  score: polarity * 5, polarity, label: polarity > 0 ? 'positive' : polarity < 0 ? 'negative' : 'neutral', terms: []
})

t.test('hourly sentiment: the hours without posts are empty slots, the values stay at their hours', async t => {
  // A morning of posts, nothing from 11:00 to 14:59, an afternoon, nothing overnight, one post at 09:20 the next day.
  const posts = ['2026-05-01T09:05:00Z', '2026-05-01T09:40:00Z', '2026-05-01T10:15:00Z', '2026-05-01T15:30:00Z', '2026-05-01T16:10:00Z', '2026-05-02T09:20:00Z']
    .map((at, i) => post(at, [0.5, 0.3, -0.2, -0.6, 0.1, 0.4][i]))
  const series = bucketPosts(posts, 'hour')
  t.equal(series.length, 5, 'the server leaves the empty hours out')
  const slots = regularSlots(series, s => s.bucket_start, STEP_SECONDS.hour)
  t.equal(slots.length, 25, '09:00 on the 1st to 09:00 on the 2nd')
  t.same(slots.map(s => s.at), Array.from({ length: 25 }, (_, i) => Date.parse('2026-05-01T09:00:00Z') / 1000 + i * 3600), 'one slot an hour')
  const values = slots.map(s => s.item === undefined ? null : s.item.mean_polarity)
  t.same(values.slice(0, 8), [0.4, -0.2, null, null, null, null, -0.6, 0.1], 'two hours, four empty, two hours')
  t.same(values.slice(8, 24), Array(16).fill(null), 'the night is empty')
  t.equal(values[24], 0.4, 'the last post at 09:00 on the 2nd')
  t.same(slots.filter(s => s.item !== undefined).map(s => s.item?.bucket_start), series.map(s => s.bucket_start), 'every bucket in its slot, in order')
  t.same(isolated(values), [24], 'the lone last hour is drawn as a point; the pairs are lines')
})

t.test('daily sentiment across a month boundary', async t => {
  const series = bucketPosts(['2026-04-29T12:00:00Z', '2026-05-02T08:00:00Z', '2026-05-03T23:59:00Z'].map(at => post(at, 0.2)), 'day')
  const slots = regularSlots(series, s => s.bucket_start, STEP_SECONDS.day)
  t.same(slots.map(s => new Date(s.at * 1000).toISOString().slice(0, 10)), ['2026-04-29', '2026-04-30', '2026-05-01', '2026-05-02', '2026-05-03'])
  t.same(slots.map(s => s.item?.count ?? 0), [1, 0, 0, 1, 1])
})

t.test('call trends: days and ISO weeks as call-trends names them (YYYY-MM-DD)', async t => {
  const calls = ['2026-05-04T18:00:00Z', '2026-05-05T09:00:00Z', '2026-05-09T17:00:00Z', '2026-05-27T10:00:00Z']
  const days = [...new Set(calls.map(c => callBucket(c, 'day')))]
  t.same(regularSlots(days, d => d, STEP_SECONDS.day).map(s => s.item ?? null).slice(0, 6), ['2026-05-04', '2026-05-05', null, null, null, '2026-05-09'])
  const weeks = [...new Set(calls.map(c => callBucket(c, 'week')))]
  t.same(weeks, ['2026-05-04', '2026-05-25'], 'Mondays')
  t.same(regularSlots(weeks, w => w, STEP_SECONDS.week).map(s => s.item ?? null), ['2026-05-04', null, null, '2026-05-25'], 'two empty weeks between')
})

t.test('edges: no buckets, one bucket, values at the ends', async t => {
  t.same(regularSlots([], (b: string) => b, STEP_SECONDS.day), [])
  t.same(regularSlots(['2026-05-04'], b => b, STEP_SECONDS.day), [{ at: Date.parse('2026-05-04') / 1000, item: '2026-05-04' }])
  t.same(isolated([7]), [0], 'a single value')
  t.same(isolated([1, null, 2, 3, null, 4]), [0, 5], 'alone at either end')
  t.same(isolated([null, 1, 2, null]), [], 'a pair is a line')
  t.same(isolated([]), [])
})
