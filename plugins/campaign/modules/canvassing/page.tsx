// The canvassing page: a door-knocking or phone script (generate-script) on given issues or on the
// local issues of a place — the issues' urgency there as bars, each issue's cited talking points and
// question, answers to objections, the close, the script to read, and thumbs up or down.
import { useCall, type AuthInfo, Bars, Feedback, Card, ErrorLine, Field, formValue, words } from '../../ui/src/module-kit.js'
import { manifest } from './manifest.js'

interface Issue {
  issue: string, from: string, intro: string, question: string, note?: string
  local: { mentions: number, share: number, urgency: number, polarity: number, quote: string | null } | null
  talking_points: Array<{ cite: number, text: string }>
}
interface Script {
  resource_id: string, mode: string, location: string, posts_read: number, greeting: string, close: string
  issues: Issue[], objections: Array<{ objection: string, response: string }>
  script: string, citation_lines: string[], method: string, note?: string, engine: string
}

export function CanvassingPage ({ auth }: { auth: AuthInfo }) {
  const generate = useCall<Script>('generate-script')
  const s = generate.data
  const local = s?.issues.filter(i => i.local !== null) ?? []
  return (
    <>
      <h1>Canvassing</h1>
      <Card title="Write a script">
        <form class="stack" onSubmit={e => {
          e.preventDefault()
          const form = e.currentTarget
          const location = formValue(form, 'location')
          const issues = words(formValue(form, 'issues'))
          const audience = formValue(form, 'audience')
          void generate.run({ mode: formValue(form, 'mode'), ...(location !== '' ? { location } : {}), ...(issues.length > 0 ? { issues } : {}), ...(audience !== '' ? { audience } : {}) })
        }}>
          <div class="grid">
            <Field label="Where (its local issues come from the posts)"><input name="location" placeholder="Eastside" /></Field>
            <Field label="Or the issues (comma-separated)"><input name="issues" placeholder="rent, bus service" /></Field>
            <Field label="Audience"><input name="audience" placeholder="renters (optional)" /></Field>
            <Field label="Mode"><select name="mode"><option value="door">door-knocking</option><option value="phone">phone</option></select></Field>
          </div>
          <button type="submit" disabled={generate.busy}>Write the script</button>
        </form>
        <ErrorLine error={generate.error} />
        {s !== undefined && s.note !== undefined && <p class="muted" data-testid="script-note">{s.note}</p>}
      </Card>
      {s !== undefined && s.issues.length > 0 && (
        <Card title="The script">
          <div class="script" data-testid="script">
            {local.length > 0 && (
              <>
                <h3>Urgency of the issues{s.location !== '' ? ` in ${s.location}` : ''} ({s.posts_read} posts read)</h3>
                <Bars testId="script-urgency" max={1} bars={local.map(i => ({ label: i.issue, value: i.local?.urgency ?? 0 }))} />
              </>
            )}
            <ol data-testid="script-issues">
              {s.issues.map(i => (
                <li key={i.issue} data-issue={i.issue}>
                  <strong>{i.issue}</strong> <span class="muted">({i.from})</span>
                  {typeof i.local?.quote === 'string' && <blockquote>“{i.local.quote}”</blockquote>}
                  <ul>{i.talking_points.map(p => <li key={p.text}>{p.text} [{p.cite}]</li>)}</ul>
                  {i.note !== undefined && <p class="muted">{i.note}</p>}
                  <p>Ask: {i.question}</p>
                </li>
              ))}
            </ol>
            <h3>Objections</h3>
            <table>
              <tbody>{s.objections.map(o => <tr key={o.objection}><td>“{o.objection}”</td><td>{o.response}</td></tr>)}</tbody>
            </table>
            <h3>To read</h3>
            <pre data-testid="script-text">{s.script}</pre>
            <ol class="muted">{s.citation_lines.map(line => <li key={line}>{line}</li>)}</ol>
            <p class="muted">{s.mode === 'door' ? 'Door-knocking' : 'Phone'} script · written by {s.engine}</p>
            <Feedback auth={auth} moduleId={manifest.id} resourceId={s.resource_id} />
          </div>
        </Card>
      )}
    </>
  )
}
