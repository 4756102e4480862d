// The media monitor page: analysing an article (analyze-article) with its summary, entities and the
// sentiment toward each, and comparing how outlets covered a topic (compare-coverage), page by page.
import { useState } from 'preact/hooks'
import { useCall, type AuthInfo, Bars, Card, ErrorLine, Field, formValue, words } from '../../ui/src/module-kit.js'

interface Ranked { term: string, count: number }
interface Article {
  article_id: string, title: string, outlet: string, language: string, word_count: number, tone: string, engine: string
  summary: Array<{ index: number, text: string }>
  sentiment: { score: number, polarity: number, label: string, mean_sentence_polarity: number }
  entity_sentiment: Array<{ entity: string, kind: string, mentions: number, polarity: number, label: string }>
  keywords: Ranked[]
  key_phrases: Ranked[]
}
interface Outlet {
  outlet: string, article_count: number, mean_sentiment: number, label: string
  entities: Array<{ entity: string, share: number }>
  distinctive_keywords: Array<{ term: string, distinctiveness: number }>
}
interface Listed { article_id: string, title: string, outlet: string, url: string, published_at: string, polarity: number, tone: string, relevance: number }
interface Coverage {
  topic: string, matched: number, engine: string
  outlets: Outlet[]
  similarity: Array<{ a: string, b: string, similarity: number }>
  articles: { items: Listed[], next_cursor: string | null }
}

/** A date input as the start (or, with `end`, the last millisecond) of that UTC day; undefined when empty. */
function day (form: HTMLFormElement, name: string, end = false): string | undefined {
  const value = formValue(form, name)
  return value === '' ? undefined : `${value}T${end ? '23:59:59.999' : '00:00:00'}Z`
}

export function MediaMonitorPage ({ auth }: { auth: AuthInfo }) {
  const analyze = useCall<Article>('analyze-article')
  const compare = useCall<Coverage>('compare-coverage')
  const [query, setQuery] = useState<Record<string, unknown>>({})
  const [earlier, setEarlier] = useState<Listed[]>([])
  const more = async (): Promise<void> => {
    const current = compare.data
    if (current === undefined || current.articles.next_cursor === null) return
    setEarlier([...earlier, ...current.articles.items])
    await compare.run({ ...query, cursor: current.articles.next_cursor })
  }
  const a = analyze.data
  const c = compare.data
  return (
    <>
      <h1>Media monitor</h1>
      {auth.functions.includes('analyze-article') && (
        <Card title="Analyze an article">
          <form class="stack" onSubmit={e => {
            e.preventDefault()
            const form = e.currentTarget
            const url = formValue(form, 'url')
            const published = day(form, 'published')
            void analyze.run({ title: formValue(form, 'title'), outlet: formValue(form, 'outlet'), text: formValue(form, 'text'), ...(url !== '' ? { url } : {}), ...(published !== undefined ? { published_at: published } : {}) })
          }}>
            <div class="grid">
              <Field label="Title"><input name="title" required /></Field>
              <Field label="Outlet"><input name="outlet" required placeholder="Daily Ledger" /></Field>
              <Field label="Published"><input name="published" type="date" /></Field>
              <Field label="Address"><input name="url" placeholder="optional" /></Field>
            </div>
            <Field label="Text"><textarea name="text" rows={7} required /></Field>
            <button type="submit" disabled={analyze.busy}>Analyze</button>
          </form>
          <ErrorLine error={analyze.error} />
          {a !== undefined && (
            <div data-testid="article-analysis">
              <p>
                <span class="badge" data-testid="article-tone">{a.tone}</span> {a.outlet} · {a.word_count} words · language {a.language} ·
                sentiment {a.sentiment.label} (polarity {a.sentiment.polarity}, mean per sentence {a.sentiment.mean_sentence_polarity})
              </p>
              <h3>Summary</h3>
              <ol>{a.summary.map(s => <li key={s.index}>{s.text}</li>)}</ol>
              <h3>Sentiment toward each entity</h3>
              {a.entity_sentiment.length === 0
                ? <p class="muted">No named entity found.</p>
                : <Bars testId="entity-sentiment" signed max={1} bars={a.entity_sentiment.map(e => ({ label: `${e.entity} (${e.mentions})`, value: e.polarity }))} />}
              <dl class="facts">
                <dt>Keywords</dt><dd>{a.keywords.map(k => k.term).join(', ')}</dd>
                <dt>Key phrases</dt><dd>{a.key_phrases.map(k => k.term).join(', ')}</dd>
              </dl>
              <p class="muted">Stored as {a.article_id} · {a.engine}</p>
            </div>
          )}
        </Card>
      )}
      <Card title="Compare coverage">
        <form class="grid" onSubmit={e => {
          e.preventDefault()
          const form = e.currentTarget
          const topic = formValue(form, 'topic')
          const outlets = words(formValue(form, 'outlets'))
          const from = day(form, 'from')
          const to = day(form, 'to', true)
          const args = { ...(topic !== '' ? { topic } : {}), ...(outlets.length > 0 ? { outlets } : {}), ...(from !== undefined ? { from } : {}), ...(to !== undefined ? { to } : {}), limit: 20 }
          setQuery(args)
          setEarlier([])
          void compare.run(args)
        }}>
          <Field label="Topic"><input name="topic" placeholder="all stored articles when empty" /></Field>
          <Field label="Outlets"><input name="outlets" placeholder="comma-separated, optional" /></Field>
          <Field label="From"><input name="from" type="date" /></Field>
          <Field label="To"><input name="to" type="date" /></Field>
          <button type="submit" disabled={compare.busy}>Compare</button>
        </form>
        <ErrorLine error={compare.error} />
        {c !== undefined && (
          <div data-testid="coverage">
            <p class="muted">{c.matched} matching article(s){c.topic !== '' ? ` on “${c.topic}”` : ''}.</p>
            <h3>Mean sentiment by outlet</h3>
            <Bars testId="outlet-sentiment" signed max={1} bars={c.outlets.map(o => ({ label: o.outlet, value: o.mean_sentiment }))} />
            <table data-testid="outlets">
              <thead><tr><th>Outlet</th><th>Articles</th><th>Sentiment</th><th>Distinctive keywords</th><th>Entities (share of articles)</th></tr></thead>
              <tbody>{c.outlets.map(o => (
                <tr key={o.outlet}>
                  <td>{o.outlet}</td><td>{o.article_count}</td><td>{o.mean_sentiment} ({o.label})</td>
                  <td>{o.distinctive_keywords.map(k => k.term).join(', ')}</td>
                  <td>{o.entities.map(e => `${e.entity} ${Math.round(e.share * 100)}%`).join(', ')}</td>
                </tr>
              ))}</tbody>
            </table>
            {c.similarity.length > 0 && (
              <>
                <h3>How alike the outlets' coverage is</h3>
                <Bars testId="outlet-similarity" max={1} bars={c.similarity.map(s => ({ label: `${s.a} – ${s.b}`, value: s.similarity }))} />
              </>
            )}
            <h3>Articles</h3>
            <ul class="results" data-testid="coverage-articles">
              {[...earlier, ...c.articles.items].map(item => (
                <li key={item.article_id}>
                  {/^https?:\/\//i.test(item.url) ? <a href={item.url} rel="noreferrer noopener" target="_blank">{item.title}</a> : item.title}
                  <span class="muted"> · {item.outlet} · {item.published_at.slice(0, 10)} · {item.tone} · polarity {item.polarity}</span>
                </li>
              ))}
            </ul>
            {c.articles.next_cursor !== null && <button type="button" class="ghost" disabled={compare.busy} onClick={() => { void more() }}>More</button>}
          </div>
        )}
      </Card>
    </>
  )
}
