// The volunteers page: the roster (list-volunteers, volunteer-detail), matching for an assignment
// (match-volunteer) with the score's parts, and adding a volunteer (save-volunteer) for roles that may.
// E-mail, location and distance come only to the roles that may see them.
import { useEffect } from 'preact/hooks'
import { useCall, type AuthInfo, Card, ErrorLine, Field, formValue, words } from '../../ui/src/module-kit.js'

interface Volunteer { volunteer_id: string, name: string, skills: string[], availability: string[], email?: string, location?: { lat: number, lon: number }, updated_at: string }
interface Match { volunteer_id: string, name: string, score: number, skills: number, availability: number, distance_km?: number }

const place = (form: HTMLFormElement): { lat: number, lon: number } => ({ lat: Number(formValue(form, 'lat')), lon: Number(formValue(form, 'lon')) })

export function VolunteersPage ({ auth }: { auth: AuthInfo }) {
  const list = useCall<{ volunteers: Volunteer[] }>('list-volunteers')
  const detail = useCall<Volunteer>('volunteer-detail')
  const match = useCall<{ matches: Match[] }>('match-volunteer')
  const save = useCall<Volunteer>('save-volunteer')
  useEffect(() => { void list.run() }, [])
  return (
    <>
      <h1>Volunteers</h1>
      <Card title="Roster">
        <ErrorLine error={list.error ?? detail.error} />
        <table data-testid="volunteers">
          <thead><tr><th>Name</th><th>Skills</th><th>Availability</th></tr></thead>
          <tbody>{list.data?.volunteers.map(v => (
            <tr key={v.volunteer_id}>
              <td><button type="button" class="link" onClick={() => { void detail.run({ volunteer_id: v.volunteer_id }) }}>{v.name}</button>{v.email !== undefined && <><br /><span class="muted">{v.email}</span></>}</td>
              <td>{v.skills.join(', ')}</td><td>{v.availability.join(', ')}</td>
            </tr>
          ))}</tbody>
        </table>
        {detail.data !== undefined && (
          <dl class="facts" data-testid="volunteer-detail">
            <dt>Name</dt><dd>{detail.data.name}</dd>
            <dt>Skills</dt><dd>{detail.data.skills.join(', ') || '—'}</dd>
            <dt>Availability</dt><dd>{detail.data.availability.join(', ') || '—'}</dd>
            {detail.data.email !== undefined && <><dt>E-mail</dt><dd>{detail.data.email}</dd></>}
            {detail.data.location !== undefined && <><dt>Location</dt><dd>{detail.data.location.lat}, {detail.data.location.lon}</dd></>}
          </dl>
        )}
      </Card>
      <Card title="Match an assignment">
        <form class="grid" onSubmit={e => {
          e.preventDefault()
          const form = e.currentTarget
          void match.run({ skills: words(formValue(form, 'skills')), slots: words(formValue(form, 'slots')), location: place(form), max_km: Number(formValue(form, 'max_km')) })
        }}>
          <Field label="Skills (comma-separated)"><input name="skills" placeholder="canvassing, phone" /></Field>
          <Field label="Slots (e.g. sat-am)"><input name="slots" placeholder="sat-am, sun-pm" /></Field>
          <Field label="Latitude"><input name="lat" type="number" step="any" required value="52.52" /></Field>
          <Field label="Longitude"><input name="lon" type="number" step="any" required value="13.40" /></Field>
          <Field label="Within km"><input name="max_km" type="number" min="1" required value="25" /></Field>
          <button type="submit" disabled={match.busy}>Find volunteers</button>
        </form>
        <ErrorLine error={match.error} />
        <table data-testid="matches">
          <thead><tr><th>Name</th><th>Score</th><th>Skills</th><th>Availability</th><th>Distance</th></tr></thead>
          <tbody>{match.data?.matches.map(m => <tr key={m.volunteer_id}><td>{m.name}</td><td><strong>{m.score}</strong></td><td>{m.skills}</td><td>{m.availability}</td><td>{m.distance_km !== undefined ? `${m.distance_km} km` : '—'}</td></tr>)}</tbody>
        </table>
      </Card>
      {auth.functions.includes('save-volunteer') && (
        <Card title="Add a volunteer">
          <form class="grid" onSubmit={e => {
            e.preventDefault()
            const form = e.currentTarget
            void save.run({ name: formValue(form, 'name'), email: formValue(form, 'email'), skills: words(formValue(form, 'skills')), availability: words(formValue(form, 'slots')), location: place(form) })
              .then(async saved => { if (saved !== undefined) { form.reset(); await list.run() } })
          }}>
            <Field label="Name"><input name="name" required /></Field>
            <Field label="E-mail"><input name="email" type="email" required /></Field>
            <Field label="Skills"><input name="skills" /></Field>
            <Field label="Slots"><input name="slots" /></Field>
            <Field label="Latitude"><input name="lat" type="number" step="any" required /></Field>
            <Field label="Longitude"><input name="lon" type="number" step="any" required /></Field>
            <button type="submit" disabled={save.busy}>Add</button>
          </form>
          <ErrorLine error={save.error} />
        </Card>
      )}
    </>
  )
}
