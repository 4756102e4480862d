// The policy diff page: two versions of a policy compared clause by clause (compare-policies): the
// counts as one stacked bar, the summary, and each clause with its word changes and what changed in
// substance; the versions are typed in or named by knowledge-base document id. Thumbs up or down on the result.
import { useState } from 'preact/hooks'
import { useCall, type AuthInfo, Feedback, Card, ErrorLine, Field } from '../../ui/src/module-kit.js'
import { POLICY_A, POLICY_B } from './examples.js'
import { manifest } from './manifest.js'


type Status = 'added' | 'removed' | 'changed' | 'unchanged'
interface Substance {
  figures?: { before: string[], after: string[] }
  modal?: { before: { modal: string } | null, after: { modal: string } | null, change: string }
  negation?: { negated: string[], unnegated: string[] }
  stance?: { before: number, after: number, change: string }
}
interface Compared {
  counts: { clauses_a: number, clauses_b: number, added: number, removed: number, changed: number, unchanged: number, substantive: number }
  similarity: number, summary: string, summary_method: string, sources: string[], resource_id: string, engine: string
  clauses: Array<{ status: Status, section_a: string | null, section_b: string | null, a: string | null, b: string | null, words: Array<{ op: '=' | '-' | '+', text: string }>, substance: Substance, substantive: boolean }>
}

const COLOURS: Record<Status, string> = { unchanged: '#c9ced8', changed: '#f0a040', added: '#4a9d6b', removed: '#d9534f' }

/** The clauses by status as one stacked bar with a legend. */
function StatusBar ({ counts }: { counts: Compared['counts'] }) {
  const order: Status[] = ['unchanged', 'changed', 'added', 'removed']
  const total = Math.max(1, order.reduce((sum, s) => sum + counts[s], 0))
  let x = 0
  return (
    <svg viewBox="0 0 480 44" style={{ width: '100%', maxWidth: '32rem', display: 'block' }} role="img" data-testid="diff-counts"
      aria-label={order.map(s => `${counts[s]} ${s}`).join(', ')}>
      {order.map(s => {
        const width = 480 * counts[s] / total
        const rect = <rect key={s} x={x} y={2} width={width} height={18} fill={COLOURS[s]} />
        x += width
        return rect
      })}
      {order.map((s, i) => <text key={s} x={i * 120} y={38} font-size="11" fill="currentColor"><tspan fill={COLOURS[s]}>■</tspan> {counts[s]} {s}</text>)}
    </svg>
  )
}

/** The new clause with the words taken out struck through and the words put in underlined. */
function WordDiff ({ words }: { words: Compared['clauses'][number]['words'] }) {
  return (
    <>{words.map((w, k) => {
      const gap = k === 0 ? '' : ' '
      return <span key={k}>{gap}{w.op === '=' ? w.text : w.op === '-' ? <del>{w.text}</del> : <ins>{w.text}</ins>}</span>
    })}</>
  )
}

function substanceText (s: Substance): string {
  const parts: string[] = []
  if (s.modal !== undefined) parts.push(`“${s.modal.before?.modal ?? 'no modal'}” → “${s.modal.after?.modal ?? 'no modal'}” (${s.modal.change})`)
  if (s.figures !== undefined) parts.push(`${s.figures.before.join(', ') || 'nothing'} → ${s.figures.after.join(', ') || 'nothing'}`)
  if (s.negation !== undefined) parts.push([...s.negation.negated.map(t => `now negates ${t}`), ...s.negation.unnegated.map(t => `no longer negates ${t}`)].join(', '))
  if (s.stance !== undefined) parts.push(`stance ${s.stance.before} → ${s.stance.after} (${s.stance.change})`)
  return parts.join('; ')
}

function Version ({ label, title, text, setTitle, setText }: { label: string, title: string, text: string, setTitle: (v: string) => void, setText: (v: string) => void }) {
  return (
    <div class="stack">
      <Field label={`${label}: title, or a knowledge-base document id below`}><input name={`title_${label}`} value={title} onInput={e => { setTitle(e.currentTarget.value) }} /></Field>
      <Field label={`${label}: text`}><textarea name={`text_${label}`} rows={10} value={text} onInput={e => { setText(e.currentTarget.value) }} /></Field>
    </div>
  )
}

export function PolicyDiffPage ({ auth }: { auth: AuthInfo }) {
  const compare = useCall<Compared>('compare-policies')
  const [titleA, setTitleA] = useState('')
  const [titleB, setTitleB] = useState('')
  const [textA, setTextA] = useState('')
  const [textB, setTextB] = useState('')
  const [docA, setDocA] = useState('')
  const [docB, setDocB] = useState('')
  const side = (title: string, text: string, doc: string): object => doc.trim() !== ''
    ? { document_id: doc.trim(), ...(title.trim() !== '' ? { title: title.trim() } : {}) }
    : { text, ...(title.trim() !== '' ? { title: title.trim() } : {}) }
  const r = compare.data
  return (
    <>
      <h1>Policy diff</h1>
      <Card title="Compare two versions">
        <form class="stack" onSubmit={e => { e.preventDefault(); void compare.run({ a: side(titleA, textA, docA), b: side(titleB, textB, docB) }) }}>
          <div class="grid" style={{ gridTemplateColumns: '1fr 1fr' }}>
            <Version label="A" title={titleA} text={textA} setTitle={setTitleA} setText={setTextA} />
            <Version label="B" title={titleB} text={textB} setTitle={setTitleB} setText={setTextB} />
          </div>
          <div class="grid" style={{ gridTemplateColumns: '1fr 1fr' }}>
            <Field label="A: knowledge-base document id (instead of text)"><input name="document_a" value={docA} onInput={e => { setDocA(e.currentTarget.value) }} /></Field>
            <Field label="B: knowledge-base document id (instead of text)"><input name="document_b" value={docB} onInput={e => { setDocB(e.currentTarget.value) }} /></Field>
          </div>
          <p class="row">
            <button type="submit" disabled={compare.busy}>Compare</button>{' '}
            <button type="button" class="ghost" onClick={() => { setTitleA('Platform 2025'); setTitleB('Platform 2026'); setTextA(POLICY_A); setTextB(POLICY_B); setDocA(''); setDocB('') }}>Load an example</button>
          </p>
        </form>
        <ErrorLine error={compare.error} />
      </Card>
      {r !== undefined && (
        <Card title="What changed">
          <StatusBar counts={r.counts} />
          <p data-testid="diff-summary">{r.summary}</p>
          <p class="muted">{r.counts.substantive} changed in substance · similarity {r.similarity} · {r.sources.join(' · ')} · {r.summary_method === 'generative' ? `summary by ${r.engine}` : r.engine}</p>
          <table data-testid="diff-clauses">
            <thead><tr><th>Section</th><th>Clause</th><th>In substance</th></tr></thead>
            <tbody>{r.clauses.map((c, i) => (
              <tr key={i} data-status={c.status}>
                <td class="muted">{c.section_b ?? c.section_a}<br /><span class="badge" style={{ background: COLOURS[c.status], color: '#fff' }}>{c.status}</span></td>
                <td>{c.status === 'changed' ? <WordDiff words={c.words} /> : c.status === 'removed' ? <del>{c.a}</del> : c.status === 'added' ? <ins>{c.b}</ins> : c.b}</td>
                <td>{c.substantive ? substanceText(c.substance) : ''}</td>
              </tr>
            ))}</tbody>
          </table>
          <Feedback auth={auth} moduleId={manifest.id} resourceId={r.resource_id} />
        </Card>
      )}
    </>
  )
}
