// The empathy simulator page: a message tested on voter personas (simulate-reaction): each persona's
// feeling as signed bars, its reaction, quote, concerns addressed and missed, objections and a cited
// line that could win it over; the default personas, or one of the user's own.
import { useCall, type AuthInfo, Bars, Feedback, Card, ErrorLine, Field, formValue, words } from '../../ui/src/module-kit.js'
import { manifest } from './manifest.js'

interface Reaction {
  persona: { id: string, name: string, description: string, concerns: string[], priorities: string[] }
  addressed: Array<{ concern: string, priority: boolean }>
  missing: string[]
  relevance: number
  feeling: number
  reaction: string
  objections: string[]
  quote: string
  suggestion: { concern: string, cite: number, sentence: string } | null
}
interface Simulation {
  reactions: Reaction[]
  summary: { supportive: number, opposed: number, mixed: number, indifferent: number, mean_feeling: number, mean_relevance: number }
  note: string, sources: string[], resource_id: string, engine: string
}

const LEVEL: Record<string, string> = { supportive: 'low', mixed: 'medium', opposed: 'high', indifferent: '' }

function PersonaCard ({ r }: { r: Reaction }) {
  return (
    <div class="persona" data-persona={r.persona.id} data-reaction={r.reaction}>
      <h3>{r.persona.name} <span class={`badge level-${LEVEL[r.reaction]}`}>{r.reaction}</span></h3>
      <p class="muted">{r.persona.description}</p>
      <blockquote>“{r.quote}”</blockquote>
      <p class="muted">Feeling {r.feeling} · concerns addressed {Math.round(r.relevance * 100)} %</p>
      <p>Addressed: {r.addressed.map(a => a.concern).join(', ') || 'none'}</p>
      <p>Missing: {r.missing.join(', ') || 'none'}</p>
      {r.objections.length > 0 && <ul>{r.objections.map(o => <li key={o}>{o}</li>)}</ul>}
      {r.suggestion !== null && <p class="muted">On {r.suggestion.concern}, the record says: {r.suggestion.sentence} [{r.suggestion.cite}]</p>}
    </div>
  )
}

export function EmpathySimulatorPage ({ auth }: { auth: AuthInfo }) {
  const simulate = useCall<Simulation>('simulate-reaction')
  const s = simulate.data
  return (
    <>
      <h1>Empathy simulator</h1>
      <Card title="Test a message">
        <form class="stack" onSubmit={e => {
          e.preventDefault()
          const form = e.currentTarget
          const name = formValue(form, 'persona_name')
          const concerns = words(formValue(form, 'persona_concerns'))
          const custom = name !== '' && concerns.length > 0 ? [{ name, concerns, priorities: words(formValue(form, 'persona_priorities')) }] : []
          void simulate.run({ message: formValue(form, 'message'), ...(custom.length > 0 ? { personas: custom } : {}) })
        }}>
          <Field label="Message"><textarea name="message" rows={4} required placeholder="We will raise the minimum wage to $20 an hour and freeze property taxes for seniors." /></Field>
          <details>
            <summary class="muted">Test on a persona of your own instead of the default set</summary>
            <div class="grid">
              <Field label="Name"><input name="persona_name" placeholder="Nurse on night shifts" /></Field>
              <Field label="Concerns (comma-separated)"><input name="persona_concerns" placeholder="health care, transportation" /></Field>
              <Field label="Priorities (among the concerns)"><input name="persona_priorities" placeholder="health care" /></Field>
            </div>
          </details>
          <button type="submit" disabled={simulate.busy}>Simulate</button>
        </form>
        <ErrorLine error={simulate.error} />
      </Card>
      {s !== undefined && (
        <Card title="Reactions">
          <p class="muted">{s.note}</p>
          <div class="stats" data-testid="reaction-summary">
            <div><strong>{s.summary.supportive}</strong>supportive</div>
            <div><strong>{s.summary.mixed}</strong>mixed</div>
            <div><strong>{s.summary.opposed}</strong>opposed</div>
            <div><strong>{s.summary.indifferent}</strong>indifferent</div>
          </div>
          <h3>Feeling by persona (−1 to 1)</h3>
          <Bars testId="reaction-feelings" signed max={1} bars={s.reactions.map(r => ({ label: r.persona.name, value: r.feeling }))} />
          <div class="personas" data-testid="reactions">{s.reactions.map(r => <PersonaCard key={r.persona.id} r={r} />)}</div>
          {s.sources.length > 0 && <ul class="muted">{s.sources.map(line => <li key={line}>{line}</li>)}</ul>}
          <p class="muted">by {s.engine}</p>
          <Feedback auth={auth} moduleId={manifest.id} resourceId={s.resource_id} />
        </Card>
      )}
    </>
  )
}
