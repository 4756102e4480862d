// The question anticipation page: the likely questions of an event (anticipate-questions) with their
// scores as bars, why each is likely (cited evidence) and a suggested answer or the plain statement
// that there is none; and a preparation checklist (preparation-checklist) for staff. Thumbs up or down on both.
import { useCall, type AuthInfo, Bars, Feedback, Card, ErrorLine, Field, formValue, words } from '../../ui/src/module-kit.js'
import { manifest } from './manifest.js'


interface Question {
  question_id: string, kind: string, question: string, score: number, why: string
  evidence: Array<{ cite: number, text: string }>
  answer: { text: string, found: boolean, method: string, cites: number[] }
}
interface Anticipated { posts_read: number, focus_terms: string[], questions: Question[], sources: string[], resource_id: string, engine: string }
interface Checklist {
  checklist_id: string, event: string, date: string, resource_id: string, engine: string, sources: string[]
  items: Array<{ section: string, text: string, status: 'ready' | 'gap' | 'todo', due_on: string | null, cites: number[] }>
  counts: { total: number, ready: number, gap: number, todo: number }
}

const STATUS_LEVEL: Record<string, string> = { ready: 'low', todo: 'medium', gap: 'high' }
const cites = (numbers: number[]): string => numbers.length === 0 ? '' : ` ${numbers.map(n => `[${n}]`).join('')}`

function Sources ({ lines, testId }: { lines: string[], testId: string }) {
  return lines.length === 0 ? null : <details><summary class="muted">Sources ({lines.length})</summary><ol class="muted" data-testid={testId}>{lines.map(line => <li key={line}>{line}</li>)}</ol></details>
}

/** Optional fields sent only when filled in. */
function optional (form: HTMLFormElement, names: string[]): Record<string, string> {
  return Object.fromEntries(names.map(name => [name, formValue(form, name)]).filter(([, value]) => value !== ''))
}

export function QuestionAnticipationPage ({ auth }: { auth: AuthInfo }) {
  const anticipate = useCall<Anticipated>('anticipate-questions')
  const checklist = useCall<Checklist>('preparation-checklist')
  const a = anticipate.data
  const c = checklist.data
  return (
    <>
      <h1>Question anticipation</h1>
      <Card title="Likely questions">
        <form class="stack" onSubmit={e => { e.preventDefault(); void anticipate.run(optional(e.currentTarget, ['event', 'topic', 'audience', 'date'])) }}>
          <div class="grid">
            <Field label="Event"><input name="event" placeholder="Town hall in Eastside" /></Field>
            <Field label="Topic"><input name="topic" placeholder="housing" /></Field>
            <Field label="Audience"><input name="audience" placeholder="renters (optional)" /></Field>
            <Field label="Day"><input name="date" type="date" /></Field>
          </div>
          <button type="submit" disabled={anticipate.busy}>Anticipate</button>
        </form>
        <ErrorLine error={anticipate.error} />
        {a !== undefined && (
          <div data-testid="anticipated">
            <p class="muted">{a.posts_read} posts read{a.focus_terms.length > 0 ? ` on ${a.focus_terms.join(', ')}` : ''} · {a.engine}</p>
            {a.questions.length === 0 && <p class="muted">Nothing in the posts, commitments or issues points to a likely question.</p>}
            <Bars testId="question-scores" max={1} bars={a.questions.map(q => ({ label: q.question, value: q.score }))} />
            <ol class="results" data-testid="questions">
              {a.questions.map(q => (
                <li key={q.question_id} data-kind={q.kind}>
                  <p><strong>{q.question}</strong> <span class="badge">{q.kind}</span> <span class="muted">score {q.score}</span></p>
                  <p class="muted">Why: {q.why}</p>
                  <ul class="muted">{q.evidence.map(e => <li key={`${e.cite}-${e.text}`}>“{e.text}” [{e.cite}]</li>)}</ul>
                  <p class={q.answer.found ? '' : 'muted'} data-testid="suggested-answer">Suggested answer: {q.answer.text}</p>
                </li>
              ))}
            </ol>
            <Sources lines={a.sources} testId="question-sources" />
            <Feedback auth={auth} moduleId={manifest.id} resourceId={a.resource_id} />
          </div>
        )}
      </Card>
      {auth.functions.includes('preparation-checklist') && (
        <Card title="Preparation checklist">
          <form class="stack" onSubmit={e => {
            e.preventDefault()
            const form = e.currentTarget
            void checklist.run({ event: formValue(form, 'event'), topics: words(formValue(form, 'topics')), ...optional(form, ['date', 'audience']) })
          }}>
            <div class="grid">
              <Field label="Event"><input name="event" required placeholder="Town hall on housing" /></Field>
              <Field label="Day"><input name="date" type="date" /></Field>
              <Field label="Topics (comma-separated)"><input name="topics" placeholder="housing, transit" /></Field>
              <Field label="Audience"><input name="audience" placeholder="optional" /></Field>
            </div>
            <button type="submit" disabled={checklist.busy}>Build the checklist</button>
          </form>
          <ErrorLine error={checklist.error} />
          {c !== undefined && (
            <div data-testid="checklist">
              <p data-testid="checklist-counts">{c.counts.total} items: {c.counts.ready} ready, {c.counts.gap} gaps, {c.counts.todo} to do <span class="muted">· {c.event}, {c.date} · stored as {c.checklist_id}</span></p>
              <table>
                <thead><tr><th>Due</th><th>Item</th><th>Status</th><th>Kind</th></tr></thead>
                <tbody>{c.items.map((item, i) => (
                  <tr key={i} data-section={item.section} data-status={item.status}>
                    <td>{item.due_on ?? ''}</td><td>{item.text}<span class="muted">{cites(item.cites)}</span></td>
                    <td><span class={`badge level-${STATUS_LEVEL[item.status]}`}>{item.status}</span></td><td class="muted">{item.section}</td>
                  </tr>
                ))}</tbody>
              </table>
              <Sources lines={c.sources} testId="checklist-sources" />
              <Feedback auth={auth} moduleId={manifest.id} resourceId={c.resource_id} />
            </div>
          )}
        </Card>
      )}
    </>
  )
}
