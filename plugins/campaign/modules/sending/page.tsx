// The sending page: compose an e-mail or SMS to a saved list or to chosen people, preview what the first
// recipient gets and who is skipped (preview-send; a list's members by name through list-people), send
// it (send-email, send-sms) and see the summary; the send log, read again after each send
// (list-send-log: addresses only for the roles that see them); the suppression list for staff
// (list-suppressions, add-suppression; remove-suppression for admin); and the replies to texts for
// staff (list-sms-replies). One column on a phone.
import { useEffect, useState } from 'preact/hooks'
import { useCall, type AuthInfo, Card, ErrorLine, Field, formValue } from '../../ui/src/module-kit.js'

type Channel = 'email' | 'sms'
interface SavedList { list_id: string, name: string, count: number }
interface PersonRow { person_id: string, name: string, email?: string, phone?: string }
interface Skipped { person_id: string, reason: string }
interface Summary { send_id: string, sent: number, failed: number, skipped: Skipped[] }
interface Preview { enabled: boolean, recipients: number, will_send: number, skipped: Skipped[], first: { person_id: string, name: string, subject: string, body: string } | null }
interface LogEntry { send_id: string, channel: Channel, person_id: string, address?: string, purpose: string, status: 'sent' | 'failed' | 'skipped', response?: string, message_id: string, at: string, sent_by?: string }
interface Suppression { address: string, channel: Channel, reason: string, added_at: string, added_by?: string }
interface SmsReply { reply_id: string, from: string, body: string, action: string, person_id: string | null, received_at: string }

const MERGE_HELP = 'Merge fields: {{name}}, {{first_name}}, {{email}}, {{unsubscribe_url}}'
const STATUS_CLASS: Record<LogEntry['status'], string> = { sent: 'badge level-low', failed: 'badge level-high', skipped: 'badge level-medium' }
const when = (iso: string): string => new Date(iso).toLocaleString()

function Compose ({ canSend, onSent }: { canSend: (channel: Channel) => boolean, onSent: () => void }) {
  const lists = useCall<{ lists: SavedList[] }>('list-lists')
  const search = useCall<{ total: number, people: PersonRow[] }>('list-people')
  const members = useCall<{ total: number, people: PersonRow[] }>('list-people')
  const preview = useCall<Preview>('preview-send')
  const sendEmail = useCall<Summary>('send-email')
  const sendSms = useCall<Summary>('send-sms')
  const [channel, setChannel] = useState<Channel>(canSend('email') ? 'email' : 'sms')
  const [to, setTo] = useState<'list' | 'people'>('list')
  const [chosen, setChosen] = useState<PersonRow[]>([])
  const [summary, setSummary] = useState<Summary | undefined>(undefined)
  useEffect(() => { void lists.run() }, [])
  const sender = channel === 'email' ? sendEmail : sendSms

  const message = (form: HTMLFormElement): Record<string, unknown> | undefined => {
    const recipients = to === 'list' ? { list_id: formValue(form, 'list_id') } : { person_ids: chosen.map(p => p.person_id) }
    if (to === 'people' && chosen.length === 0) return undefined
    return { ...recipients, body: formValue(form, 'body'), ...(channel === 'email' ? { subject: formValue(form, 'subject') } : {}) }
  }
  const purpose = (form: HTMLFormElement): Record<string, string> => formValue(form, 'purpose') === '' ? {} : { purpose: formValue(form, 'purpose') }
  const nameOf = (id: string): string => (chosen.find(p => p.person_id === id) ?? members.data?.people.find(p => p.person_id === id))?.name ?? id
  const addPerson = (person: PersonRow): void => { if (!chosen.some(p => p.person_id === person.person_id)) setChosen([...chosen, person]) }

  return (
    <Card title="Compose">
      <form class="stack" data-testid="compose" onSubmit={e => {
        e.preventDefault()
        const form = e.currentTarget
        const args = message(form)
        if (args === undefined) return
        const action = (e.submitter as HTMLButtonElement | null)?.value
        if (action === 'preview') {
          if ('list_id' in args) void members.run({ list_id: args.list_id, limit: 500 })
          void preview.run({ channel, ...args })
          return
        }
        const count = preview.data?.will_send
        if (!window.confirm(`Send this ${channel === 'email' ? 'e-mail' : 'SMS'}${count !== undefined ? ` to ${count} people` : ''}?`)) return
        setSummary(undefined)
        void sender.run({ ...args, ...purpose(form) }).then(result => { if (result !== undefined) { setSummary(result); onSent() } })
      }}>
        <div class="grid">
          <Field label="Channel">
            <select name="channel" value={channel} onChange={e => { setChannel(e.currentTarget.value as Channel) }}>
              {canSend('email') && <option value="email">E-mail</option>}
              {canSend('sms') && <option value="sms">SMS</option>}
            </select>
          </Field>
          <Field label="To">
            <select name="to" value={to} onChange={e => { setTo(e.currentTarget.value as 'list' | 'people') }}>
              <option value="list">A saved list</option>
              <option value="people">Chosen people</option>
            </select>
          </Field>
          {to === 'list' && (
            <Field label="List">
              <select name="list_id" required>
                {lists.data?.lists.map(list => <option key={list.list_id} value={list.list_id}>{list.name} ({list.count})</option>)}
              </select>
            </Field>
          )}
          <Field label="Purpose"><input name="purpose" placeholder="newsletter" maxLength={64} /></Field>
        </div>
        <ErrorLine error={lists.error} />
        {to === 'people' && (
          <div data-testid="choose-people">
            <div class="row-buttons">
              <input type="search" placeholder="Find by name, e-mail or phone" aria-label="Find people" onKeyDown={e => {
                if (e.key !== 'Enter') return
                e.preventDefault()
                void search.run({ filter: { search: e.currentTarget.value.trim() }, limit: 20 })
              }} />
            </div>
            <ErrorLine error={search.error} />
            {search.data !== undefined && (
              <ul class="results">{search.data.people.map(p => (
                <li key={p.person_id}><button type="button" class="ghost" onClick={() => { addPerson(p) }}>Add</button> {p.name} <span class="muted">{channel === 'email' ? p.email : p.phone}</span></li>
              ))}</ul>
            )}
            <p class="muted">{chosen.length === 0 ? 'Nobody chosen yet.' : `${chosen.length} chosen:`}</p>
            <div class="row-buttons">{chosen.map(p => (
              <button type="button" class="ghost" key={p.person_id} title="Remove" onClick={() => { setChosen(chosen.filter(c => c.person_id !== p.person_id)) }}>{p.name} ×</button>
            ))}</div>
          </div>
        )}
        {channel === 'email' && <Field label="Subject"><input name="subject" required maxLength={300} placeholder="Saturday canvass, {{first_name}}" /></Field>}
        <Field label={channel === 'email' ? 'Message (plain text)' : 'Message (up to 1,600 characters)'}>
          <textarea name="body" required rows={channel === 'email' ? 10 : 4} maxLength={channel === 'sms' ? 1600 : undefined} placeholder={'Dear {{name}},\n…'} />
        </Field>
        <p class="muted">{MERGE_HELP}. Every e-mail carries an unsubscribe link; only people who agreed to the channel receive it.</p>
        <div class="row-buttons">
          <button type="submit" class="ghost" value="preview" disabled={preview.busy}>Preview</button>
          <button type="submit" value="send" disabled={sender.busy}>{sender.busy ? 'Sending…' : 'Send'}</button>
        </div>
      </form>
      <ErrorLine error={preview.error ?? sender.error} />
      {preview.data !== undefined && (
        <div data-testid="preview">
          <p>{preview.data.will_send} of {preview.data.recipients} will receive it; {preview.data.skipped.length} skipped.{!preview.data.enabled && <strong class="error"> Sending on this channel is off.</strong>}</p>
          {preview.data.first !== null
            ? <div class="letter"><p class="muted">As {preview.data.first.name} will get it:</p>{channel === 'email' && <p><strong>{preview.data.first.subject}</strong></p>}<pre>{preview.data.first.body}</pre></div>
            : <p class="muted">Nobody on it may receive this message.</p>}
          {preview.data.skipped.length > 0 && (
            <table><thead><tr><th>Person</th><th>Why skipped</th></tr></thead>
              <tbody>{preview.data.skipped.map(s => <tr key={s.person_id}><td>{nameOf(s.person_id)}</td><td>{s.reason}</td></tr>)}</tbody>
            </table>
          )}
        </div>
      )}
      {summary !== undefined && (
        <div data-testid="send-summary">
          <div class="stats">
            <div><strong class="positive">{summary.sent}</strong><span class="muted">sent</span></div>
            <div><strong class={summary.failed > 0 ? 'negative' : ''}>{summary.failed}</strong><span class="muted">failed</span></div>
            <div><strong>{summary.skipped.length}</strong><span class="muted">skipped</span></div>
          </div>
          {summary.skipped.length > 0 && (
            <table><thead><tr><th>Person</th><th>Why skipped</th></tr></thead>
              <tbody>{summary.skipped.map(s => <tr key={s.person_id}><td>{nameOf(s.person_id)}</td><td>{s.reason}</td></tr>)}</tbody>
            </table>
          )}
        </div>
      )}
    </Card>
  )
}

function SendLog () {
  const log = useCall<{ items: LogEntry[], next_cursor: string | null }>('list-send-log')
  const [entries, setEntries] = useState<LogEntry[]>([])
  const [sendId, setSendId] = useState<string | undefined>(undefined)
  const load = async (cursor?: string, only = sendId): Promise<void> => {
    const page = await log.run({ limit: 50, ...(cursor !== undefined ? { cursor } : {}), ...(only !== undefined ? { send_id: only } : {}) })
    if (page !== undefined) setEntries(cursor === undefined ? page.items : [...entries, ...page.items])
  }
  useEffect(() => { void load() }, [])
  const showAddress = entries.some(e => e.address !== undefined)
  return (
    <Card title="Send log">
      <div class="row-buttons">
        <button type="button" class="ghost" onClick={() => { void load(undefined) }}>Refresh</button>
        {sendId !== undefined && <button type="button" class="ghost" onClick={() => { setSendId(undefined); void load(undefined, undefined) }}>All sends</button>}
      </div>
      <ErrorLine error={log.error} />
      <table data-testid="send-log">
        <thead><tr><th>When</th><th>Status</th><th>Channel</th><th>Purpose</th><th>Person</th>{showAddress && <th>To</th>}{showAddress && <th>Answer</th>}<th>Send</th></tr></thead>
        <tbody>{entries.map(e => (
          <tr key={`${e.send_id}-${e.person_id}-${e.at}`}>
            <td>{when(e.at)}</td>
            <td><span class={STATUS_CLASS[e.status]}>{e.status}</span></td>
            <td>{e.channel === 'email' ? 'e-mail' : 'SMS'}</td>
            <td>{e.purpose}</td>
            <td>{e.person_id}</td>
            {showAddress && <td>{e.address}</td>}
            {showAddress && <td class="muted">{e.response}</td>}
            <td><button type="button" class="link" title="Only this send" onClick={() => { setSendId(e.send_id); void load(undefined, e.send_id) }}>{e.send_id.slice(0, 15)}</button></td>
          </tr>
        ))}</tbody>
      </table>
      {typeof log.data?.next_cursor === 'string' && <button type="button" class="ghost" disabled={log.busy} onClick={() => { void load(log.data?.next_cursor ?? undefined) }}>More</button>}
    </Card>
  )
}

function Suppressions ({ mayRemove }: { mayRemove: boolean }) {
  const list = useCall<{ suppressions: Suppression[] }>('list-suppressions')
  const add = useCall<Suppression>('add-suppression')
  const remove = useCall<{ removed: boolean }>('remove-suppression')
  useEffect(() => { void list.run() }, [])
  return (
    <Card title="Suppression list">
      <p class="muted">Nothing is ever sent to these addresses, whatever the consent on record. Unsubscribe links add to it.</p>
      <form class="grid" onSubmit={e => {
        e.preventDefault()
        const form = e.currentTarget
        void add.run({ address: formValue(form, 'address'), reason: formValue(form, 'reason') })
          .then(async added => { if (added !== undefined) { form.reset(); await list.run() } })
      }}>
        <Field label="E-mail or phone"><input name="address" required minLength={3} maxLength={254} /></Field>
        <Field label="Reason"><input name="reason" required maxLength={200} placeholder="asked by phone" /></Field>
        <button type="submit" disabled={add.busy}>Add</button>
      </form>
      <ErrorLine error={list.error ?? add.error ?? remove.error} />
      <table data-testid="suppressions">
        <thead><tr><th>Address</th><th>Reason</th><th>Added</th>{mayRemove && <th />}</tr></thead>
        <tbody>{list.data?.suppressions.map(s => (
          <tr key={s.address}>
            <td>{s.address}</td><td>{s.reason}</td><td>{when(s.added_at)}{s.added_by !== undefined && <><br /><span class="muted">{s.added_by}</span></>}</td>
            {mayRemove && <td><button type="button" class="ghost" onClick={() => {
              if (window.confirm(`Allow messages to ${s.address} again?`)) void remove.run({ address: s.address }).then(async () => { await list.run() })
            }}>Remove</button></td>}
          </tr>
        ))}</tbody>
      </table>
    </Card>
  )
}

function SmsReplies () {
  const replies = useCall<{ receiving: boolean, items: SmsReply[] }>('list-sms-replies')
  useEffect(() => { void replies.run({ limit: 50 }) }, [])
  return (
    <Card title="Replies to texts">
      {replies.data?.receiving === false && <p class="muted">Replies are not received: set [campaign].sms_inbound_auth_token and point the SMS provider's webhook at /sms/inbound.</p>}
      <button type="button" class="ghost" onClick={() => { void replies.run({ limit: 50 }) }}>Refresh</button>
      <ErrorLine error={replies.error} />
      <table data-testid="sms-replies">
        <thead><tr><th>When</th><th>From</th><th>Reply</th><th>Done</th><th>Person</th></tr></thead>
        <tbody>{replies.data?.items.map(r => (
          <tr key={r.reply_id}><td>{when(r.received_at)}</td><td>{r.from}</td><td>{r.body}</td><td>{r.action}</td><td>{r.person_id ?? 'unknown number'}</td></tr>
        ))}</tbody>
      </table>
    </Card>
  )
}

export function SendingPage ({ auth }: { auth: AuthInfo }) {
  const [sends, setSends] = useState(0)
  const may = (name: string): boolean => auth.functions.includes(name)
  const canSend = (channel: Channel): boolean => may(channel === 'email' ? 'send-email' : 'send-sms')
  return (
    <>
      <h1>Sending</h1>
      {(canSend('email') || canSend('sms')) && <Compose canSend={canSend} onSent={() => { setSends(n => n + 1) }} />}
      {may('list-send-log') && <SendLog key={sends} />}
      {may('list-suppressions') && <Suppressions mayRemove={may('remove-suppression')} />}
      {may('list-sms-replies') && <SmsReplies />}
    </>
  )
}
