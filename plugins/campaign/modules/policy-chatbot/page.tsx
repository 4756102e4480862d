// The policy chatbot page: a conversation answered from the policy documents with citations (policy-chat),
// the caller's earlier conversations to resume (list-policy-sessions), and adding a policy document
// (policy-ingest) for roles that may.
import { useEffect, useState } from 'preact/hooks'
import { useCall, type AuthInfo, Feedback, Card, ErrorLine, Field, formValue } from '../../ui/src/module-kit.js'
import { manifest } from './manifest.js'

interface Turn { role: 'user' | 'assistant', text: string, sources?: string[], engine?: string, resource_id?: string }
interface Chat { session_id: string, answer: string, found: boolean, sources: string[], resource_id: string, engine: string }
interface Session { session_id: string, title: string, turn_count: number, updated_at: string, last_message: string, turns?: Turn[] }
interface Sessions { sessions: Session[], next_cursor: string | null }


function Turns ({ auth, turns }: { auth: AuthInfo, turns: Turn[] }) {
  const last = turns.findLastIndex(t => t.role === 'assistant')
  return (
    <ol class="chat" data-testid="policy-turns">
      {turns.map((turn, i) => (
        <li key={i} class={`turn turn-${turn.role}`}>
          <p class="muted">{turn.role === 'user' ? 'You' : 'Policy chatbot'}</p>
          <p data-testid={i === last ? 'policy-answer' : undefined}>{turn.text}</p>
          {turn.sources !== undefined && turn.sources.length > 0 && <ul class="muted">{turn.sources.map(s => <li key={s}>{s}</li>)}</ul>}
          {turn.engine !== undefined && <p class="muted">by {turn.engine}</p>}
          {turn.resource_id !== undefined && <Feedback auth={auth} moduleId={manifest.id} resourceId={turn.resource_id} />}
        </li>
      ))}
    </ol>
  )
}

export function PolicyChatbotPage ({ auth }: { auth: AuthInfo }) {
  const chat = useCall<Chat>('policy-chat')
  const list = useCall<Sessions>('list-policy-sessions')
  const open = useCall<Sessions>('list-policy-sessions')
  const ingest = useCall<{ title: string, passage_count: number, issues: string[] }>('policy-ingest')
  const [sessionId, setSessionId] = useState<string | undefined>(undefined)
  const [turns, setTurns] = useState<Turn[]>([])
  const [older, setOlder] = useState<Session[]>([])
  const refresh = (): void => { setOlder([]); void list.run({ limit: 10 }) }
  useEffect(refresh, [])

  const resume = (id: string): void => {
    void open.run({ session_id: id }).then(found => {
      const session = found?.sessions[0]
      if (session === undefined) return
      setSessionId(session.session_id)
      setTurns(session.turns ?? [])
    })
  }
  const sessions = [...older, ...(list.data?.sessions ?? [])]
  return (
    <>
      <h1>Policy chatbot</h1>
      <Card title={sessionId === undefined ? 'Ask about our policies' : 'Conversation'}>
        <Turns auth={auth} turns={turns} />
        <form class="stack" onSubmit={e => {
          e.preventDefault()
          const form = e.currentTarget
          const message = formValue(form, 'message')
          void chat.run({ message, ...(sessionId !== undefined ? { session_id: sessionId } : {}) }).then(answer => {
            if (answer === undefined) return
            setSessionId(answer.session_id)
            setTurns(previous => [...previous, { role: 'user', text: message }, { role: 'assistant', text: answer.answer, sources: answer.sources, engine: answer.engine, resource_id: answer.resource_id }])
            form.reset()
            refresh()
          })
        }}>
          <Field label="Question"><textarea name="message" rows={2} required placeholder="What is the plan for affordable housing?" /></Field>
          <div class="row">
            <button type="submit" disabled={chat.busy}>Ask</button>
            {sessionId !== undefined && <button type="button" class="ghost" onClick={() => { setSessionId(undefined); setTurns([]) }}>New conversation</button>}
          </div>
        </form>
        <ErrorLine error={chat.error ?? open.error} />
      </Card>
      <Card title="Your conversations">
        <ErrorLine error={list.error} />
        {sessions.length === 0
          ? <p class="muted">None yet.</p>
          : (
            <ul class="results" data-testid="policy-sessions">
              {sessions.map(s => (
                <li key={s.session_id}>
                  <button type="button" class="link" onClick={() => { resume(s.session_id) }}>{s.title}</button>
                  <span class="muted"> · {s.turn_count / 2} question(s) · {new Date(s.updated_at).toLocaleString()}</span>
                </li>
              ))}
            </ul>
            )}
        {list.data?.next_cursor !== null && list.data?.next_cursor !== undefined && (
          <button type="button" class="ghost" onClick={() => {
            const keep = sessions
            void list.run({ limit: 10, cursor: list.data?.next_cursor }).then(() => { setOlder(keep) })
          }}>Older</button>
        )}
      </Card>
      {auth.functions.includes('policy-ingest') && (
        <Card title="Add a policy document">
          <form class="stack" onSubmit={e => {
            e.preventDefault()
            const form = e.currentTarget
            const source = formValue(form, 'source')
            void ingest.run({ title: formValue(form, 'title'), text: formValue(form, 'text'), ...(source !== '' ? { source } : {}) }).then(done => { if (done !== undefined) form.reset() })
          }}>
            <Field label="Title"><input name="title" required /></Field>
            <Field label="Source"><input name="source" placeholder="optional: a file or URL" /></Field>
            <Field label="Text"><textarea name="text" rows={6} required /></Field>
            <button type="submit" disabled={ingest.busy}>Add to the policy documents</button>
          </form>
          <ErrorLine error={ingest.error} />
          {ingest.data !== undefined && (
            <p class="ok" data-testid="policy-ingested">Added “{ingest.data.title}” ({ingest.data.passage_count} passages{ingest.data.issues.length > 0 ? `; issues: ${ingest.data.issues.join(', ')}` : ''}).</p>
          )}
        </Card>
      )}
    </>
  )
}
