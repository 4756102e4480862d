// The local issues page: canvassing notes or posts typed in (or the post stream) in; the issues ranked by
// urgency (analyze-local-issues) as bars, with where each is raised and what people say.
import { useState } from 'preact/hooks'
import { useCall, type AuthInfo, Bars, RangeFields, rangeArgs, Card, ErrorLine, Field } from '../../ui/src/module-kit.js'

interface Issue {
  issue: string, mentions: number, share: number, polarity: number, negativity: number, negative_share: number, urgency: number
  cues: Array<{ cue: string, count: number }>
  places: Array<{ place: string, mentions: number, polarity: number }>
  quotes: Array<{ text: string, polarity: number, place: string }>
}
interface Report { texts_from: string, texts: number, texts_with_issues: number, issues: Issue[], engine: string }

export const LOCAL_EXAMPLE = [
  'Eastside | Rent went up again, it is unaffordable and my landlord ignores repairs.',
  'Eastside | Three evictions on my street this month. Terrible for the neighbourhood.',
  'Eastside | No affordable housing left anywhere, we are desperate.',
  'Northgate | The housing shortage is awful; tenants here are worried too.',
  'Northgate | The new bus line to the station is great, thanks!',
  'Riverside | Traffic on Route 9 is slow in the mornings.',
  'Riverside | Our school got two new teachers, wonderful news.'
].join('\n')

/** "Place | text" lines (the place optional) as texts. */
function parseNotes (text: string): Array<{ text: string, location: string }> {
  return text.split('\n').map(line => line.trim()).filter(line => line !== '').map(line => {
    const bar = line.indexOf('|')
    return bar < 0 ? { text: line, location: '' } : { text: line.slice(bar + 1).trim(), location: line.slice(0, bar).trim() }
  }).filter(note => note.text !== '')
}

const percent = (share: number): string => `${Math.round(share * 100)} %`

export function LocalIssuesPage ({ auth }: { auth: AuthInfo }) {
  const analyze = useCall<Report>('analyze-local-issues')
  const [fromPosts, setFromPosts] = useState(false)
  const [text, setText] = useState('')
  const r = analyze.data
  return (
    <>
      <h1>Local issues</h1>
      {auth.functions.includes('analyze-local-issues') && (
        <Card title="What people raise">
          <form class="stack" onSubmit={e => {
            e.preventDefault()
            void analyze.run(fromPosts ? rangeArgs(e.currentTarget) : { texts: parseNotes(text) })
          }}>
            <p class="row">
              <label><input type="radio" name="texts-from" checked={!fromPosts} onChange={() => { setFromPosts(false) }} /> Notes</label>
              <label><input type="radio" name="texts-from" value="posts" checked={fromPosts} onChange={() => { setFromPosts(true) }} /> The post stream</label>
            </p>
            {fromPosts
              ? <RangeFields />
              : <Field label='One note or post per line, optionally "Place | text"'>
                  <textarea name="notes" rows={8} value={text} onInput={e => { setText(e.currentTarget.value) }} required placeholder={'Eastside | The rent is too high.\nThe bus is always late.'} />
                </Field>}
            <p class="row">
              <button type="submit" disabled={analyze.busy}>Analyse</button>
              {!fromPosts && <button type="button" class="ghost" onClick={() => { setText(LOCAL_EXAMPLE) }}>Load an example</button>}
            </p>
          </form>
          <ErrorLine error={analyze.error} />
        </Card>
      )}
      {r !== undefined && (
        <div data-testid="issues-result">
          <Card title="Issues by urgency">
            <p class="muted">{r.texts_with_issues} of {r.texts} {r.texts_from === 'posts' ? 'posts' : 'texts'} raise an issue. Urgency = share of texts × (1 − mean polarity) / 2 · {r.engine}</p>
            {r.issues.length === 0
              ? <p class="muted">No issue of the lexicon is raised.</p>
              : <Bars testId="issue-chart" bars={r.issues.map(i => ({ label: i.issue, value: i.urgency }))} />}
            <table data-testid="issues">
              <thead><tr><th>Issue</th><th>Texts</th><th>Tone</th><th>Where</th><th>What people say</th></tr></thead>
              <tbody>{r.issues.map(i => (
                <tr key={i.issue} data-issue={i.issue}>
                  <td><strong>{i.issue}</strong><br /><span class="muted">urgency {i.urgency}</span></td>
                  <td>{i.mentions} ({percent(i.share)})</td>
                  <td><span class={i.polarity < 0 ? 'negative' : i.polarity > 0 ? 'positive' : ''}>{i.polarity}</span><br /><span class="muted">{percent(i.negative_share)} negative</span></td>
                  <td data-testid="issue-places">{i.places.map(p => `${p.place} (${p.mentions})`).join(', ') || '—'}</td>
                  <td>{i.quotes.map(q => <p key={q.text} class="muted">“{q.text}”{q.place !== '' ? ` — ${q.place}` : ''}</p>)}</td>
                </tr>
              ))}</tbody>
            </table>
          </Card>
        </div>
      )}
    </>
  )
}
