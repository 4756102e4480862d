// The narrative contagion page: the narratives of the post stream (extract-narratives) and, for one,
// how fast it spreads (predict-virality).
import { useEffect } from 'preact/hooks'
import { useCall, Card, ErrorLine } from '../../ui/src/module-kit.js'

interface Narrative { narrative_id: string, label: string, terms: string[], post_count: number, sources: Array<{ source: string, count: number }>, first_seen: string, last_seen: string, mean_polarity: number }
interface Virality { terms: string[], score: number, level: string, growth: number, recent_posts: number, previous_posts: number, sources_recent: number, posts_per_hour: number, doubling_time_hours: number | null, projected_posts: number }

export function NarrativeContagionPage () {
  const narratives = useCall<{ posts: number, narratives: Narrative[] }>('extract-narratives')
  const virality = useCall<Virality>('predict-virality')
  useEffect(() => { void narratives.run({}) }, [])
  return (
    <>
      <h1>Narrative contagion</h1>
      <Card title="Narratives in the post stream">
        <ErrorLine error={narratives.error ?? virality.error} />
        {narratives.data !== undefined && <p class="muted">{narratives.data.narratives.length} narratives in {narratives.data.posts} posts: a word carried by at least three posts from two sources or more, with the words that travel with it.</p>}
        <table data-testid="narratives">
          <thead><tr><th>Narrative</th><th>Posts</th><th>Sources</th><th>Sentiment</th><th>Last seen</th><th /></tr></thead>
          <tbody>{narratives.data?.narratives.map(n => (
            <tr key={n.narrative_id}>
              <td>{n.label}<br /><span class="muted">{n.terms.join(', ')}</span></td>
              <td>{n.post_count}</td>
              <td>{n.sources.map(s => `${s.source} (${s.count})`).join(', ')}</td>
              <td>{n.mean_polarity}</td>
              <td>{n.last_seen.slice(0, 16).replace('T', ' ')}</td>
              <td><button type="button" class="ghost" onClick={() => { void virality.run({ terms: n.terms.slice(0, 3), at: n.last_seen }) }}>Predict spread</button></td>
            </tr>
          ))}</tbody>
        </table>
      </Card>
      {virality.data !== undefined && (
        <Card title={`Spread of “${virality.data.terms.join(' · ')}”`}>
          <dl class="facts" data-testid="virality">
            <dt>Level</dt><dd><strong>{virality.data.level}</strong> (score {virality.data.score})</dd>
            <dt>Last 6 hours</dt><dd>{virality.data.recent_posts} posts from {virality.data.sources_recent} sources ({virality.data.posts_per_hour} an hour)</dd>
            <dt>6 hours before</dt><dd>{virality.data.previous_posts} posts</dd>
            <dt>Growth</dt><dd>× {virality.data.growth}{virality.data.doubling_time_hours !== null ? `, doubling every ${virality.data.doubling_time_hours} h` : ''}</dd>
            <dt>Next 24 hours</dt><dd>about {virality.data.projected_posts} posts</dd>
          </dl>
        </Card>
      )}
    </>
  )
}
