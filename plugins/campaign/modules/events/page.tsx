// The events page: upcoming events with their shifts (free places, waitlist, the signed-in user's own
// place) and RSVP / cancel buttons (list-events, rsvp-shift, cancel-rsvp); for staff, a shift's roster
// with check-in buttons (shift-roster, check-in), creating an event with its shifts (save-event),
// publishing an event on its public page or taking it down (publish-event) and sending the reminders
// due now (send-shift-reminders); then the public forms and petitions: each with its link, signatures
// and a Publish / Unpublish button (list-forms, save-form), for staff a form to make one, and every
// public page's views, sign-ups and conversion with their export (public-page-stats). Shifts are
// listed, not tabled, to fit a phone.
import { useEffect, useState } from 'preact/hooks'
import { useCall, type AuthInfo, Card, ErrorLine, Field, formValue, words } from '../../ui/src/module-kit.js'

interface Mine { status: 'confirmed' | 'waitlisted', position: number | null, checked_in: boolean }
interface Shift { shift_id: string, starts_at: string, ends_at: string, capacity: number, skills: string[], cancelled: boolean, confirmed_count: number, free: number, waitlist_count: number, mine: Mine | null }
interface EventView { event_id: string, title: string, description: string, location: { text: string, lat: number, lon: number }, cancelled: boolean, published?: boolean, slug?: string, shifts: Shift[] }
interface Entry { person_id: string, name: string, email: string, state: 'confirmed' | 'checked_in' | 'no_show' | 'waitlisted', position: number | null, checked_in_at: string | null, attended: number, no_shows: number }
interface Roster { event: { title: string }, shift: Shift, counts: Record<'confirmed' | 'checked_in' | 'no_show' | 'waitlisted', number>, confirmed: Entry[], waitlist: Entry[] }
interface ReminderRun { shift_id: string, title: string, person_ids: string[], sent: number, error?: string }

/** "Sat, Jun 6, 10:00–13:00" in the browser's time zone. */
function when (shift: { starts_at: string, ends_at: string }): string {
  const start = new Date(shift.starts_at)
  const end = new Date(shift.ends_at)
  const day = start.toLocaleDateString('en-US', { weekday: 'short', month: 'short', day: 'numeric' })
  const time = (d: Date): string => d.toLocaleTimeString('en-GB', { hour: '2-digit', minute: '2-digit' })
  return `${day}, ${time(start)}–${time(end)}`
}

/** A datetime-local value as ISO 8601 with the browser's offset (the wall-clock time is the shift's slot). */
function withOffset (local: string): string {
  const minutes = -new Date(local).getTimezoneOffset()
  const sign = minutes < 0 ? '-' : '+'
  const pad = (n: number): string => String(Math.floor(Math.abs(n))).padStart(2, '0')
  return `${local.length === 16 ? `${local}:00` : local}${sign}${pad(minutes / 60)}:${pad(minutes % 60)}`
}

const STATE_LABEL: Record<Entry['state'], string> = { confirmed: 'confirmed', checked_in: 'checked in', no_show: 'no-show', waitlisted: 'waiting' }

function places (shift: Shift): string {
  if (shift.cancelled) return 'cancelled'
  const free = shift.free > 0 ? `${shift.free} of ${shift.capacity} places free` : `full (${shift.capacity})`
  return shift.waitlist_count > 0 ? `${free} · ${shift.waitlist_count} waiting` : free
}

/** A shift's roster for staff: each confirmed person with a check-in button, then the waitlist. */
function ShiftRoster ({ shiftId, onChange }: { shiftId: string, onChange: () => Promise<void> }) {
  const roster = useCall<Roster>('shift-roster')
  const checkIn = useCall<unknown>('check-in')
  useEffect(() => { void roster.run({ shift_id: shiftId }) }, [shiftId])
  const r = roster.data
  return (
    <section class="roster" data-testid="roster">
      <ErrorLine error={roster.error ?? checkIn.error} />
      {r !== undefined && (
        <>
          <h3>{r.event.title} · {when(r.shift)}</h3>
          <p class="muted">{r.counts.confirmed + r.counts.checked_in + r.counts.no_show} confirmed · {r.counts.checked_in} checked in · {r.counts.no_show} no-show · {r.counts.waitlisted} waiting</p>
          <ul class="shifts">{[...r.confirmed, ...r.waitlist].map(e => (
            <li key={e.person_id} data-person={e.person_id} data-state={e.state}>
              <div>
                <strong>{e.name}</strong> <span class="muted">{e.email}</span><br />
                <span class={e.state === 'no_show' ? 'negative' : e.state === 'checked_in' ? 'positive' : 'muted'}>{e.position !== null ? `waiting #${e.position}` : STATE_LABEL[e.state]}</span>
                <span class="muted"> · attended {e.attended}, no-shows {e.no_shows}</span>
              </div>
              {e.state !== 'waitlisted' && (
                <button type="button" class={e.state === 'checked_in' ? 'ghost' : ''} disabled={checkIn.busy}
                  onClick={() => { void checkIn.run({ shift_id: shiftId, person_id: e.person_id, undo: e.state === 'checked_in' }).then(async done => { if (done !== undefined) { await roster.run({ shift_id: shiftId }); await onChange() } }) }}>
                  {e.state === 'checked_in' ? 'Undo check-in' : 'Check in'}
                </button>
              )}
            </li>
          ))}</ul>
          {r.confirmed.length + r.waitlist.length === 0 && <p class="muted">Nobody has signed up yet.</p>}
        </>
      )}
    </section>
  )
}

/** The form for a new event: its place and any number of shifts. */
function NewEvent ({ onSaved }: { onSaved: () => Promise<void> }) {
  const save = useCall<EventView>('save-event')
  const [shifts, setShifts] = useState(1)
  return (
    <Card title="Create an event">
      <form class="stack" data-testid="event-form" onSubmit={e => {
        e.preventDefault()
        const form = e.currentTarget
        void save.run({
          title: formValue(form, 'title'),
          description: formValue(form, 'description'),
          location: { text: formValue(form, 'place'), lat: Number(formValue(form, 'lat')), lon: Number(formValue(form, 'lon')) },
          shifts: Array.from({ length: shifts }, (_, i) => ({
            starts_at: withOffset(formValue(form, `start${i}`)),
            ends_at: withOffset(formValue(form, `end${i}`)),
            capacity: Number(formValue(form, `capacity${i}`)),
            skills: words(formValue(form, `skills${i}`))
          }))
        }).then(async saved => { if (saved !== undefined) { form.reset(); setShifts(1); await onSaved() } })
      }}>
        <Field label="Title"><input name="title" required maxLength={200} /></Field>
        <Field label="Description"><textarea name="description" rows={3} /></Field>
        <div class="grid">
          <Field label="Place"><input name="place" required placeholder="Community hall, 12 Elm Street" /></Field>
          <Field label="Latitude"><input name="lat" type="number" step="any" required value="52.52" /></Field>
          <Field label="Longitude"><input name="lon" type="number" step="any" required value="13.40" /></Field>
        </div>
        {Array.from({ length: shifts }, (_, i) => (
          <fieldset key={i} class="grid shift-fields">
            <legend>Shift {i + 1}</legend>
            <Field label="Starts"><input name={`start${i}`} type="datetime-local" required /></Field>
            <Field label="Ends"><input name={`end${i}`} type="datetime-local" required /></Field>
            <Field label="Places"><input name={`capacity${i}`} type="number" min="1" required value="10" /></Field>
            <Field label="Skills wanted"><input name={`skills${i}`} placeholder="canvassing, driving" /></Field>
          </fieldset>
        ))}
        <div class="row-buttons">
          <button type="button" class="ghost" onClick={() => { setShifts(n => Math.min(50, n + 1)) }}>Add a shift</button>
          {shifts > 1 && <button type="button" class="ghost" onClick={() => { setShifts(n => n - 1) }}>Remove the last shift</button>}
          <button type="submit" disabled={save.busy}>Create the event</button>
        </div>
      </form>
      <ErrorLine error={save.error} />
    </Card>
  )
}

const FIELDS = [['first_name', 'First name'], ['last_name', 'Last name'], ['phone', 'Phone'], ['postcode', 'Postcode'], ['comment', 'Comment']] as const

interface FormView {
  form_id: string
  title: string
  text: string
  fields: Array<{ field: string, required: boolean }>
  consents: Array<{ label: string, email: boolean }>
  target: number | null
  published: boolean
  signatures: number
  path: string
}
interface PageStats { page: 'event' | 'form', id: string, title: string, path: string, published: boolean, views: number, signups: number, conversion: number | null }

/** The form to make a form or petition. */
function NewForm ({ onSaved }: { onSaved: () => Promise<void> }) {
  const save = useCall<FormView>('save-form')
  return (
    <Card title="Create a form or petition">
      <form class="stack" data-testid="new-form" onSubmit={e => {
        e.preventDefault()
        const form = e.currentTarget
        const ask = (name: string): string => formValue(form, `ask_${name}`)
        const updates = formValue(form, 'updates')
        const target = formValue(form, 'target')
        void save.run({
          title: formValue(form, 'title'),
          text: formValue(form, 'text'),
          fields: FIELDS.filter(([name]) => ask(name) !== 'no').map(([name]) => ({ field: name, required: ask(name) === 'required' })),
          consents: updates === '' ? [] : [{ label: updates, email: true }],
          target: target === '' ? null : Number(target),
          published: (form.elements.namedItem('published') as HTMLInputElement).checked
        }).then(async saved => { if (saved !== undefined) { form.reset(); await onSaved() } })
      }}>
        <Field label="Title"><input name="title" required maxLength={200} /></Field>
        <Field label="Text"><textarea name="text" rows={3} maxLength={5000} /></Field>
        <fieldset class="grid">
          <legend>Fields (the e-mail address is always asked)</legend>
          {FIELDS.map(([name, label]) => (
            <Field key={name} label={label}>
              <select name={`ask_${name}`}>
                <option value="no">Not asked</option>
                <option value="optional">Optional</option>
                <option value="required">Required</option>
              </select>
            </Field>
          ))}
        </fieldset>
        <Field label="E-mail updates box (its label; empty for none)"><input name="updates" maxLength={200} value="E-mail me campaign updates" /></Field>
        <Field label="Target of signatures (a petition; empty for none)"><input name="target" type="number" min="1" /></Field>
        <label><input type="checkbox" name="published" /> Publish it now</label>
        <div class="row-buttons"><button type="submit" disabled={save.busy}>Create the form</button></div>
      </form>
      <ErrorLine error={save.error} />
    </Card>
  )
}

function PublicFormsPanel ({ may }: { may: (name: string) => boolean }) {
  const list = useCall<{ forms: FormView[] }>('list-forms')
  const save = useCall<FormView>('save-form')
  const stats = useCall<{ pages: PageStats[] }>('public-page-stats')
  const refresh = async (): Promise<void> => { await list.run(); if (may('public-page-stats')) await stats.run() }
  useEffect(() => { void refresh() }, [])
  return (
    <>
      <Card title="Public forms and petitions">
        <ErrorLine error={list.error ?? save.error} />
        {list.data?.forms.length === 0 && <p class="muted">No forms yet.</p>}
        <ul class="shifts" data-testid="forms">{list.data?.forms.map(form => (
          <li key={form.form_id} data-form={form.form_id}>
            <div>
              <strong>{form.title}</strong><br />
              <span class="muted">{form.target === null ? `${form.signatures} sent` : `${form.signatures} of ${form.target} signatures`}</span><br />
              {form.published
                ? <span>Public page: <a href={form.path} target="_blank" rel="noopener">{form.path}</a> · embed: {form.path}/embed</span>
                : <span class="muted">Not published.</span>}
            </div>
            {may('save-form') && (
              <div class="row-buttons">
                <button type="button" class="ghost" disabled={save.busy} onClick={() => {
                  const { form_id: id, title, text, fields, consents, target, published } = form
                  void save.run({ form_id: id, title, text, fields, consents, target, published: !published }).then(refresh)
                }}>{form.published ? 'Unpublish' : 'Publish'}</button>
              </div>
            )}
          </li>
        ))}</ul>
      </Card>
      {may('save-form') && <NewForm onSaved={refresh} />}
      {may('public-page-stats') && (
        <Card title="Public pages: views and sign-ups">
          <ErrorLine error={stats.error} />
          <p class="muted"><a href="/export/public-pages" download>Export CSV</a></p>
          <table data-testid="page-stats">
            <thead><tr><th scope="col">Page</th><th scope="col">Views</th><th scope="col">Sign-ups</th><th scope="col">Conversion</th></tr></thead>
            <tbody>{stats.data?.pages.map(page => (
              <tr key={page.id} data-page={page.id}>
                <td>{page.title} <span class="muted">{page.path}</span></td>
                <td>{page.views}</td>
                <td>{page.signups}</td>
                <td>{page.conversion === null ? '–' : `${(page.conversion * 100).toFixed(1)} %`}</td>
              </tr>
            ))}</tbody>
          </table>
        </Card>
      )}
    </>
  )
}

export function EventsPage ({ auth }: { auth: AuthInfo }) {
  const list = useCall<{ events: EventView[] }>('list-events')
  const rsvp = useCall<Mine & { shift: Shift }>('rsvp-shift')
  const cancel = useCall<unknown>('cancel-rsvp')
  const reminders = useCall<{ reminder_hours: number, sent: ReminderRun[] }>('send-shift-reminders')
  const publish = useCall<{ published: boolean, path: string }>('publish-event')
  const [rosterOf, setRosterOf] = useState<string | undefined>(undefined)
  const may = (name: string): boolean => auth.functions.includes(name)
  const refresh = async (): Promise<void> => { await list.run() }
  useEffect(() => { void refresh() }, [])
  return (
    <>
      <h1>Events and shifts</h1>
      <Card title="Upcoming events">
        <ErrorLine error={list.error ?? rsvp.error ?? cancel.error ?? publish.error} />
        {list.data?.events.length === 0 && <p class="muted">No upcoming events.</p>}
        <div data-testid="events">{list.data?.events.map(event => (
          <article key={event.event_id} class="event" data-event={event.event_id}>
            <h3>{event.title}</h3>
            <p class="muted">{event.location.text}</p>
            {event.description !== '' && <p>{event.description}</p>}
            {may('publish-event') && (
              <p class="row-buttons" data-testid="public-page">
                {event.published === true
                  ? <span>Public page: <a href={`/e/${event.slug ?? event.event_id}`} target="_blank" rel="noopener">/e/{event.slug ?? event.event_id}</a></span>
                  : <span class="muted">Not published: only people signed in see it.</span>}
                <button type="button" class="ghost" disabled={publish.busy} onClick={() => { void publish.run({ event_id: event.event_id, published: event.published !== true }).then(refresh) }}>
                  {event.published === true ? 'Unpublish' : 'Publish'}
                </button>
              </p>
            )}
            <ul class="shifts">{event.shifts.map(shift => (
              <li key={shift.shift_id} data-shift={shift.shift_id}>
                <div>
                  <strong>{when(shift)}</strong><br />
                  <span class="muted" data-testid="places">{places(shift)}</span>
                  {shift.skills.length > 0 && <span class="muted"> · {shift.skills.join(', ')}</span>}
                  {shift.mine !== null && (
                    <><br /><span class="positive" data-testid="mine">{shift.mine.status === 'confirmed' ? (shift.mine.checked_in ? 'You are checked in' : 'You are signed up') : `You are on the waitlist (#${shift.mine.position ?? ''})`}</span></>
                  )}
                </div>
                <div class="row-buttons">
                  {may('rsvp-shift') && !shift.cancelled && (shift.mine === null
                    ? <button type="button" disabled={rsvp.busy} onClick={() => { void rsvp.run({ shift_id: shift.shift_id }).then(refresh) }}>{shift.free > 0 ? 'Sign up' : 'Join the waitlist'}</button>
                    : <button type="button" class="ghost" disabled={cancel.busy} onClick={() => { void cancel.run({ shift_id: shift.shift_id }).then(refresh) }}>Cancel my RSVP</button>)}
                  {may('shift-roster') && <button type="button" class="ghost" onClick={() => { setRosterOf(rosterOf === shift.shift_id ? undefined : shift.shift_id) }}>{rosterOf === shift.shift_id ? 'Hide the roster' : 'Roster'}</button>}
                </div>
                {rosterOf === shift.shift_id && <ShiftRoster shiftId={shift.shift_id} onChange={refresh} />}
              </li>
            ))}</ul>
          </article>
        ))}</div>
      </Card>
      {may('save-event') && <NewEvent onSaved={refresh} />}
      {may('list-forms') && <PublicFormsPanel may={may} />}
      {may('send-shift-reminders') && (
        <Card title="Reminders">
          <p class="muted">Each confirmed person gets one reminder e-mail before their shift; the check runs every few minutes. Send the ones due now:</p>
          <button type="button" disabled={reminders.busy} onClick={() => { void reminders.run() }}>Send due reminders</button>
          <ErrorLine error={reminders.error} />
          {reminders.data !== undefined && (
            <ul data-testid="reminders">
              {reminders.data.sent.length === 0 && <li class="muted">Nothing due within {reminders.data.reminder_hours} hours.</li>}
              {reminders.data.sent.map(run => <li key={run.shift_id}>{run.title}: {run.error ?? `${run.sent} sent of ${run.person_ids.length}`}</li>)}
            </ul>
          )}
        </Card>
      )}
    </>
  )
}
