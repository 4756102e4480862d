// The sentiment monitor page: add posts (ingest-posts), sentiment over time with counts and sources
// (sentiment-summary, as a chart), and the spikes of the hourly series (detect-spikes).
import { useEffect, useMemo } from 'preact/hooks'
import { useCall, type AuthInfo, TimeChart, STEP_SECONDS, Card, ErrorLine, Field, formValue } from '../../ui/src/module-kit.js'

interface Stats { bucket_start: string, count: number, mean_polarity: number, positive: number, negative: number }
interface Summary {
  total: number, positive: number, negative: number, neutral: number, mean_polarity: number, bucket: 'hour' | 'day', series: Stats[]
  by_source: Array<{ source: string, count: number, mean_polarity: number }>, terms: { positive: string[], negative: string[] }, engine: string
}
interface Spike { bucket_start: string, kind: string, direction: string, count: number, z: number, terms: string[], sample_posts: Array<{ text: string, source: string }> }

const when = (iso: string): string => iso.slice(0, 16).replace('T', ' ')

export function SentimentMonitorPage ({ auth }: { auth: AuthInfo }) {
  const summary = useCall<Summary>('sentiment-summary')
  const spikes = useCall<{ spikes: Spike[], hours: number }>('detect-spikes')
  const ingest = useCall<{ ingested: number, duplicates: number }>('ingest-posts')
  useEffect(() => { void summary.run({ bucket: 'hour' }) }, [])
  const lines = useMemo(() => summary.data === undefined
    ? []
    : [{ label: 'mean sentiment', values: summary.data.series.map(s => s.mean_polarity), color: '#2457c5' }], [summary.data])
  return (
    <>
      <h1>Sentiment monitor</h1>
      <Card title="Sentiment over time">
        <form class="row" onSubmit={e => { e.preventDefault(); void summary.run({ bucket: formValue(e.currentTarget, 'bucket') }) }}>
          <select name="bucket" aria-label="Bucket"><option value="hour">by hour</option><option value="day">by day</option></select>
          <button type="submit" disabled={summary.busy}>Refresh</button>
        </form>
        <ErrorLine error={summary.error} />
        {summary.data !== undefined && (
          <div data-testid="sentiment-summary">
            <div class="stats">
              <div><strong>{summary.data.total}</strong><span class="muted">posts</span></div>
              <div><strong class="positive">{summary.data.positive}</strong><span class="muted">positive</span></div>
              <div><strong class="negative">{summary.data.negative}</strong><span class="muted">negative</span></div>
              <div><strong>{summary.data.mean_polarity}</strong><span class="muted">mean (−1 … 1)</span></div>
            </div>
            <TimeChart times={summary.data.series.map(s => s.bucket_start)} lines={lines} stepSeconds={STEP_SECONDS[summary.data.bucket]} testId="sentiment-chart" />
            <table>
              <thead><tr><th>Source</th><th>Posts</th><th>Mean sentiment</th></tr></thead>
              <tbody>{summary.data.by_source.map(s => <tr key={s.source}><td>{s.source}</td><td>{s.count}</td><td>{s.mean_polarity}</td></tr>)}</tbody>
            </table>
            <p class="muted">Words of negative posts: {summary.data.terms.negative.join(', ') || '—'} · of positive posts: {summary.data.terms.positive.join(', ') || '—'} · {summary.data.engine}</p>
          </div>
        )}
      </Card>
      <Card title="Spikes">
        <p class="muted">Hours whose mean sentiment or number of posts departs from the 24 hours with posts before them (|z| ≥ 2.5).</p>
        <button type="button" name="detect" onClick={() => { void spikes.run({}) }} disabled={spikes.busy}>Detect spikes</button>
        <ErrorLine error={spikes.error} />
        {spikes.data?.spikes.length === 0 && <p class="muted">No spike in {spikes.data.hours} hours.</p>}
        <ul class="results" data-testid="spikes">
          {spikes.data?.spikes.map(s => (
            <li key={`${s.bucket_start}-${s.kind}`}>
              <p><strong class={s.direction === 'negative' ? 'negative' : ''}>{when(s.bucket_start)}</strong> {s.kind} {s.direction}, z = {s.z}, {s.count} posts · {s.terms.join(', ')}</p>
              {s.sample_posts.slice(0, 2).map(p => <p key={p.text} class="muted">“{p.text}” ({p.source})</p>)}
            </li>
          ))}
        </ul>
      </Card>
      {auth.functions.includes('ingest-posts') && (
        <Card title="Add posts">
          <form class="stack" onSubmit={e => {
            e.preventDefault()
            const form = e.currentTarget
            const source = formValue(form, 'source') || 'manual'
            const posts = formValue(form, 'posts').split('\n').map(line => line.trim()).filter(line => line !== '').map(text => ({ text, source }))
            void ingest.run({ posts }).then(async done => { if (done !== undefined) { form.reset(); await summary.run({ bucket: 'hour' }) } })
          }}>
            <Field label="Source"><input name="source" placeholder="e.g. twitter" /></Field>
            <Field label="Posts, one per line"><textarea name="posts" rows={5} required /></Field>
            <button type="submit" disabled={ingest.busy}>Add</button>
          </form>
          <ErrorLine error={ingest.error} />
          {ingest.data !== undefined && <p class="ok" data-testid="ingested">Added {ingest.data.ingested} posts ({ingest.data.duplicates} already stored).</p>}
        </Card>
      )}
    </>
  )
}
