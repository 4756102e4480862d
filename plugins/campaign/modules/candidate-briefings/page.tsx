// The candidate briefings page: a briefing book on a subject (generate-briefing) — the summary, the
// knowledge base's background (cited), sentiment of the posts by day as bars, narratives, media
// coverage, open commitments, likely questions with answer points, notes on attendees, every section
// with its sources, and thumbs up or down.
import type { ComponentChildren } from 'preact'
import { useCall, type AuthInfo, Bars, Feedback, Card, ErrorLine, Field, formValue, words } from '../../ui/src/module-kit.js'
import { manifest } from './manifest.js'

interface Point { cite: number, text: string }
interface Sections {
  background: { sentences: Point[], sources: string[], note?: string }
  sentiment: { posts: number, positive: number, negative: number, neutral: number, mean_polarity: number, label: string, by_day: Array<{ day: string, count: number, mean_polarity: number }>, by_source: Array<{ source: string, count: number, mean_polarity: number }>, most_negative: { text: string } | null, most_positive: { text: string } | null, sources: string[] }
  narratives: { items: Array<{ narrative_id: string, label: string, post_count: number, mean_polarity: number, sample: string }>, sources: string[] }
  media: { matched: number, tones: Record<string, number>, items: Array<{ article_id: string, title: string, outlet: string, published_at: string, tone: string, polarity: number, summary: string }>, sources: string[] }
  commitments: { open: number, in_progress: number, broken: number, overdue: number, items: Array<{ commitment_id: string, actor: string, text: string, due_on: string | null, status: string, overdue: boolean }>, sources: string[] }
  likely_questions: { items: Array<{ question: string, basis: string, context?: string, answer_points: Point[] }>, sources: string[] }
}
interface Briefing {
  resource_id: string, subject: string, date: string | null, days: number, summary: string, summary_method: string, note?: string
  sections: Sections, attendees: Array<{ name: string, notes: Array<{ text: string, source: string }> }>, citation_lines: string[], engine: string
}

function Section ({ title, sources, testId, children }: { title: string, sources: string[], testId: string, children: ComponentChildren }) {
  return (
    <section data-testid={testId}>
      <h3>{title}</h3>
      {children}
      {sources.length > 0 && <details><summary class="muted">Sources ({sources.length})</summary><ul class="muted">{sources.map(s => <li key={s}>{s}</li>)}</ul></details>}
    </section>
  )
}

function BriefingBook ({ b, auth }: { b: Briefing, auth: AuthInfo }) {
  const s = b.sections
  return (
    <div class="briefing" data-testid="briefing">
      <p data-testid="briefing-summary">{b.summary}</p>
      {b.note !== undefined && <p class="muted">{b.note}</p>}
      <Section title="Background" sources={s.background.sources} testId="briefing-background">
        {s.background.sentences.length === 0 ? <p class="muted">{s.background.note}</p> : <ul>{s.background.sentences.map(p => <li key={p.text}>{p.text} [{p.cite}]</li>)}</ul>}
      </Section>
      <Section title={`Posts of the last ${b.days} days`} sources={s.sentiment.sources} testId="briefing-sentiment">
        <div class="stats">
          <div><strong>{s.sentiment.posts}</strong>posts</div>
          <div><strong class="negative">{s.sentiment.negative}</strong>negative</div>
          <div><strong class="positive">{s.sentiment.positive}</strong>positive</div>
          <div><strong>{s.sentiment.mean_polarity}</strong>mean polarity</div>
        </div>
        <Bars testId="briefing-days" signed max={1} bars={s.sentiment.by_day.map(d => ({ label: `${d.day} (${d.count})`, value: d.mean_polarity }))} />
        {s.sentiment.most_negative !== null && <blockquote class="negative">“{s.sentiment.most_negative.text}”</blockquote>}
        {s.sentiment.most_positive !== null && <blockquote class="positive">“{s.sentiment.most_positive.text}”</blockquote>}
      </Section>
      <Section title="Narratives" sources={s.narratives.sources} testId="briefing-narratives">
        {s.narratives.items.length === 0 ? <p class="muted">None.</p> : <ul>{s.narratives.items.map(n => <li key={n.narrative_id}>{n.label} — {n.post_count} posts, mean polarity {n.mean_polarity}<br /><span class="muted">“{n.sample}”</span></li>)}</ul>}
      </Section>
      <Section title={`Media coverage (${s.media.matched} articles)`} sources={s.media.sources} testId="briefing-media">
        {s.media.items.length === 0 ? <p class="muted">No stored article covers it.</p> : <ul>{s.media.items.map(a => <li key={a.article_id}><strong>{a.title}</strong> — {a.outlet}, {a.published_at.slice(0, 10)} <span class="badge">{a.tone}</span><br /><span class="muted">{a.summary}</span></li>)}</ul>}
      </Section>
      <Section title={`Commitments (${s.commitments.open + s.commitments.in_progress} open, ${s.commitments.overdue} overdue)`} sources={s.commitments.sources} testId="briefing-commitments">
        {s.commitments.items.length === 0 ? <p class="muted">None on record.</p> : <ul>{s.commitments.items.map(c => <li key={c.commitment_id}>{c.text} <span class="muted">({c.actor}, {c.status}{c.due_on !== null ? `, due ${c.due_on}` : ''})</span> {c.overdue && <span class="badge level-high">overdue</span>}</li>)}</ul>}
      </Section>
      <Section title="Likely questions" sources={s.likely_questions.sources} testId="briefing-questions">
        <ol>{s.likely_questions.items.map(q => (
          <li key={q.question}>
            <strong>{q.question}</strong>
            {q.context !== undefined && q.context !== '' && <p class="muted">“{q.context}”</p>}
            {q.answer_points.length > 0 && <ul>{q.answer_points.map(p => <li key={p.text}>{p.text} [{p.cite}]</li>)}</ul>}
          </li>
        ))}</ol>
      </Section>
      {b.attendees.length > 0 && (
        <Section title="Attendees" sources={b.attendees.flatMap(a => a.notes.map(n => n.source))} testId="briefing-attendees">
          <ul>{b.attendees.map(a => <li key={a.name}><strong>{a.name}</strong>{a.notes.length === 0 ? <span class="muted"> — nothing on record</span> : <ul>{a.notes.map(n => <li key={n.text}>{n.text}</li>)}</ul>}</li>)}</ul>
        </Section>
      )}
      <ol class="muted">{b.citation_lines.map(line => <li key={line}>{line}</li>)}</ol>
      <p class="muted">Summary by {b.engine} ({b.summary_method})</p>
      <Feedback auth={auth} moduleId={manifest.id} resourceId={b.resource_id} />
    </div>
  )
}

export function CandidateBriefingsPage ({ auth }: { auth: AuthInfo }) {
  const generate = useCall<Briefing>('generate-briefing')
  return (
    <>
      <h1>Candidate briefings</h1>
      <Card title="Prepare a briefing book">
        <form class="stack" onSubmit={e => {
          e.preventDefault()
          const form = e.currentTarget
          const date = formValue(form, 'date')
          const days = formValue(form, 'days')
          void generate.run({ subject: formValue(form, 'subject'), attendees: words(formValue(form, 'attendees')), ...(days !== '' ? { days: Number(days) } : {}), ...(date !== '' ? { date } : {}) })
        }}>
          <Field label="Subject: an event, a place, a person or a topic"><input name="subject" required placeholder="bridge toll" /></Field>
          <div class="grid">
            <Field label="Date of the event"><input name="date" type="date" /></Field>
            <Field label="Attendees (comma-separated)"><input name="attendees" placeholder="Maria Lopez" /></Field>
            <Field label="Days of posts"><input name="days" type="number" min={1} max={365} placeholder="30" /></Field>
          </div>
          <button type="submit" disabled={generate.busy}>Prepare</button>
        </form>
        <ErrorLine error={generate.error} />
      </Card>
      {generate.data !== undefined && <Card title={`Briefing: ${generate.data.subject}${generate.data.date !== null ? `, ${generate.data.date}` : ''}`}><BriefingBook b={generate.data} auth={auth} /></Card>}
    </>
  )
}
