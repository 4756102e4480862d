// The sentiment monitor on a planted post stream (fixtures/post-stream.ts) through the API: posts
// stored once, sentiment by hour, day and source, and the negative spike at hour 30.
import t from 'tap'
import { campaignApp, statusOf } from '../../../support/campaign.js'
import { hour, stream } from '../fixtures/post-stream.js'

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
