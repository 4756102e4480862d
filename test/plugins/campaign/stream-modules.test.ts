// The sentiment monitor and narrative contagion on a planted post stream: two days of calm posts, a
// burst of angry posts about the water at hour 30, a "bridge toll" story spreading across three
// sources in the last hours, and a "parade" story one source repeats steadily.
import t from 'tap'
import { campaignApp, statusOf } from '../../support/campaign.js'

const START = Date.parse('2026-05-04T00:00:00Z')
const hour = (h: number, minute = 0): string => new Date(START + h * 3_600_000 + minute * 60_000).toISOString()
const SOURCES = ['twitter', 'facebook', 'forum']
const CALM = [
  'Lovely morning at the farmers market downtown.',
  'The library story hour was fun for the kids.',
  'Volunteers cleaned up the riverside park today.',
  'School board meeting tonight at seven.',
  'Nice to see new benches on Main Street.',
  'Great coffee at the community center fundraiser.'
]
const ANGRY = [
  'Furious about the water contamination, officials lied and hid it. Disgusting!',
  'The water is poisoned and nobody was warned. Outrageous and shameful.',
  'Terrible news about the water supply, this is a disaster for families.',
  'Angry that the water contamination was covered up. Unacceptable!'
]

interface PostIn { text: string, source: string, author: string, posted_at: string }

function stream (): PostIn[] {
  const posts: PostIn[] = []
  for (let h = 0; h < 48; h++) {
    for (let i = 0; i < 4; i++) posts.push({ text: CALM[(h + i) % CALM.length], source: SOURCES[i % 3], author: `resident${i}`, posted_at: hour(h, i * 10) })
  }
  for (let i = 0; i < 8; i++) posts.push({ text: ANGRY[i % ANGRY.length], source: SOURCES[i % 3], author: `angry${i}`, posted_at: hour(30, 5 + i) })
  // The bridge toll story: one post an hour in hours 36–41, then 2, 3, … 7 an hour across three sources.
  for (let h = 36; h < 48; h++) {
    const count = h < 42 ? 1 : h - 40
    for (let i = 0; i < count; i++) posts.push({ text: `They want a bridge toll on commuters, read the plan #${h}-${i}`, source: SOURCES[(h + i) % 3], author: `commuter${i}`, posted_at: hour(h, 30 + i) })
  }
  for (let h = 36; h < 48; h++) posts.push({ text: `Parade route announced for Saturday, edition ${h}`, source: 'city-news', author: 'city', posted_at: hour(h, 45) })
  return posts
}

t.test('sentiment monitor and narrative contagion through the API', async t => {
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

  const { narratives } = await call<{ narratives: Array<{ terms: string[], post_count: number, sources: unknown[] }> }>('extract-narratives', { from: hour(36) })
  const bridge = narratives.find(n => n.terms.includes('bridge'))
  t.ok(bridge !== undefined, `the bridge story is a narrative: ${JSON.stringify(narratives.map(n => n.terms))}`)
  t.ok(bridge?.terms.includes('toll'))
  t.equal(bridge?.post_count, 6 + 27)
  t.equal(bridge?.sources.length, 3)
  t.notOk(narratives.some(n => n.terms.includes('parade')), 'one source repeating itself is not a narrative (min_sources 2)')

  const spreading = await call<{ level: string, growth: number, recent_posts: number, previous_posts: number, sources_recent: number }>('predict-virality', { terms: ['bridge', 'toll'], at: hour(48) })
  t.same([spreading.recent_posts, spreading.previous_posts, spreading.sources_recent], [27, 6, 3])
  t.equal(spreading.level, 'high')
  const steady = await call<{ level: string, growth: number }>('predict-virality', { terms: ['parade'], at: hour(48) })
  t.equal(steady.growth, 1)
  t.equal(steady.level, 'low', 'a steady story from one source is not going viral')
  const byText = await call<{ terms: string[], recent_posts: number }>('predict-virality', { text: 'Bridge toll for commuters?', at: hour(48) })
  t.ok(byText.recent_posts >= 27, 'a text stands for the narrative through its keywords')

  t.equal(await statusOf(call('ingest-posts', { posts: [{ text: 'x', posted_at: 'yesterday' }] })), 400, 'a time that is not ISO 8601')
  t.equal(await statusOf(call('ingest-posts', { posts: [{ text: 'x'.repeat(5001) }] })), 413, 'a post over 5,000 characters')
  t.equal(await statusOf(call('ingest-posts', { posts: [] })), 400, 'no posts')
  t.equal(await statusOf(call('predict-virality', {})), 400, 'neither terms nor text')
  t.equal(await statusOf(call('ingest-posts', { posts: [{ text: 'hello' }] }, await cookie('readonly'))), 403, 'readonly never writes')
  t.equal(await statusOf(call('sentiment-summary', {}, await cookie('readonly'))), 200, 'readonly reads')
})
