// The knowledge base page: search (kb-query) with cited passages and feedback on each, and adding a
// document (kb-ingest) for roles that may.
import { useCall, type AuthInfo, Feedback, Card, ErrorLine, Field, formValue } from '../../ui/src/module-kit.js'
import { manifest } from './manifest.js'

interface Result { cite: number, document_id: string, title: string, source: string, passage: number, text: string, score: number }

export function KnowledgeBasePage ({ auth }: { auth: AuthInfo }) {
  const query = useCall<{ results: Result[] }>('kb-query')
  const ingest = useCall<{ title: string, passage_count: number }>('kb-ingest')
  return (
    <>
      <h1>Knowledge base</h1>
      <Card title="Search">
        <form class="row" onSubmit={e => { e.preventDefault(); void query.run({ query: formValue(e.currentTarget, 'query') }) }}>
          <input name="query" placeholder="What does the platform say about…" required aria-label="Question" />
          <button type="submit" disabled={query.busy}>Search</button>
        </form>
        <ErrorLine error={query.error} />
        {query.data?.results.length === 0 && <p class="muted">No passage matches.</p>}
        <ol class="results" data-testid="kb-results">
          {query.data?.results.map(r => (
            <li key={`${r.document_id}-${r.passage}`}>
              <p>{r.text}</p>
              <p class="muted">[{r.cite}] {r.title}, passage {r.passage + 1}{r.source !== '' ? ` (${r.source})` : ''} · score {r.score}</p>
              <Feedback auth={auth} moduleId={manifest.id} resourceId={`${r.document_id}#${r.passage}`} />
            </li>
          ))}
        </ol>
      </Card>
      {auth.functions.includes('kb-ingest') && (
        <Card title="Add a document">
          <form class="stack" onSubmit={e => {
            e.preventDefault()
            const form = e.currentTarget
            void ingest.run({ title: formValue(form, 'title'), source: formValue(form, 'source'), text: formValue(form, 'text') }).then(done => { if (done !== undefined) form.reset() })
          }}>
            <Field label="Title"><input name="title" required /></Field>
            <Field label="Source"><input name="source" placeholder="optional" /></Field>
            <Field label="Text"><textarea name="text" rows={6} required /></Field>
            <button type="submit" disabled={ingest.busy}>Add</button>
          </form>
          <ErrorLine error={ingest.error} />
          {ingest.data !== undefined && <p class="ok">Added “{ingest.data.title}” ({ingest.data.passage_count} passages).</p>}
        </Card>
      )}
    </>
  )
}
