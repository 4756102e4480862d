// Narrative contagion on a planted post stream (fixtures/post-stream.ts) through the API: the bridge
// toll story found across three sources and going viral, the parade story of one source not.
import t from 'tap'
import { campaignApp, statusOf } from '../../../support/campaign.js'
import { hour, stream } from '../fixtures/post-stream.js'

t.test('narrative contagion through the API', async t => {
  const { call } = await campaignApp(t)
  const posts = stream()
  await call('ingest-posts', { posts: posts.slice(0, 200) })
  await call('ingest-posts', { posts: posts.slice(200) })

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

  t.equal(await statusOf(call('predict-virality', {})), 400, 'neither terms nor text')
})
