// The compliance page: a text checked against the rule set (compliance-check) with each finding's
// rule, severity and evidence; and the report of a period (generate-report): donations against the
// limit, the checks run with their findings per rule as bars, and the regulatory deadlines, each cited.
import { useState } from 'preact/hooks'
import { dollars, electionLabel, useCall, type AuthInfo, Bars, Feedback, Card, ErrorLine, Field, formValue } from '../../ui/src/module-kit.js'
import { CHANNELS } from './channels.js'
import { manifest } from './manifest.js'

const EXAMPLE = 'Friends, our plan is endorsed by the Elections Board. Donate $5,000 today to keep the momentum going! Your gift is tax-deductible.'
const SEVERITY_LEVEL: Record<string, string> = { error: 'high', warning: 'medium', info: 'low' }

interface Finding { rule_id: string, severity: string, title: string, evidence: string[], reference: string }
interface Checked {
  check_id: string, channel: string, passed: boolean, counts: Record<string, number>, findings: Finding[]
  rules_applied: string[], rules_not_applied: Array<{ rule_id: string, reason: string }>, jurisdiction: string, sources: string[], resource_id: string, engine: string
}
interface Report {
  report_id: string, period_from: string, period_to: string, limit_cents: number, summary: string, summary_method: string, sources: string[], resource_id: string, engine: string
  donations: { donations: number, total_cents: number, donors: number, largest_cents: number, near_or_over_limit: Array<{ donor_id: string, name: string, election: string, total_cents: number, remaining_cents: number, standing: string }>, itemized_donors: Array<{ name: string, cycle: string, total_cents: number }>, sources: string[] }
  checks: { checks: number, passed: number, failed: number, by_rule: Array<{ rule_id: string, severity: string, title: string, findings: number }>, failing: Array<{ check_id: string, channel: string, checked_at: string, excerpt: string, errors: string[] }>, sources: string[] }
  deadlines: { deadlines: Array<{ date: string, when: string, text: string, clause: string, regulation: string, section: string }>, sources: string[] }
}

function Cited ({ lines }: { lines: string[] }) {
  return lines.length === 0 ? null : <ol class="muted">{lines.map(line => <li key={line}>{line}</li>)}</ol>
}

function CheckView ({ check, auth }: { check: Checked, auth: AuthInfo }) {
  return (
    <div data-testid="compliance-result" data-passed={String(check.passed)}>
      <p>
        <span class={`badge level-${check.passed ? 'low' : 'high'}`} data-testid="compliance-verdict">{check.passed ? 'passes' : 'does not pass'}</span>
        <span class="muted"> {check.counts.error} errors, {check.counts.warning} warnings, {check.counts.info} notes · {check.channel} · {check.jurisdiction}</span>
      </p>
      {check.findings.length === 0
        ? <p class="ok" data-testid="compliance-findings">No finding: every rule that applies is met.</p>
        : (
          <table data-testid="compliance-findings">
            <thead><tr><th>Rule</th><th>Severity</th><th>Evidence</th><th>Reference</th></tr></thead>
            <tbody>{check.findings.map((f, i) => (
              <tr key={i} data-rule={f.rule_id} data-severity={f.severity}>
                <td><strong>{f.rule_id}</strong><br /><span class="muted">{f.title}</span></td>
                <td><span class={`badge level-${SEVERITY_LEVEL[f.severity]}`}>{f.severity}</span></td>
                <td><ul>{f.evidence.map(e => <li key={e}>{e}</li>)}</ul></td>
                <td class="muted">{f.reference}</td>
              </tr>
            ))}</tbody>
          </table>)}
      <details><summary class="muted">Rules applied ({check.rules_applied.length}) and not applied ({check.rules_not_applied.length})</summary>
        <p class="muted">Applied: {check.rules_applied.join(', ')}</p>
        <ul class="muted">{check.rules_not_applied.map(r => <li key={r.rule_id}>{r.rule_id}: {r.reason}</li>)}</ul>
      </details>
      <Cited lines={check.sources} />
      <p class="muted">Stored as {check.check_id} · {check.engine}</p>
      <Feedback auth={auth} moduleId={manifest.id} resourceId={check.resource_id} />
    </div>
  )
}

function ReportView ({ report, auth }: { report: Report, auth: AuthInfo }) {
  const { donations: d, checks: c, deadlines: r } = report
  return (
    <div data-testid="compliance-report">
      <p data-testid="report-summary">{report.summary}</p>
      <p class="muted">{report.period_from} to {report.period_to} · summary {report.summary_method === 'generative' ? `by ${report.engine}` : 'by the rules'} · stored as {report.report_id}</p>
      <h3>Donations</h3>
      <div class="stats">
        <div><strong>{d.donations}</strong><span class="muted">donations</span></div>
        <div><strong>{dollars(d.total_cents)}</strong><span class="muted">total</span></div>
        <div><strong>{d.donors}</strong><span class="muted">donors</span></div>
        <div><strong>{dollars(d.largest_cents)}</strong><span class="muted">largest</span></div>
      </div>
      {d.near_or_over_limit.length > 0 && (
        <>
          <p class="muted">Near or over the {dollars(report.limit_cents)} limit (share of the limit given toward the election):</p>
          <Bars testId="report-limit" max={1} format={v => `${Math.round(v * 100)} %`} bars={d.near_or_over_limit.map(x => ({ label: `${x.name} (${electionLabel(x.election)})`, value: x.total_cents / report.limit_cents }))} />
        </>
      )}
      <Cited lines={d.sources} />
      <h3>Compliance checks</h3>
      <p data-testid="report-checks">{c.checks} checks: {c.passed} passed, {c.failed} failed</p>
      <Bars testId="report-rules" bars={c.by_rule.map(x => ({ label: x.rule_id, value: x.findings }))} />
      <Cited lines={c.sources} />
      <h3>Regulatory deadlines</h3>
      {r.deadlines.length === 0 ? <p class="muted">None in the period or the 30 days after.</p> : (
        <ul data-testid="report-deadlines">{r.deadlines.map((x, i) => <li key={i}><strong>{x.date}</strong> ({x.when}): {x.clause} <span class="muted">— {x.regulation}, {x.section}</span></li>)}</ul>
      )}
      <Cited lines={r.sources} />
      <Feedback auth={auth} moduleId={manifest.id} resourceId={report.resource_id} />
    </div>
  )
}

export function CompliancePage ({ auth }: { auth: AuthInfo }) {
  const check = useCall<Checked>('compliance-check')
  const report = useCall<Report>('generate-report')
  const [text, setText] = useState('')
  const year = new Date().toISOString().slice(0, 4)
  return (
    <>
      <h1>Compliance</h1>
      {auth.functions.includes('compliance-check') && (
        <Card title="Check an ad, mailer, e-mail or post">
          <form class="stack" onSubmit={e => {
            e.preventDefault()
            const form = e.currentTarget
            const sponsor = formValue(form, 'sponsor')
            const amount = formValue(form, 'amount')
            const email = formValue(form, 'donor_email')
            void check.run({
              text, channel: formValue(form, 'channel'),
              ...(sponsor !== '' ? { sponsor } : {}),
              ...(amount !== '' ? { amount_cents: Math.round(Number(amount) * 100) } : {}),
              ...(email !== '' ? { donor_email: email } : {})
            })
          }}>
            <Field label="Text"><textarea name="text" rows={6} required value={text} onInput={e => { setText(e.currentTarget.value) }} /></Field>
            <div class="grid">
              <Field label="Channel"><select name="channel">{CHANNELS.map(c => <option key={c} value={c} selected={c === 'email'}>{c}</option>)}</select></Field>
              <Field label="Sponsor (who paid)"><input name="sponsor" placeholder="Lopez for Council" /></Field>
              <Field label="Contribution ($)"><input name="amount" type="number" min="0.01" step="0.01" placeholder="optional" /></Field>
              <Field label="Donor e-mail"><input name="donor_email" type="email" placeholder="optional" /></Field>
            </div>
            <p class="row">
              <button type="submit" disabled={check.busy}>Check</button>{' '}
              <button type="button" class="ghost" onClick={() => { setText(EXAMPLE) }}>Load an example</button>
            </p>
          </form>
          <ErrorLine error={check.error} />
          {check.data !== undefined && <CheckView check={check.data} auth={auth} />}
        </Card>
      )}
      {auth.functions.includes('generate-report') && (
        <Card title="Compliance report">
          <form class="grid" onSubmit={e => { e.preventDefault(); const form = e.currentTarget; void report.run({ period_from: formValue(form, 'period_from'), period_to: formValue(form, 'period_to') }) }}>
            <Field label="From"><input name="period_from" type="date" required value={`${year}-01-01`} /></Field>
            <Field label="To"><input name="period_to" type="date" required value={new Date().toISOString().slice(0, 10)} /></Field>
            <button type="submit" name="report" disabled={report.busy}>Generate the report</button>
          </form>
          <ErrorLine error={report.error} />
          {report.data !== undefined && <ReportView report={report.data} auth={auth} />}
        </Card>
      )}
    </>
  )
}
