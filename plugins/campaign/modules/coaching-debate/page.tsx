// The coaching and debate page: the candidate answers or states a position (coaching-exchange); in
// debate mode an opponent rebuts from the knowledge base and asks a follow-up, in coaching mode the
// answer is measured (points lost by finding, as bars) with tips and a cited fact; one session runs on.
import { useState } from 'preact/hooks'
import { useCall, type AuthInfo, Bars, Feedback, Card, ErrorLine, Field, formValue } from '../../ui/src/module-kit.js'
import { manifest } from './manifest.js'

interface Counted { count: number, per_100_words: number, found: string[], flagged: boolean }
interface Coaching {
  length: { words: number, seconds: number, verdict: string }
  hedges: Counted
  fillers: Counted
  tone: { polarity: number, label: string, flagged: boolean }
  key_terms: { question: string, terms: string[], used: string[], missing: string[], coverage: number, answers: boolean } | null
  fact: { sentence: string, title: string, passage: number } | null
  points_lost: { length: number, hedges: number, fillers: number, key_terms: number, tone: number }
  score: number
  tips: string[]
}
interface Debate { counter_point: { sentence: string, title: string, passage: number } | null, rebuttal: string, question: string, note: string }
interface Exchange {
  session_id: string, mode: 'debate' | 'coaching', topic: string, reply: string, debate?: Debate, coaching?: Coaching
  sources: string[], turns: Array<{ role: 'user' | 'assistant', text: string, mode: string }>, resource_id: string, engine: string
}

/** The points each finding cost, labelled. */
function pointsLost (c: Coaching): Array<{ label: string, value: number }> {
  return [
    { label: `length (${c.length.words} words)`, value: c.points_lost.length },
    { label: `hedges (${c.hedges.count})`, value: c.points_lost.hedges },
    { label: `filler words (${c.fillers.count})`, value: c.points_lost.fillers },
    { label: 'key terms missing', value: c.points_lost.key_terms },
    { label: `tone (${c.tone.label})`, value: c.points_lost.tone }
  ]
}

function CoachingResult ({ c }: { c: Coaching }) {
  return (
    <div data-testid="coaching-feedback">
      <p>Score <strong data-testid="coaching-score">{c.score}</strong>/100 · {c.length.words} words, about {c.length.seconds} s at 150 words a minute ({c.length.verdict})</p>
      <h3>Points lost</h3>
      <Bars testId="coaching-points" max={30} bars={pointsLost(c)} />
      <dl class="facts">
        <dt>Hedges</dt><dd>{c.hedges.found.join(', ') || 'none'} ({c.hedges.per_100_words} per 100 words)</dd>
        <dt>Filler words</dt><dd>{c.fillers.found.join(', ') || 'none'} ({c.fillers.per_100_words} per 100 words)</dd>
        <dt>Tone</dt><dd>{c.tone.label} ({c.tone.polarity})</dd>
        <dt>Key terms</dt><dd>{c.key_terms === null ? 'no question given' : `used ${c.key_terms.used.join(', ') || 'none'}; missing ${c.key_terms.missing.join(', ') || 'none'}`}</dd>
      </dl>
      {c.tips.length > 0 && <><h3>Tips</h3><ul data-testid="coaching-tips">{c.tips.map(tip => <li key={tip}>{tip}</li>)}</ul></>}
    </div>
  )
}

function DebateResult ({ d }: { d: Debate }) {
  return (
    <div data-testid="debate-result">
      {d.rebuttal !== '' && <p data-testid="debate-rebuttal"><strong>Opponent:</strong> {d.rebuttal}</p>}
      <p data-testid="debate-question"><strong>Follow-up:</strong> {d.question}</p>
      {d.note !== '' && <p class="muted">{d.note}</p>}
    </div>
  )
}

export function CoachingDebatePage ({ auth }: { auth: AuthInfo }) {
  const exchange = useCall<Exchange>('coaching-exchange')
  const [sessionId, setSessionId] = useState<string | undefined>(undefined)
  const x = exchange.data
  return (
    <>
      <h1>Coaching and debate</h1>
      <Card title={sessionId === undefined ? 'Practise an answer' : 'Session'}>
        {x !== undefined && sessionId !== undefined && (
          <ol class="chat" data-testid="coaching-turns">
            {x.turns.map((turn, i) => (
              <li key={i} class={`turn turn-${turn.role}`}>
                <p class="muted">{turn.role === 'user' ? 'You' : turn.mode === 'debate' ? 'Opponent' : 'Coach'}</p>
                <p>{turn.text}</p>
              </li>
            ))}
          </ol>
        )}
        <form class="stack" onSubmit={e => {
          e.preventDefault()
          const form = e.currentTarget
          const topic = formValue(form, 'topic')
          void exchange.run({ mode: formValue(form, 'mode'), message: formValue(form, 'message'), ...(topic !== '' ? { topic } : {}), ...(sessionId !== undefined ? { session_id: sessionId } : {}) })
            .then(done => { if (done !== undefined) { setSessionId(done.session_id); (form.elements.namedItem('message') as HTMLTextAreaElement).value = '' } })
        }}>
          <div class="grid">
            <Field label="Mode">
              <select name="mode">
                <option value="coaching">coaching: feedback on my answer</option>
                <option value="debate">debate: play my opponent</option>
              </select>
            </Field>
            <Field label="Question or topic"><input name="topic" placeholder="How will you keep rent affordable?" /></Field>
          </div>
          <Field label="Your answer or statement"><textarea name="message" rows={5} required /></Field>
          <div class="row">
            <button type="submit" disabled={exchange.busy}>Send</button>
            {sessionId !== undefined && <button type="button" class="ghost" onClick={() => { setSessionId(undefined) }}>New session</button>}
          </div>
        </form>
        <ErrorLine error={exchange.error} />
      </Card>
      {x !== undefined && (
        <Card title={x.mode === 'debate' ? 'Your opponent answers' : 'Feedback'}>
          {x.debate !== undefined && <DebateResult d={x.debate} />}
          {x.coaching !== undefined && <CoachingResult c={x.coaching} />}
          {x.mode === 'coaching' && x.engine.startsWith('generative') && <p data-testid="coaching-reply">{x.reply}</p>}
          {x.sources.length > 0 && <ul class="muted">{x.sources.map(s => <li key={s}>{s}</li>)}</ul>}
          <p class="muted">by {x.engine}</p>
          <Feedback auth={auth} moduleId={manifest.id} resourceId={x.resource_id} />
        </Card>
      )}
    </>
  )
}
