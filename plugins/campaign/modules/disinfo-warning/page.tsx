// The disinfo warning page: a text's risk with each weighted signal and its evidence (analyze-disinfo),
// and counter-messages citing the knowledge base (counter-messaging) for an analysis or a typed claim.
import { useCall, type AuthInfo, Bars, COUNTER_TONES, Card, ErrorLine, Field, formValue } from '../../ui/src/module-kit.js'

interface Signal { signal: string, group: string, weight: number, value: number, contribution: number, detail: string, evidence: string[] }
interface Analysis {
  analysis_id: string, risk: number, level: string, engine: string, claims: string[]
  signals: Signal[]
  contradictions: Array<{ claim: string, sentence: string, title: string, reason: string }>
}
interface Counter {
  addressed: boolean, short: string, long: string, note?: string, engine: string, tone: string
  citations: Array<{ cite: number, title: string, passage: number, text: string }>
}


function ToneSelect () {
  return <Field label="Tone"><select name="tone">{COUNTER_TONES.map(t => <option key={t} value={t}>{t}</option>)}</select></Field>
}

function CounterMessage ({ counter }: { counter: Counter }) {
  if (!counter.addressed) return <p class="muted" data-testid="counter-message" data-addressed="false">{counter.note}</p>
  return (
    <article class="letter" data-testid="counter-message" data-addressed="true">
      <h3>Short</h3>
      <p data-testid="counter-short">{counter.short}</p>
      <h3>Long</h3>
      <p data-testid="counter-long">{counter.long}</p>
      <ol class="muted">{counter.citations.map(c => <li key={c.cite}>[{c.cite}] {c.title}, passage {c.passage + 1}: {c.text}</li>)}</ol>
      <p class="muted">Written by {counter.engine} · tone {counter.tone}</p>
    </article>
  )
}

export function DisinfoWarningPage ({ auth }: { auth: AuthInfo }) {
  const analyze = useCall<Analysis>('analyze-disinfo')
  const counter = useCall<Counter>('counter-messaging')
  const a = analyze.data
  const mayCounter = auth.functions.includes('counter-messaging')
  return (
    <>
      <h1>Disinfo warning</h1>
      <Card title="Assess a text">
        <form class="stack" onSubmit={e => {
          e.preventDefault()
          const form = e.currentTarget
          const source = formValue(form, 'source')
          void analyze.run({ text: formValue(form, 'text'), ...(source !== '' ? { source } : {}) })
        }}>
          <Field label="Text"><textarea name="text" rows={6} required placeholder="A post, message or article" /></Field>
          <Field label="Where it was seen"><input name="source" placeholder="optional" /></Field>
          <button type="submit" disabled={analyze.busy}>Assess</button>
        </form>
        <ErrorLine error={analyze.error} />
        {a !== undefined && (
          <div data-testid="disinfo-result">
            <p>Risk <strong data-testid="disinfo-risk">{a.risk}</strong> <span class={`badge level-${a.level}`} data-testid="disinfo-level">{a.level}</span></p>
            <h3>What raised it (weight × value)</h3>
            <Bars testId="disinfo-signals" max={0.25} bars={a.signals.map(s => ({ label: s.signal.replace(/_/g, ' '), value: s.contribution }))} />
            <table>
              <thead><tr><th>Signal</th><th>Value</th><th>Measured</th><th>Evidence</th></tr></thead>
              <tbody>{a.signals.map(s => (
                <tr key={s.signal}>
                  <td>{s.signal.replace(/_/g, ' ')}<br /><span class="muted">{s.group}, weight {s.weight}</span></td>
                  <td>{s.value}</td><td>{s.detail}</td>
                  <td>{s.evidence.length === 0 ? <span class="muted">none</span> : <ul>{s.evidence.map(x => <li key={x}>{x}</li>)}</ul>}</td>
                </tr>
              ))}</tbody>
            </table>
            {mayCounter && a.claims.length > 0 && (
              <form class="row" onSubmit={e => { e.preventDefault(); void counter.run({ analysis_id: a.analysis_id, tone: formValue(e.currentTarget, 'tone') }) }}>
                <ToneSelect />
                <button type="submit" disabled={counter.busy}>Write a counter-message</button>
              </form>
            )}
          </div>
        )}
      </Card>
      {mayCounter && (
        <Card title="Counter-message a claim">
          <form class="stack" onSubmit={e => {
            e.preventDefault()
            const form = e.currentTarget
            void counter.run({ text: formValue(form, 'claim'), tone: formValue(form, 'tone') })
          }}>
            <Field label="Claim"><textarea name="claim" rows={3} required /></Field>
            <ToneSelect />
            <button type="submit" disabled={counter.busy}>Write</button>
          </form>
          <ErrorLine error={counter.error} />
          {counter.data !== undefined && <CounterMessage counter={counter.data} />}
        </Card>
      )}
    </>
  )
}
