// The fundraising page: donors with their totals toward the next election (list-donors), a donor's
// gifts with their history (list-donations), correcting or refunding a gift (correct-donation,
// refund-donation), recording one with the itemisation fields (record-donation) and drafting a
// solicitation (draft-solicitation), each for the roles that may. Fields a role may not see are absent.
import { useEffect, useState } from 'preact/hooks'
import { dollars, electionLabel, useCall, type AuthInfo, Card, ErrorLine, Field, formValue } from '../../ui/src/module-kit.js'

interface Election { id: string, date: string }
interface Donor {
  donor_id: string, name: string, email?: string, address?: string, occupation?: string, employer?: string
  election: string | null, election_total_cents: number, remaining_cents: number, cycle_total_cents: number, lifetime_total_cents: number
  donation_count: number, last_donation_on: string, missing_itemization: string[]
}
interface Change { at: string, changed_by?: string, action: string, reason: string, changes: Record<string, { from: string | number | null, to: string | number | null }> }
interface Donation { donation_id: string, amount_cents: number, refunded_cents: number, received_on: string, election: string, recorded_by?: string, history: Change[] }
interface Rules { limit_cents: number, itemize_above_cents: number, election: Election | null }
interface Draft { subject: string, body: string, suggested_ask_cents: number }

const today = (): string => new Date().toISOString().slice(0, 10)
const cents = (form: HTMLFormElement, name: string): number | undefined => formValue(form, name) === '' ? undefined : Math.round(Number(formValue(form, name)) * 100)
/** The named fields of a form that are filled in. */
const filled = (form: HTMLFormElement, names: readonly string[]): Record<string, string> => Object.fromEntries(names.map(n => [n, formValue(form, n)]).filter(([, v]) => v !== ''))
const shownValue = (field: string, value: string | number | null): string => value === null ? 'next election' : field.endsWith('_cents') ? dollars(Number(value)) : field === 'election' ? electionLabel(String(value)) : String(value)

const ITEMIZATION = ['donor_address', 'donor_occupation', 'donor_employer'] as const
function ItemizationFields () {
  return (
    <>
      <Field label="Address"><input name="donor_address" autocomplete="street-address" /></Field>
      <Field label="Occupation"><input name="donor_occupation" /></Field>
      <Field label="Employer"><input name="donor_employer" /></Field>
    </>
  )
}

/** A donor's gifts: each with its history, and the forms to correct or refund it for roles that may. */
function Gifts ({ auth, donorId, onChange }: { auth: AuthInfo, donorId: string, onChange: () => Promise<void> }) {
  const gifts = useCall<Rules & { donor: Donor, donations: Donation[] }>('list-donations')
  const correct = useCall<Donation>('correct-donation')
  const refund = useCall<Donation>('refund-donation')
  const [editing, setEditing] = useState<string | undefined>(undefined)
  useEffect(() => { void gifts.run({ donor_id: donorId }) }, [donorId])
  const changed = async (done: Donation | undefined): Promise<void> => {
    if (done === undefined) return
    setEditing(undefined)
    await gifts.run({ donor_id: donorId })
    await onChange()
  }
  const d = gifts.data?.donor
  return (
    <section class="gifts" data-testid="donor-gifts">
      <ErrorLine error={gifts.error ?? correct.error ?? refund.error} />
      {d !== undefined && (
        <dl class="facts">
          <dt>Donor</dt><dd>{d.name}{d.email !== undefined && ` · ${d.email}`}</dd>
          {d.address !== undefined && <><dt>Address</dt><dd>{d.address || '—'}</dd><dt>Occupation, employer</dt><dd>{d.occupation || '—'}, {d.employer || '—'}</dd></>}
          {d.missing_itemization.length > 0 && <><dt>Missing</dt><dd class="error">{d.missing_itemization.join(', ')} (over the itemisation threshold)</dd></>}
        </dl>
      )}
      <table>
        <thead><tr><th>Received</th><th>Amount</th><th>Refunded</th><th>Election</th><th>History</th>{editing === undefined && auth.functions.includes('correct-donation') && <th />}</tr></thead>
        <tbody>{gifts.data?.donations.map(g => (
          <tr key={g.donation_id} data-donation={g.donation_id}>
            <td>{g.received_on}</td><td>{dollars(g.amount_cents)}</td><td>{g.refunded_cents > 0 ? dollars(g.refunded_cents) : ''}</td><td>{electionLabel(g.election)}</td>
            <td>{g.recorded_by !== undefined && <span class="muted">recorded by {g.recorded_by}</span>}
              <ul class="history">{g.history.map((h, i) => (
                <li key={i}>{h.at.slice(0, 16).replace('T', ' ')} {h.action}{h.changed_by !== undefined && ` by ${h.changed_by}`}: {Object.entries(h.changes).map(([f, c]) => `${f.replace(/_cents$/, '')} ${shownValue(f, c.from)} → ${shownValue(f, c.to)}`).join(', ')} <span class="muted">({h.reason})</span></li>
              ))}</ul>
            </td>
            {editing === undefined && auth.functions.includes('correct-donation') && <td><button type="button" class="ghost" onClick={() => { setEditing(g.donation_id) }}>Correct or refund</button></td>}
          </tr>
        ))}</tbody>
      </table>
      {editing !== undefined && (
        <div class="grid">
          <form class="stack" data-testid="correct-form" onSubmit={e => {
            e.preventDefault()
            const form = e.currentTarget
            const amount = cents(form, 'amount')
            void correct.run({ donation_id: editing, reason: formValue(form, 'reason'), ...(amount !== undefined ? { amount_cents: amount } : {}), ...filled(form, ['received_on', 'election', ...ITEMIZATION]) }).then(changed)
          }}>
            <strong>Correct</strong>
            <Field label="Amount ($)"><input name="amount" type="number" min="0.01" step="0.01" /></Field>
            <Field label="Received on"><input name="received_on" type="date" max={today()} /></Field>
            <Field label="Election"><select name="election"><option value="">unchanged</option><option value="primary">primary</option><option value="general">general</option></select></Field>
            <ItemizationFields />
            <Field label="Reason"><input name="reason" required /></Field>
            <button type="submit" disabled={correct.busy}>Correct</button>
          </form>
          <form class="stack" data-testid="refund-form" onSubmit={e => {
            e.preventDefault()
            const form = e.currentTarget
            const amount = cents(form, 'amount')
            void refund.run({ donation_id: editing, reason: formValue(form, 'reason'), ...(amount !== undefined ? { amount_cents: amount } : {}) }).then(changed)
          }}>
            <strong>Refund</strong>
            <Field label="Amount ($; all that remains if empty)"><input name="amount" type="number" min="0.01" step="0.01" /></Field>
            <Field label="Reason"><input name="reason" required /></Field>
            <button type="submit" disabled={refund.busy}>Refund</button>
            <button type="button" class="ghost" onClick={() => { setEditing(undefined) }}>Cancel</button>
          </form>
        </div>
      )}
    </section>
  )
}

export function FundraisingPage ({ auth }: { auth: AuthInfo }) {
  const donors = useCall<Rules & { donors: Donor[] }>('list-donors')
  const record = useCall<{ remaining_cents: number, election: string }>('record-donation')
  const draft = useCall<Draft>('draft-solicitation')
  const [open, setOpen] = useState<string | undefined>(undefined)
  const mayDraft = auth.functions.includes('draft-solicitation')
  const reload = async (): Promise<void> => { await donors.run() }
  useEffect(() => { void donors.run() }, [])
  const rules = donors.data
  return (
    <>
      <h1>Fundraising</h1>
      <Card title="Donors">
        <ErrorLine error={donors.error ?? draft.error} />
        {rules !== undefined && (
          <p class="muted" data-testid="fundraising-rules">
            Limit per donor and election: {dollars(rules.limit_cents)}; {rules.election === null ? 'no election cycle is configured ahead' : `next election: ${electionLabel(rules.election.id)} (${rules.election.date})`}.
            {' '}Above {dollars(rules.itemize_above_cents)} in a cycle, a donor's address, occupation and employer are required.
          </p>
        )}
        <table data-testid="donors">
          <thead><tr><th>Name</th><th>Toward {rules?.election !== null && rules?.election !== undefined ? electionLabel(rules.election.id) : 'next election'}</th><th>Remaining</th><th>This cycle</th><th>Lifetime</th><th>Gifts</th>{mayDraft && <th />}</tr></thead>
          <tbody>{donors.data?.donors.map(d => (
            <tr key={d.donor_id} data-donor={d.donor_id}>
              <td>{d.name}{d.email !== undefined && <><br /><span class="muted">{d.email}</span></>}{d.missing_itemization.length > 0 && <><br /><span class="error">missing {d.missing_itemization.join(', ')}</span></>}</td>
              <td>{dollars(d.election_total_cents)}</td><td>{dollars(d.remaining_cents)}</td><td>{dollars(d.cycle_total_cents)}</td><td>{dollars(d.lifetime_total_cents)}</td>
              <td><button type="button" class="link" aria-expanded={open === d.donor_id} onClick={() => { setOpen(open === d.donor_id ? undefined : d.donor_id) }}>{d.donation_count}</button></td>
              {mayDraft && <td><button type="button" class="ghost" onClick={() => { void draft.run({ donor_id: d.donor_id }) }}>Draft ask</button></td>}
            </tr>
          ))}</tbody>
        </table>
        {open !== undefined && <Gifts auth={auth} donorId={open} onChange={reload} />}
        {draft.data !== undefined && (
          <article class="letter" data-testid="draft">
            <h3>{draft.data.subject}</h3>
            <pre>{draft.data.body}</pre>
          </article>
        )}
      </Card>
      {auth.functions.includes('record-donation') && (
        <Card title="Record a donation">
          <form class="grid" onSubmit={e => {
            e.preventDefault()
            const form = e.currentTarget
            void record.run({ donor_name: formValue(form, 'name'), donor_email: formValue(form, 'email'), amount_cents: cents(form, 'amount'), ...filled(form, ['received_on', 'election', ...ITEMIZATION]) })
              .then(async done => { if (done !== undefined) { form.reset(); await reload() } })
          }}>
            <Field label="Donor name"><input name="name" required /></Field>
            <Field label="Donor e-mail"><input name="email" type="email" required /></Field>
            <Field label="Amount ($)"><input name="amount" type="number" min="0.01" step="0.01" required /></Field>
            <Field label="Received on"><input name="received_on" type="date" max={today()} value={today()} required /></Field>
            <Field label="Election"><select name="election"><option value="">the next one</option><option value="primary">primary</option><option value="general">general</option></select></Field>
            <ItemizationFields />
            <button type="submit" disabled={record.busy}>Record</button>
          </form>
          <ErrorLine error={record.error} />
          {record.data !== undefined && <p class="ok">Recorded toward the {electionLabel(record.data.election)} election; {dollars(record.data.remaining_cents)} remaining for this donor.</p>}
        </Card>
      )}
    </>
  )
}
