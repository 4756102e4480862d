// The meetings page: notes or a transcript in, and back (summarize-meeting) the summary, decisions,
// action items with owners and due dates, open questions and attendees.
import { useCall, type AuthInfo, Card, ErrorLine, Field, formValue, words } from '../../ui/src/module-kit.js'

interface Meeting {
  meeting_id: string, title: string, held_on: string | null, attendees: string[], summary: string, summary_method: string
  decisions: Array<{ speaker: string, text: string }>
  action_items: Array<{ owner: string, task: string, due_on: string | null, due_text: string | null }>
  open_questions: Array<{ speaker: string, text: string }>
  engine: string
}

const said = (speaker: string, text: string): string => speaker === '' ? text : `${speaker}: ${text}`

export function MeetingsPage (_props: { auth: AuthInfo }) {
  const summarize = useCall<Meeting>('summarize-meeting')
  const m = summarize.data
  return (
    <>
      <h1>Meetings</h1>
      <Card title="Summarise a meeting">
        <form class="stack" onSubmit={e => {
          e.preventDefault()
          const form = e.currentTarget
          const heldOn = formValue(form, 'held_on')
          void summarize.run({ title: formValue(form, 'title'), text: formValue(form, 'text'), attendees: words(formValue(form, 'attendees')), ...(heldOn !== '' ? { held_on: heldOn } : {}) })
        }}>
          <div class="grid">
            <Field label="Title"><input name="title" required /></Field>
            <Field label="Held on"><input name="held_on" type="date" /></Field>
            <Field label="Attendees (comma-separated)"><input name="attendees" placeholder="besides the speakers" /></Field>
          </div>
          <Field label="Transcript (“Speaker: words” lines) or notes">
            <textarea name="text" rows={9} required placeholder={'Ana: We agreed to canvass Elm Street first.\nAna: Ben will send the flyer by Friday.\nAction: Carla to book the hall\nBen: Who has the keys?'} />
          </Field>
          <button type="submit" disabled={summarize.busy}>Summarise</button>
        </form>
        <ErrorLine error={summarize.error} />
      </Card>
      {m !== undefined && (
        <Card title={m.title}>
          <div data-testid="meeting-summary">
            <p data-testid="meeting-summary-text">{m.summary}</p>
            <p class="muted">{m.summary_method} summary by {m.engine}{m.held_on !== null ? ` · held on ${m.held_on}` : ''}</p>
            <p>Attendees: <span data-testid="meeting-attendees">{m.attendees.join(', ') || '—'}</span></p>
            <h3>Decisions</h3>
            {m.decisions.length === 0 ? <p class="muted">None found.</p> : <ul data-testid="meeting-decisions">{m.decisions.map(d => <li key={d.text}>{said(d.speaker, d.text)}</li>)}</ul>}
            <h3>Action items</h3>
            {m.action_items.length === 0
              ? <p class="muted">None found.</p>
              : (
                <table data-testid="meeting-actions">
                  <thead><tr><th>Owner</th><th>Task</th><th>Due</th></tr></thead>
                  <tbody>{m.action_items.map((a, i) => <tr key={i}><td>{a.owner || <span class="muted">unassigned</span>}</td><td>{a.task}</td><td>{a.due_on ?? '—'}</td></tr>)}</tbody>
                </table>
                )}
            <h3>Open questions</h3>
            {m.open_questions.length === 0 ? <p class="muted">None.</p> : <ul data-testid="meeting-questions">{m.open_questions.map(q => <li key={q.text}>{said(q.speaker, q.text)}</li>)}</ul>}
          </div>
        </Card>
      )}
    </>
  )
}
