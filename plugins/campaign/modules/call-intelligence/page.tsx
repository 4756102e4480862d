// The call intelligence page: analyse a call transcript (analyze-transcript: outcome, issues, talk share,
// sentiment per turn) and the trends of the stored calls (call-trends: outcomes per day or week as a
// stacked column chart, a day or week without calls an empty column, and the recent calls page by page).
import { useEffect, useState } from 'preact/hooks'
import { useCall, type AuthInfo, Bars, regularSlots, STEP_SECONDS, Card, ErrorLine, Field, formValue } from '../../ui/src/module-kit.js'

const OUTCOMES = ['supporter', 'opposed', 'undecided', 'refused', 'not_reached', 'unknown'] as const
type Outcome = typeof OUTCOMES[number]
const COLORS: Record<Outcome, string> = { supporter: '#2f9e63', opposed: '#d9534f', undecided: '#e0a030', refused: '#8e5bb5', not_reached: '#98a2b3', unknown: '#cfd4dc' }
const label = (outcome: string): string => outcome.replace('_', ' ')

interface Analysis {
  call_id: string, caller: string, contact: string, outcome: Outcome, outcome_evidence: string, follow_up: boolean, follow_up_reasons: string[]
  speakers: Array<{ speaker: string, role: string, turns: number, talk_share: number }>
  turns: Array<{ index: number, speaker: string, text: string, polarity: number }>
  trajectory: { first_half: number, second_half: number, direction: string }
  issues: Array<{ issue: string, count: number }>
  engine: string
}
interface Aggregate { calls: number, outcomes: Record<Outcome, number>, mean_sentiment: number, follow_ups: number, top_issues: Array<{ issue: string, calls: number }> }
interface Trends {
  bucket: 'day' | 'week', totals: Aggregate, buckets: Array<Aggregate & { bucket_start: string }>
  /** `contact` only for the roles that may see it. */
  calls: Array<{ call_id: string, called_at: string, caller: string, contact?: string, outcome: Outcome, sentiment: number, issues: string[], follow_up: boolean }>
  next_cursor: string | null, engine: string
}

/** Calls per bucket as columns stacked by outcome, with a legend; a bucket without calls is an empty column. */
function OutcomeColumns ({ buckets, step }: { buckets: Trends['buckets'], step: Trends['bucket'] }) {
  if (buckets.length === 0) return <p class="muted">No calls in this range.</p>
  const slots = regularSlots(buckets, b => b.bucket_start, STEP_SECONDS[step])
  const height = 180
  const column = Math.max(14, Math.min(48, 560 / slots.length - 8))
  const width = slots.length * (column + 8) + 40
  const top = Math.max(...buckets.map(b => b.calls))
  const scale = (height - 30) / top
  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${width} ${height}`} style={{ maxWidth: `${width}px`, width: '100%' }} role="img" data-testid="call-trends-chart"
        aria-label={buckets.map(b => `${b.bucket_start}: ${b.calls} calls`).join('; ')}>
        <line x1={34} x2={width} y1={height - 20} y2={height - 20} stroke="#98a2b3" />
        <text x={28} y={14} text-anchor="end" font-size="11" fill="#667085">{top}</text>
        {slots.map(({ at, item: b }, i) => {
          const x = 40 + i * (column + 8)
          const day = new Date(at * 1000).toISOString().slice(0, 10)
          let y = height - 20
          return (
            <g key={day} data-bucket={day} data-calls={b?.calls ?? 0}>
              {b !== undefined && OUTCOMES.filter(o => b.outcomes[o] > 0).map(o => {
                const h = b.outcomes[o] * scale
                y -= h
                return <rect key={o} x={x} y={y} width={column} height={h} fill={COLORS[o]}><title>{`${b.bucket_start}: ${b.outcomes[o]} ${label(o)}`}</title></rect>
              })}
              <text x={x + column / 2} y={height - 6} text-anchor="middle" font-size="10" fill="#667085">{day.slice(5)}</text>
            </g>
          )
        })}
      </svg>
      <figcaption class="muted">{OUTCOMES.map(o => <span key={o} style={{ marginRight: '1rem' }}><span style={{ color: COLORS[o] }}>■</span> {label(o)}</span>)}</figcaption>
    </figure>
  )
}

export function CallIntelligencePage ({ auth }: { auth: AuthInfo }) {
  const analyze = useCall<Analysis>('analyze-transcript')
  const trends = useCall<Trends>('call-trends')
  const [range, setRange] = useState<Record<string, string>>({ bucket: 'day' })
  const mayAnalyze = auth.functions.includes('analyze-transcript')
  const mayTrend = auth.functions.includes('call-trends')
  useEffect(() => { if (mayTrend) void trends.run(range) }, [])
  const a = analyze.data
  return (
    <>
      <h1>Call intelligence</h1>
      {mayAnalyze && (
        <Card title="Analyse a call">
          <form class="stack" onSubmit={e => {
            e.preventDefault()
            const form = e.currentTarget
            const caller = formValue(form, 'caller')
            const contact = formValue(form, 'contact')
            void analyze.run({ transcript: formValue(form, 'transcript'), ...(caller !== '' ? { caller } : {}), ...(contact !== '' ? { contact } : {}) })
              .then(async done => { if (done !== undefined && mayTrend) await trends.run(range) })
          }}>
            <div class="grid">
              <Field label="Caller"><input name="caller" placeholder="optional" /></Field>
              <Field label="Contact"><input name="contact" placeholder="optional" /></Field>
            </div>
            <Field label="Transcript, one “Speaker: words” line per turn"><textarea name="transcript" rows={7} required placeholder={'Volunteer: Hi, can we count on your vote?\nVoter: I\'ll vote for her, count me in!'} /></Field>
            <button type="submit" disabled={analyze.busy}>Analyse</button>
          </form>
          <ErrorLine error={analyze.error} />
          {a !== undefined && (
            <div data-testid="call-analysis">
              <div class="stats">
                <div><strong data-testid="call-outcome" style={{ color: COLORS[a.outcome] }}>{label(a.outcome)}</strong><span class="muted">outcome</span></div>
                <div><strong>{a.follow_up ? 'yes' : 'no'}</strong><span class="muted">follow-up</span></div>
                <div><strong>{a.trajectory.direction}</strong><span class="muted">sentiment {a.trajectory.first_half} → {a.trajectory.second_half}</span></div>
              </div>
              {a.outcome_evidence !== '' && <p class="muted">Read from: “{a.outcome_evidence}”</p>}
              {a.follow_up_reasons.length > 0 && <p class="muted">Follow-up because: {a.follow_up_reasons.join(', ')}</p>}
              <p>Issues raised: <span data-testid="call-issues">{a.issues.length === 0 ? 'none' : a.issues.map(i => `${i.issue} (${i.count})`).join(', ')}</span></p>
              <h3>Talk share</h3>
              <Bars bars={a.speakers.map(s => ({ label: `${s.speaker || 'unlabelled'} (${s.role})`, value: s.talk_share }))} max={1} format={v => `${Math.round(v * 100)} %`} />
              <h3>Sentiment per turn</h3>
              <Bars bars={a.turns.map(turn => ({ label: `${turn.index + 1}. ${turn.speaker || 'text'}: ${turn.text}`, value: turn.polarity }))} signed max={1} />
              <p class="muted">Call {a.call_id} · {a.engine}</p>
            </div>
          )}
        </Card>
      )}
      {mayTrend && (
        <Card title="Call trends">
          <form class="grid" onSubmit={e => {
            e.preventDefault()
            const form = e.currentTarget
            const from = formValue(form, 'from')
            const to = formValue(form, 'to')
            const next = { bucket: formValue(form, 'bucket'), ...(from !== '' ? { from } : {}), ...(to !== '' ? { to: `${to}T23:59:59Z` } : {}) }
            setRange(next)
            void trends.run(next)
          }}>
            <Field label="From"><input name="from" type="date" /></Field>
            <Field label="To"><input name="to" type="date" /></Field>
            <Field label="Per"><select name="bucket"><option value="day">day</option><option value="week">week</option></select></Field>
            <button type="submit" disabled={trends.busy}>Show</button>
          </form>
          <ErrorLine error={trends.error} />
          {trends.data !== undefined && (
            <div data-testid="call-trends">
              <div class="stats">
                <div><strong data-testid="call-total">{trends.data.totals.calls}</strong><span class="muted">calls</span></div>
                {OUTCOMES.filter(o => trends.data?.totals.outcomes[o] !== 0).map(o => <div key={o}><strong style={{ color: COLORS[o] }}>{trends.data?.totals.outcomes[o]}</strong><span class="muted">{label(o)}</span></div>)}
                <div><strong>{trends.data.totals.mean_sentiment}</strong><span class="muted">mean sentiment</span></div>
                <div><strong>{trends.data.totals.follow_ups}</strong><span class="muted">follow-ups</span></div>
              </div>
              <OutcomeColumns buckets={trends.data.buckets} step={trends.data.bucket} />
              <p>Top issues: {trends.data.totals.top_issues.map(i => `${i.issue} (${i.calls} calls)`).join(', ') || 'none'}</p>
              <h3>Recent calls</h3>
              <table data-testid="recent-calls">
                <thead><tr><th>When</th><th>Caller{trends.data.calls.some(c => c.contact !== undefined) && ' → contact'}</th><th>Outcome</th><th>Sentiment</th><th>Issues</th><th>Follow-up</th></tr></thead>
                <tbody>{trends.data.calls.map(c => (
                  <tr key={c.call_id}>
                    <td>{c.called_at.slice(0, 16).replace('T', ' ')}</td><td>{c.caller || '—'}{c.contact !== undefined && ` → ${c.contact || '—'}`}</td>
                    <td style={{ color: COLORS[c.outcome] }}>{label(c.outcome)}</td><td>{c.sentiment}</td><td>{c.issues.join(', ')}</td><td>{c.follow_up ? 'yes' : ''}</td>
                  </tr>
                ))}</tbody>
              </table>
              <p>
                {range.cursor !== undefined && <button type="button" class="ghost" onClick={() => { const { cursor: _c, ...first } = range; setRange(first); void trends.run(first) }}>Newest</button>}
                {' '}
                {trends.data.next_cursor !== null && <button type="button" class="ghost" onClick={() => { const next = { ...range, cursor: trends.data?.next_cursor ?? '' }; setRange(next); void trends.run(next) }}>Older calls</button>}
              </p>
              <p class="muted">{trends.data.engine}</p>
            </div>
          )}
        </Card>
      )}
    </>
  )
}
