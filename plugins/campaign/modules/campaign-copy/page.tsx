// The campaign copy page: copy for a channel written from the knowledge base (generate-copy), with its
// length against the channel's limit, its cited sources and thumbs up or down; and the copies written so far
// (list-copy-history), newest first, a page at a time.
import { useEffect, useState } from 'preact/hooks'
import { useCall, type AuthInfo, Feedback, Card, ErrorLine, Field, formValue } from '../../ui/src/module-kit.js'
import { CHANNELS, TONES } from './choices.js'
import { manifest } from './manifest.js'

const LENGTHS = ['short', 'medium', 'long']

interface Copy {
  copy_id: string | null, resource_id: string, topic: string, channel: string, tone: string, length: string, audience: string
  grounded?: boolean, headline: string, text: string, characters: number, limit: number, clipped: boolean
  citation_lines: string[], method: string, note?: string, engine: string, created_by: string, created_at: string
}
interface History { total: number, items: Copy[], next_cursor: string | null }

/** The copy's length against the channel's limit, as a filled bar. */
function LengthGauge ({ characters, limit }: { characters: number, limit: number }) {
  const share = Math.min(1, characters / limit)
  return (
    <svg viewBox="0 0 400 28" style={{ width: '100%', maxWidth: '26rem', display: 'block' }} role="img" aria-label={`${characters} of ${limit} characters`} data-testid="copy-gauge">
      <rect x={0} y={4} width={400} height={14} rx={4} fill="#eef0f4" />
      <rect x={0} y={4} width={400 * share} height={14} rx={4} fill={share > 0.95 ? '#d9534f' : '#4a7bd8'} />
      <text x={0} y={27} font-size="9" fill="currentColor">{characters} / {limit} characters</text>
    </svg>
  )
}

function Select ({ name, label, options, initial }: { name: string, label: string, options: readonly string[], initial?: string }) {
  return <Field label={label}><select name={name}>{options.map(o => <option key={o} value={o} selected={o === initial}>{o}</option>)}</select></Field>
}

function CopyView ({ copy, auth }: { copy: Copy, auth: AuthInfo }) {
  if (copy.grounded === false) return <p class="muted" data-testid="copy-note">{copy.note}</p>
  return (
    <article class="letter" data-testid="copy-result" data-channel={copy.channel}>
      {copy.headline !== '' && <h3 data-testid="copy-headline">{copy.headline}</h3>}
      <pre data-testid="copy-text">{copy.text}</pre>
      <LengthGauge characters={copy.characters} limit={copy.limit} />
      {copy.clipped && <p class="muted">Cut to the channel's limit.</p>}
      <ol class="muted" data-testid="copy-sources">{copy.citation_lines.map(line => <li key={line}>{line}</li>)}</ol>
      <p class="muted">{copy.channel} · {copy.tone} · {copy.length} · written by {copy.engine}</p>
      <Feedback auth={auth} moduleId={manifest.id} resourceId={copy.resource_id} />
    </article>
  )
}

export function CampaignCopyPage ({ auth }: { auth: AuthInfo }) {
  const generate = useCall<Copy>('generate-copy')
  const history = useCall<History>('list-copy-history')
  const [items, setItems] = useState<Copy[]>([])
  const [channel, setChannel] = useState('')
  const mayWrite = auth.functions.includes('generate-copy')
  const load = async (cursor?: string): Promise<void> => {
    const page = await history.run({ limit: 10, ...(channel !== '' ? { channel } : {}), ...(cursor !== undefined ? { cursor } : {}) })
    if (page !== undefined) setItems(previous => cursor === undefined ? page.items : [...previous, ...page.items])
  }
  useEffect(() => { void load() }, [channel, generate.data])
  return (
    <>
      <h1>Campaign copy</h1>
      {mayWrite && (
        <Card title="Write copy from the knowledge base">
          <form class="stack" onSubmit={e => {
            e.preventDefault()
            const form = e.currentTarget
            const audience = formValue(form, 'audience')
            void generate.run({ topic: formValue(form, 'topic'), channel: formValue(form, 'channel'), tone: formValue(form, 'tone'), length: formValue(form, 'length'), ...(audience !== '' ? { audience } : {}) })
          }}>
            <Field label="Topic"><input name="topic" required placeholder="public transit" /></Field>
            <div class="grid">
              <Select name="channel" label="Channel" options={CHANNELS} />
              <Select name="tone" label="Tone" options={TONES} />
              <Select name="length" label="Length" options={LENGTHS} initial="medium" />
              <Field label="Audience"><input name="audience" placeholder="young families (optional)" /></Field>
            </div>
            <button type="submit" disabled={generate.busy}>Write</button>
          </form>
          <ErrorLine error={generate.error} />
          {generate.data !== undefined && <CopyView copy={generate.data} auth={auth} />}
        </Card>
      )}
      <Card title="Copy written so far">
        <div class="grid">
          <Field label="Channel">
            <select name="history-channel" value={channel} onChange={e => { setChannel(e.currentTarget.value) }}>
              <option value="">all</option>
              {CHANNELS.map(c => <option key={c} value={c}>{c}</option>)}
            </select>
          </Field>
        </div>
        <ErrorLine error={history.error} />
        {items.length === 0 && !history.busy && <p class="muted">Nothing written yet.</p>}
        <table data-testid="copy-history">
          <thead><tr><th>When</th><th>Channel</th><th>Topic</th><th>Copy</th><th>By</th></tr></thead>
          <tbody>{items.map(c => (
            <tr key={c.copy_id} data-copy={c.copy_id}>
              <td>{c.created_at.slice(0, 16).replace('T', ' ')}</td>
              <td>{c.channel}<br /><span class="muted">{c.tone}, {c.length}</span></td>
              <td>{c.topic}</td>
              <td>{c.headline !== '' && <strong>{c.headline}<br /></strong>}{c.text.length > 160 ? `${c.text.slice(0, 159)}…` : c.text}<Feedback auth={auth} moduleId={manifest.id} resourceId={c.resource_id} /></td>
              <td class="muted">{c.created_by}</td>
            </tr>
          ))}</tbody>
        </table>
        {typeof history.data?.next_cursor === 'string' && <button type="button" class="ghost" onClick={() => { void load(history.data?.next_cursor ?? undefined) }}>Show more</button>}
      </Card>
    </>
  )
}
