// Candidate briefings: every section with its sources, and the likely questions in order; then a
// briefing assembled through the API from the knowledge base, posts, articles and commitments.
import t from 'tap'
import { ServerFunctionError } from '../../../../plugins/campaign/client.js'
import { localEngine } from '../../../../plugins/campaign/language/local-engine.js'
import type { Commitment } from '../../../../plugins/campaign/modules/accountability/accountability.js'
import { briefingSections, summaryLines } from '../../../../plugins/campaign/modules/candidate-briefings/briefing-book.js'
import { Citations } from '../../../../plugins/campaign/grounding/grounding.js'
import { hoursAgo, KB, post, writingApp } from '../fixtures/composition.js'

t.test('candidate briefings: every section with its sources, and the likely questions in order', async t => {
  const engine = await localEngine()
  const posts = [
    post(1, 'The bridge toll hike is robbery for commuters.', -0.6, 'x', ['bridge', 'toll', 'hike', 'robbery', 'commuters']),
    post(2, 'Commuters hate the bridge toll hike.', -0.5, 'y', ['commuters', 'hate', 'bridge', 'toll', 'hike']),
    post(3, 'Another bridge toll hike, commuters pay again.', -0.4, 'x', ['another', 'bridge', 'toll', 'hike', 'commuters', 'pay']),
    post(4, 'Glad the bridge toll funds repairs.', 0.5, 'z', ['glad', 'bridge', 'toll', 'funds', 'repairs'])
  ]
  const commitment: Commitment = {
    commitment_id: 'c1', actor: 'Maria Lopez', text: 'We will cut the bridge toll by March 1, 2025', verb: 'will', promise: 'cut the bridge toll', due_on: '2025-03-01', due_text: 'by March 1, 2025',
    source: '', said_on: '2024-12-01', status: 'open', evidence_count: 0, recorded_by: '', recorded_at: '2024-12-01T00:00:00Z', updated_at: '2024-12-01T00:00:00Z'
  }
  const article = {
    article_id: 'a1', title: 'Bridge toll hike angers commuters', outlet: 'Metro Watch', url: '', published_at: '2026-11-01T00:00:00Z', tone: 'critical' as const,
    summary: [{ index: 0, text: 'Commuters are furious about the toll.', score: 1 }], entity_sentiment: [], sentiment: { mean_sentence_polarity: -0.5 }, entities: { people: [], organizations: [], places: [] }
  }
  const citations = new Citations()
  const data = {
    subject: 'bridge toll', date: '2026-12-01', days: 30, terms: ['bridge', 'toll'], posts,
    coverage: { matched: 1, newest: [article as never] }, commitments: [commitment], today: '2026-11-23'
  }
  const s = briefingSections(engine, KB, citations, data)
  t.match(s.background.sentences, [{ cite: 1, text: 'The bridge toll pays for the repairs of the Riverside bridge.' }, { cite: 1, text: /discount on the bridge toll/ }])
  t.same(s.background.sources, ['[1] Bridge toll, passage 1'])
  t.match(s.sentiment, { posts: 4, negative: 3, positive: 1, label: 'negative', most_negative: { post_id: 'p1' }, most_positive: { post_id: 'p4' } })
  t.same(s.sentiment.by_source.map(x => [x.source, x.count]), [['x', 2], ['y', 1], ['z', 1]])
  t.match(s.narratives.items[0], { terms: ['commuters', 'hike'], post_count: 3 }, 'the subject\'s own words are not the story: the hike is')
  t.match(s.media, { matched: 1, tones: { critical: 1 }, sources: ['article a1: “Bridge toll hike angers commuters”, Metro Watch, 2026-11-01'] })
  t.match(s.commitments, { open: 1, overdue: 1, items: [{ commitment_id: 'c1', overdue: true, due_by_date: true }], sources: ['commitment c1 (Maria Lopez, 2024-12-01)'] })
  t.same(s.likely_questions.items.map(q => q.basis), ['commitment c1', 'article a1', `narrative ${s.narratives.items[0].narrative_id}`, 'post p1 (x, ' + posts[0].posted_at.slice(0, 10) + ')', 'knowledge base'],
    'overdue commitment, critical article, critical narrative, critical posts, then the position')
  t.equal(s.likely_questions.items[0].question, '“We will cut the bridge toll by March 1, 2025” was due on 2025-03-01. Why is it late, and when will it be done?')
  t.ok(s.likely_questions.items.every(q => q.answer_points.length > 0), 'each question has answer points from the knowledge base')
  t.equal(s.likely_questions.items.at(-1)?.question, 'What is your position on bridge toll?')
  const lines = summaryLines(data, s)
  t.match(lines.join('\n'), /Posts of the last 30 days: 4 \(3 negative, 1 positive; mean polarity -0\.25, negative\)\.\nNarratives: commuters · hike \(3 posts\)\.\nMedia: 1 article\(s\), 1 critical/)
  t.match(lines.join('\n'), /Commitments: 1 open \(1 overdue\), 0 broken\./)
})

t.test('through the API', async t => {
  const { call, feedback } = await writingApp(t)

  await t.test('candidate briefings: assembled from the knowledge base, posts, articles and commitments; stored', async t => {
    await call('ingest-posts', {
      posts: [
        { text: 'The bridge toll hike is robbery for commuters.', source: 'x', author: 'a1', posted_at: hoursAgo(30) },
        { text: 'Commuters hate the bridge toll hike.', source: 'y', author: 'a2', posted_at: hoursAgo(20) },
        { text: 'Another bridge toll hike, commuters pay again. Terrible.', source: 'x', author: 'a3', posted_at: hoursAgo(10) }
      ]
    })
    await call('analyze-article', { title: 'Bridge toll hike angers commuters', outlet: 'Metro Watch', published_at: '2026-11-01T08:00:00Z', text: 'Commuters are furious about the bridge toll hike. Critics called it a terrible betrayal and a waste.' })
    await call('extract-commitments', { text: 'We will cut the bridge toll by March 1, 2025.', actor: 'Maria Lopez', said_on: '2024-12-01' })
    interface Briefing {
      briefing_id: string, resource_id: string, summary: string, summary_method: string, engine: string, citation_lines: string[], attendees: Array<{ name: string, notes: Array<{ text: string, source: string }> }>
      sections: { background: { sources: string[] }, sentiment: { posts: number, label: string }, media: { matched: number }, commitments: { overdue: number }, likely_questions: { items: Array<{ question: string, basis: string }> } }
    }
    const briefing = await call<Briefing>('generate-briefing', { subject: 'bridge toll', date: '2026-12-01', attendees: ['Maria Lopez'] })
    t.match(briefing, { summary_method: 'extractive', engine: /^local/, sections: { background: { sources: ['[1] Bridge toll, passage 1'] }, sentiment: { posts: 3, label: 'negative' }, media: { matched: 1 }, commitments: { overdue: 1 } } })
    t.match(briefing.sections.likely_questions.items[0].question, /^“We will cut the bridge toll by March 1, 2025” was due on 2025-03-01/)
    t.match(briefing.attendees, [{ name: 'Maria Lopez', notes: [{ text: /^Committed: “We will cut the bridge toll/ }, { text: /Maria Lopez proposed a discount .* \[1\]$/ }] }])
    t.match(briefing.summary, /^bridge toll, 2026-12-01\. Knowledge base: 1 passage\(s\) cited\./)
    t.equal(briefing.resource_id, briefing.briefing_id)
    await feedback('candidate-briefings', briefing.resource_id)
    const unknown = await call<Briefing & { note?: string }>('generate-briefing', { subject: 'moon landing' })
    t.match(unknown, { note: /knows nothing about “moon landing”/, sections: { media: { matched: 0 } } })
    await t.rejects(call('generate-briefing', { subject: 'bridge toll', date: 'next Friday' }), new ServerFunctionError(400, 'invalid arguments: /date: expected an ISO 8601 date or UTC time, got "next Friday"', 'BERTH_BAD_REQUEST'))
  })
})
