// The opposition research page: the opponents on record (list-opponents); statements added and a
// briefing built (generate-opposition-briefing) — stance per topic as signed bars, statements cited by
// id, source and date, contradictions, media coverage; contradictions alone (detect-contradictions).
import { useEffect, useState } from 'preact/hooks'
import { useCall, type AuthInfo, Bars, Feedback, Card, ErrorLine, Field } from '../../ui/src/module-kit.js'
import { manifest } from './manifest.js'


interface Quoted { statement_id: string, said_on: string | null, source: string, stance: number, quote: string }
interface Contradiction { contradiction_id: string, topic: string, topics: string[], strength: number, reasons: string[], earlier: Quoted, later: Quoted }
interface Briefing {
  resource_id: string, opponent: string, added: number, duplicates: number, statement_count: number, summary: string, summary_method: string
  topics: Array<{ topic: string, stance: number, label: string, statements: Quoted[], our_position: Array<{ cite: number, text: string }>, sources: string[] }>
  other_statements: Array<{ issue: string, statements: Quoted[] }>
  contradictions: Contradiction[], contradiction_count: number
  media: { matched: number, items: Array<{ article_id: string, title: string, outlet: string, published_at: string, tone: string, polarity: number }>, sources: string[] }
  citation_lines: string[], engine: string
}
interface Opponents { total: number, opponents: Array<{ opponent: string, statements: number, first_said_on: string | null, last_said_on: string | null, keywords: string[] }> }
interface Found { resource_id: string, opponent: string, statements: number, total: number, contradictions: Array<Contradiction & { resource_id: string }> }

export const OPPOSITION_EXAMPLE = [
  '2025-03-01 | Herald interview | I strongly support the bridge toll; it is a fair way to pay for repairs.',
  '2026-01-10 | town hall | The bridge toll is a terrible burden on working families, and I oppose it.',
  '2025-05-01 | debate | I will never raise property taxes.',
  '2026-02-01 | press release | We must raise property taxes to fund our schools.'
].join('\n')

/** One statement per line: "YYYY-MM-DD | source | text", "source | text" or the text alone. */
export function parseStatements (text: string): Array<{ text: string, said_on?: string, source?: string }> {
  return text.split('\n').map(line => line.trim()).filter(line => line !== '').map(line => {
    const parts = line.split('|').map(p => p.trim())
    const saidOn = parts.length > 1 && /^\d{4}-\d{2}-\d{2}$/.test(parts[0]) ? parts.shift() : undefined
    const source = parts.length > 1 ? parts.shift() : undefined
    return { text: parts.join(' | '), ...(saidOn !== undefined ? { said_on: saidOn } : {}), ...(source !== undefined ? { source } : {}) }
  })
}

const cite = (q: Quoted): string => `${q.source === '' ? 'no source' : q.source}, ${q.said_on ?? 'date unknown'}`

function ContradictionList ({ items, auth, testId }: { items: Array<Contradiction & { resource_id?: string }>, auth: AuthInfo, testId: string }) {
  if (items.length === 0) return <p class="muted" data-testid={testId}>No contradiction found.</p>
  return (
    <ol data-testid={testId}>{items.map(c => (
      <li key={c.contradiction_id} data-topic={c.topic}>
        <strong>{c.topic}</strong> <span class="badge">strength {c.strength}</span> <span class="muted">{c.reasons.join(', ')}</span>
        <p>Then: “{c.earlier.quote}” <span class="muted">({cite(c.earlier)}, stance {c.earlier.stance})</span></p>
        <p>Later: “{c.later.quote}” <span class="muted">({cite(c.later)}, stance {c.later.stance})</span></p>
        <Feedback auth={auth} moduleId={manifest.id} resourceId={c.resource_id ?? c.contradiction_id} />
      </li>
    ))}</ol>
  )
}

function BriefingView ({ b, auth }: { b: Briefing, auth: AuthInfo }) {
  return (
    <div data-testid="opposition-briefing">
      <p class="muted">{b.added} statement(s) added, {b.duplicates} already on record, {b.statement_count} in all.</p>
      <p data-testid="opposition-summary">{b.summary}</p>
      {b.topics.length > 0 && (
        <>
          <h3>Stance by topic (−1 opposes, +1 supports)</h3>
          <Bars testId="opposition-stances" signed max={1} bars={b.topics.flatMap(t => t.statements.map(q => ({ label: `${t.topic} · ${q.said_on ?? '?'}`, value: q.stance })))} />
        </>
      )}
      <table data-testid="opposition-topics">
        <thead><tr><th>Topic</th><th>Statements</th><th>The knowledge base</th></tr></thead>
        <tbody>{b.topics.map(t => (
          <tr key={t.topic} data-topic={t.topic}>
            <td>{t.topic}<br /><span class="badge">{t.label}</span></td>
            <td><ul>{t.statements.map(q => <li key={q.statement_id}>“{q.quote}” <span class="muted">({cite(q)})</span></li>)}</ul></td>
            <td>{t.our_position.map(p => <p key={p.text}>{p.text} [{p.cite}]</p>)}</td>
          </tr>
        ))}</tbody>
      </table>
      {b.other_statements.map(g => <p key={g.issue}><strong>{g.issue}:</strong> {g.statements.map(q => `“${q.quote}” (${cite(q)})`).join(' ')}</p>)}
      <h3>Contradictions ({b.contradiction_count})</h3>
      <ContradictionList items={b.contradictions} auth={auth} testId="opposition-contradictions" />
      <h3>Media coverage ({b.media.matched} articles)</h3>
      <ul>{b.media.items.map(a => <li key={a.article_id}>{a.title} — {a.outlet}, {a.published_at.slice(0, 10)} <span class="badge">{a.tone}</span></li>)}</ul>
      <ol class="muted">{b.citation_lines.map(line => <li key={line}>{line}</li>)}</ol>
      <p class="muted">Summary by {b.engine} ({b.summary_method})</p>
      <Feedback auth={auth} moduleId={manifest.id} resourceId={b.resource_id} />
    </div>
  )
}

export function OppositionResearchPage ({ auth }: { auth: AuthInfo }) {
  const list = useCall<Opponents>('list-opponents')
  const briefing = useCall<Briefing>('generate-opposition-briefing')
  const detect = useCall<Found>('detect-contradictions')
  const [opponent, setOpponent] = useState('')
  const [statements, setStatements] = useState('')
  const mayBrief = auth.functions.includes('generate-opposition-briefing')
  useEffect(() => { void list.run({}) }, [briefing.data])
  return (
    <>
      <h1>Opposition research</h1>
      <Card title="Opponents on record">
        <ErrorLine error={list.error} />
        {list.data?.opponents.length === 0 && <p class="muted">No statements on record yet.</p>}
        <table data-testid="opponents">
          <tbody>{list.data?.opponents.map(o => (
            <tr key={o.opponent}>
              <td><button type="button" class="link" onClick={() => { setOpponent(o.opponent) }}>{o.opponent}</button></td>
              <td>{o.statements} statement(s)</td>
              <td class="muted">{o.first_said_on ?? '?'} to {o.last_said_on ?? '?'}</td>
              <td class="muted">{o.keywords.join(', ')}</td>
            </tr>
          ))}</tbody>
        </table>
      </Card>
      <Card title={mayBrief ? 'Add statements and build a briefing' : 'Contradictions'}>
        <form class="stack" onSubmit={e => {
          e.preventDefault()
          const given = parseStatements(statements)
          void briefing.run({ opponent, ...(given.length > 0 ? { statements: given } : {}) })
        }}>
          <Field label="Opponent"><input name="opponent" required value={opponent} onInput={e => { setOpponent(e.currentTarget.value) }} placeholder="Dan Reyes" /></Field>
          {mayBrief && (
            <>
              <Field label='Statements, one per line: "YYYY-MM-DD | source | what they said" (date and source optional)'>
                <textarea name="statements" rows={6} value={statements} onInput={e => { setStatements(e.currentTarget.value) }} />
              </Field>
              <div class="row">
                <button type="button" class="ghost" onClick={() => { setOpponent('Dan Reyes'); setStatements(OPPOSITION_EXAMPLE) }}>Load an example</button>{' '}
                <button type="submit" disabled={briefing.busy || opponent.trim() === ''}>Build the briefing</button>{' '}
              </div>
            </>
          )}
        </form>
        <p><button type="button" class="ghost" name="detect" disabled={detect.busy || opponent.trim() === ''} onClick={() => { void detect.run({ opponent }) }}>Detect contradictions only</button></p>
        <ErrorLine error={briefing.error ?? detect.error} />
        {detect.data !== undefined && (
          <div data-testid="contradictions-found">
            <p class="muted">{detect.data.total} contradiction(s) among {detect.data.statements} statements of {detect.data.opponent}.</p>
            <ContradictionList items={detect.data.contradictions} auth={auth} testId="contradictions" />
          </div>
        )}
      </Card>
      {briefing.data !== undefined && <Card title={`Briefing: ${briefing.data.opponent}`}><BriefingView b={briefing.data} auth={auth} /></Card>}
    </>
  )
}
