// The accountability page: extract the commitments of a speech (extract-commitments), the report of
// commitments with status, evidence and overdue flags (accountability-report, counts as bars), and
// evidence on one commitment (add-evidence) for roles that may.
import { useEffect, useState } from 'preact/hooks'
import { useCall, type AuthInfo, Bars, Card, ErrorLine, Field, formValue } from '../../ui/src/module-kit.js'

const STATUSES = ['open', 'in_progress', 'kept', 'broken'] as const
type Status = typeof STATUSES[number]

interface Commitment {
  commitment_id: string, actor: string, text: string, promise: string, due_on: string | null, due_text: string | null
  source: string, said_on: string, status: Status, evidence_count: number
}
interface Report { total: number, counts: Record<Status, number>, overdue: number, commitments: Array<Commitment & { overdue: boolean }>, next_cursor: string | null, engine: string }
interface EvidenceResult { evidence: { verdict: Status, inferred: boolean, cues: string[] }, commitment: Commitment }

const shown = (status: string): string => status.replace('_', ' ')

export function AccountabilityPage ({ auth }: { auth: AuthInfo }) {
  const extract = useCall<{ commitments: Commitment[], sentences: number, engine: string }>('extract-commitments')
  const report = useCall<Report>('accountability-report')
  const evidence = useCall<EvidenceResult>('add-evidence')
  const [filter, setFilter] = useState<Record<string, string>>({})
  const mayExtract = auth.functions.includes('extract-commitments')
  const mayEvidence = auth.functions.includes('add-evidence')
  const refresh = async (args = filter): Promise<void> => { await report.run(args) }
  useEffect(() => { void refresh() }, [])
  return (
    <>
      <h1>Accountability</h1>
      {mayExtract && (
        <Card title="Extract commitments">
          <form class="stack" onSubmit={e => {
            e.preventDefault()
            const form = e.currentTarget
            const optional = (name: string): Record<string, string> => formValue(form, name) === '' ? {} : { [name]: formValue(form, name) }
            void extract.run({ text: formValue(form, 'text'), ...optional('actor'), ...optional('source'), ...optional('said_on') })
              .then(async done => { if (done !== undefined) await refresh() })
          }}>
            <div class="grid">
              <Field label="Who “I” and “we” are"><input name="actor" placeholder="e.g. Maria Lopez" /></Field>
              <Field label="Source"><input name="source" placeholder="e.g. town hall speech" /></Field>
              <Field label="Said on"><input name="said_on" type="date" /></Field>
            </div>
            <Field label="Speech or statement"><textarea name="text" rows={6} required /></Field>
            <button type="submit" disabled={extract.busy}>Extract</button>
          </form>
          <ErrorLine error={extract.error} />
          {extract.data !== undefined && (
            <div data-testid="extracted-commitments">
              <p class="ok">{extract.data.commitments.length} commitments in {extract.data.sentences} sentences.</p>
              <ol class="results">{extract.data.commitments.map(c => (
                <li key={c.commitment_id}><p><strong>{c.actor}</strong>: {c.promise}{c.due_on !== null && <span class="muted"> · due {c.due_on} (“{c.due_text}”)</span>}</p></li>
              ))}</ol>
            </div>
          )}
        </Card>
      )}
      <Card title="Commitments">
        <form class="grid" onSubmit={e => {
          e.preventDefault()
          const form = e.currentTarget
          const next = Object.fromEntries(['actor', 'status'].map(name => [name, formValue(form, name)]).filter(([, value]) => value !== ''))
          setFilter(next)
          void refresh(next)
        }}>
          <Field label="Actor"><input name="actor" placeholder="any" /></Field>
          <Field label="Status"><select name="status"><option value="">any</option>{STATUSES.map(s => <option key={s} value={s}>{shown(s)}</option>)}</select></Field>
          <button type="submit" disabled={report.busy}>Show</button>
        </form>
        <ErrorLine error={report.error} />
        {report.data !== undefined && (
          <div data-testid="accountability-report">
            <div class="stats">
              <div><strong data-testid="commitment-total">{report.data.total}</strong><span class="muted">commitments</span></div>
              <div><strong class="negative">{report.data.overdue}</strong><span class="muted">overdue</span></div>
            </div>
            <Bars bars={STATUSES.map(s => ({ label: shown(s), value: report.data?.counts[s] ?? 0 }))} testId="status-counts" />
            <table>
              <thead><tr><th>Actor</th><th>Commitment</th><th>Due</th><th>Status</th><th>Evidence</th></tr></thead>
              <tbody>{report.data.commitments.map(c => (
                <tr key={c.commitment_id} data-status={c.status}>
                  <td>{c.actor}</td>
                  <td>{c.promise}<br /><span class="muted">{c.source !== '' ? `${c.source}, ` : ''}{c.said_on}</span></td>
                  <td>{c.due_on ?? '—'}{c.overdue && <><br /><span class="negative">overdue</span></>}</td>
                  <td><span class="badge">{shown(c.status)}</span></td>
                  <td>{c.evidence_count}</td>
                </tr>
              ))}</tbody>
            </table>
            {report.data.next_cursor !== null && <button type="button" class="ghost" onClick={() => { void refresh({ ...filter, cursor: report.data?.next_cursor ?? '' }) }}>More</button>}
            <p class="muted">{report.data.engine}</p>
          </div>
        )}
      </Card>
      {mayEvidence && (
        <Card title="Add evidence">
          <form class="stack" onSubmit={e => {
            e.preventDefault()
            const form = e.currentTarget
            const verdict = formValue(form, 'verdict')
            const url = formValue(form, 'url')
            void evidence.run({ commitment_id: formValue(form, 'commitment_id'), text: formValue(form, 'text'), ...(url !== '' ? { url } : {}), ...(verdict !== '' ? { verdict } : {}) })
              .then(async done => { if (done !== undefined) { form.reset(); await refresh() } })
          }}>
            <Field label="Commitment">
              <select name="commitment_id" required>{report.data?.commitments.map(c => <option key={c.commitment_id} value={c.commitment_id}>{c.actor}: {c.promise.slice(0, 80)}</option>)}</select>
            </Field>
            <Field label="What happened"><textarea name="text" rows={3} required placeholder="e.g. The clinic opened in May." /></Field>
            <div class="grid">
              <Field label="Link"><input name="url" type="url" placeholder="optional" /></Field>
              <Field label="Verdict"><select name="verdict"><option value="">infer from the text</option><option value="kept">kept</option><option value="in_progress">in progress</option><option value="broken">broken</option></select></Field>
            </div>
            <button type="submit" disabled={evidence.busy}>Add evidence</button>
          </form>
          <ErrorLine error={evidence.error} />
          {evidence.data !== undefined && (
            <p class="ok" data-testid="evidence-result">
              Now {shown(evidence.data.commitment.status)}{evidence.data.evidence.inferred ? ` (inferred from: ${evidence.data.evidence.cues.join(', ') || 'no cue words'})` : ''}.
            </p>
          )}
        </Card>
      )}
    </>
  )
}
