// The regulatory monitor page: a bill or rule read into its obligations, prohibitions and permissions,
// deadlines, penalties, affected parties, campaign topics and impact (analyze-regulation).
import { useCall, type AuthInfo, Bars, Card, ErrorLine, Field, formValue } from '../../ui/src/module-kit.js'

interface Regulation {
  regulation_id: string, title: string, jurisdiction: string, clause_count: number, engine: string
  sections: Array<{ heading: string, clauses: number }>
  obligations: Array<{ kind: string, section: string, subject: string, modal: string, action: string }>
  counts: Record<'obligation' | 'prohibition' | 'permission', number>
  deadlines: Array<{ section: string, text: string, kind: string, date?: string, days?: number }>
  penalties: Array<{ section: string, clause: string, kinds: string[], amounts: string[] }>
  parties: Array<{ party: string, mentions: number, provisions: number }>
  topics: Array<{ topic: string, label: string, hits: number, terms: string[] }>
  impact: { score: number, level: string, relevance: number, burden: number }
}

export function RegulatoryMonitorPage ({ auth }: { auth: AuthInfo }) {
  const analyze = useCall<Regulation>('analyze-regulation')
  const r = analyze.data
  return (
    <>
      <h1>Regulatory monitor</h1>
      {auth.functions.includes('analyze-regulation') && (
        <Card title="Analyze a bill or rule">
          <form class="stack" onSubmit={e => {
            e.preventDefault()
            const form = e.currentTarget
            const jurisdiction = formValue(form, 'jurisdiction')
            void analyze.run({ title: formValue(form, 'title'), text: formValue(form, 'text'), ...(jurisdiction !== '' ? { jurisdiction } : {}) })
          }}>
            <div class="grid">
              <Field label="Title"><input name="title" required /></Field>
              <Field label="Jurisdiction"><input name="jurisdiction" placeholder="optional" /></Field>
            </div>
            <Field label="Text"><textarea name="text" rows={10} required placeholder={'SECTION 1. …\n(a) Each committee shall …'} /></Field>
            <button type="submit" disabled={analyze.busy}>Analyze</button>
          </form>
          <ErrorLine error={analyze.error} />
        </Card>
      )}
      {r !== undefined && (
        <div data-testid="regulation-result">
          <Card title={`${r.title}${r.jurisdiction !== '' ? ` (${r.jurisdiction})` : ''}`}>
            <p>
              Impact <strong data-testid="regulation-impact">{r.impact.score}</strong> <span class={`badge level-${r.impact.level}`}>{r.impact.level}</span>
              <span class="muted"> · relevance {r.impact.relevance} · burden {r.impact.burden} · {r.sections.length} sections, {r.clause_count} clauses</span>
            </p>
            <p data-testid="regulation-counts">{r.counts.obligation} obligation(s), {r.counts.prohibition} prohibition(s), {r.counts.permission} permission(s), {r.deadlines.length} deadline(s), {r.penalties.length} penalty clause(s)</p>
            <h3>Campaign topics (mentions)</h3>
            <Bars testId="regulation-topics" bars={r.topics.map(t => ({ label: t.label, value: t.hits }))} />
          </Card>
          <Card title="Obligations, prohibitions and permissions">
            <table data-testid="regulation-obligations">
              <thead><tr><th>Kind</th><th>Who</th><th>What</th><th>Section</th></tr></thead>
              <tbody>{r.obligations.map((o, i) => (
                <tr key={i} data-kind={o.kind}><td>{o.kind}</td><td>{o.subject}</td><td><em>{o.modal}</em> {o.action}</td><td class="muted">{o.section}</td></tr>
              ))}</tbody>
            </table>
          </Card>
          <Card title="Deadlines and penalties">
            <ul data-testid="regulation-deadlines">{r.deadlines.map((d, i) => (
              <li key={i}>{d.text} — {d.kind === 'date' ? d.date : `${d.days} days`} <span class="muted">({d.section})</span></li>
            ))}</ul>
            <ul data-testid="regulation-penalties">{r.penalties.map((p, i) => (
              <li key={i}>{p.kinds.join(', ')}{p.amounts.length > 0 ? ` of ${p.amounts.join(', ')}` : ''}: {p.clause} <span class="muted">({p.section})</span></li>
            ))}</ul>
          </Card>
          <Card title="Affected parties">
            <table>
              <thead><tr><th>Party</th><th>Mentions</th><th>Provisions binding it</th></tr></thead>
              <tbody>{r.parties.map(p => <tr key={p.party}><td>{p.party}</td><td>{p.mentions}</td><td>{p.provisions}</td></tr>)}</tbody>
            </table>
            <p class="muted">Stored as {r.regulation_id} · {r.engine}</p>
          </Card>
        </div>
      )}
    </>
  )
}
