// The fundraising page: donors with their totals against the limit (list-donors), recording a donation
// (record-donation) and drafting a solicitation (draft-solicitation) for roles that may.
import { useEffect } from 'preact/hooks'
import { dollars, useCall, type AuthInfo } from '../api.js'
import { Card, ErrorLine, Field, formValue } from '../ui.js'

interface Donor { donor_id: string, name: string, email: string, year_total_cents: number, lifetime_total_cents: number, remaining_cents: number, donation_count: number, last_donation_on: string }
interface Draft { subject: string, body: string, suggested_ask_cents: number }

export function FundraisingPage ({ auth }: { auth: AuthInfo }) {
  const donors = useCall<{ limit_cents: number, donors: Donor[] }>('list-donors')
  const record = useCall<{ remaining_cents: number }>('record-donation')
  const draft = useCall<Draft>('draft-solicitation')
  const mayDraft = auth.functions.includes('draft-solicitation')
  useEffect(() => { void donors.run() }, [])
  return (
    <>
      <h1>Fundraising</h1>
      <Card title="Donors">
        <ErrorLine error={donors.error ?? draft.error} />
        {donors.data !== undefined && <p class="muted">Limit per donor and calendar year: {dollars(donors.data.limit_cents)}.</p>}
        <table data-testid="donors">
          <thead><tr><th>Name</th><th>This year</th><th>Remaining</th><th>Lifetime</th><th>Gifts</th>{mayDraft && <th />}</tr></thead>
          <tbody>{donors.data?.donors.map(d => (
            <tr key={d.donor_id}>
              <td>{d.name}<br /><span class="muted">{d.email}</span></td>
              <td>{dollars(d.year_total_cents)}</td><td>{dollars(d.remaining_cents)}</td><td>{dollars(d.lifetime_total_cents)}</td><td>{d.donation_count}</td>
              {mayDraft && <td><button type="button" class="ghost" onClick={() => { void draft.run({ donor_id: d.donor_id }) }}>Draft ask</button></td>}
            </tr>
          ))}</tbody>
        </table>
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
            const cents = Math.round(Number(formValue(form, 'amount')) * 100)
            void record.run({ donor_name: formValue(form, 'name'), donor_email: formValue(form, 'email'), amount_cents: cents })
              .then(async done => { if (done !== undefined) { form.reset(); await donors.run() } })
          }}>
            <Field label="Donor name"><input name="name" required /></Field>
            <Field label="Donor e-mail"><input name="email" type="email" required /></Field>
            <Field label="Amount ($)"><input name="amount" type="number" min="0.01" step="0.01" required /></Field>
            <button type="submit" disabled={record.busy}>Record</button>
          </form>
          <ErrorLine error={record.error} />
          {record.data !== undefined && <p class="ok">Recorded; {dollars(record.data.remaining_cents)} remaining for this donor this year.</p>}
        </Card>
      )}
    </>
  )
}
