// The people page: people found by a search, tag or saved list (list-people), a person's detail with
// their household and history (person-detail), saving people and lists, likely duplicates merged, and a
// CSV import with its mapping preview and dry run (import-csv); exports download the same people as CSV.
// Contact fields and the household come only to the roles that may see them; the search box is
// labelled by the fields the role's search looks in.
import { useEffect, useState } from 'preact/hooks'
import { useCall, type AuthInfo, Card, ErrorLine, Field, formValue, words } from '../../ui/src/module-kit.js'

interface Person { person_id: string, name: string, city: string, tags: string[], roles: string[], email?: string, phone?: string, address?: string, postcode?: string, consent?: { email: boolean, sms: boolean, do_not_contact: boolean }, merged_from: string[] }
interface HistoryEntry { audit_id: string, at: string, by: string, function: string, change: string }
interface SavedList { list_id: string, name: string, count: number }
interface Report { dry_run: boolean, rows: number, created: number, updated: number, duplicates_in_file: number, failed: number, columns: string[], mapping: Record<string, string | null>, errors: Array<{ row: number, message: string }> }

const KINDS = ['people', 'volunteers', 'donations'] as const
const SEARCH_WORDS: Readonly<Record<string, string>> = { name: 'name', email: 'e-mail', phone: 'phone' }

/** The search box's label: the fields the role's search looks in, as list-people says ("Name, e-mail or phone"; readonly "Name"). */
function searchLabel (fields: readonly string[] | undefined): string {
  if (fields === undefined || fields.length === 0) return 'Search'
  const named = fields.map(field => SEARCH_WORDS[field] ?? field)
  const text = named.length === 1 ? named[0] : `${named.slice(0, -1).join(', ')} or ${named[named.length - 1]}`
  return text.charAt(0).toUpperCase() + text.slice(1)
}

export function PeoplePage ({ auth }: { auth: AuthInfo }) {
  const may = (name: string): boolean => auth.functions.includes(name)
  const list = useCall<{ total: number, people: Person[], search_in: string[] }>('list-people')
  const lists = useCall<{ lists: SavedList[] }>('list-lists')
  const detail = useCall<{ person: Person, household?: Person[], history: HistoryEntry[] }>('person-detail')
  const save = useCall<Person>('save-person')
  const saveList = useCall<SavedList>('save-list')
  const duplicates = useCall<{ groups: Person[][] }>('find-duplicates')
  const merge = useCall<Person>('merge-people')
  const importer = useCall<Report>('import-csv')
  const [query, setQuery] = useState<{ list_id?: string, filter: { search?: string, tags?: string[] } }>({ filter: {} })
  const [file, setFile] = useState<{ kind: string, csv: string } | undefined>()
  const refresh = async (next = query): Promise<void> => { setQuery(next); await list.run({ ...next, limit: 200 }) }
  useEffect(() => { void refresh(); void lists.run() }, [])
  const exportUrl = `/export/people${query.list_id === undefined ? '' : `?list_id=${encodeURIComponent(query.list_id)}`}`
  return (
    <>
      <h1>People</h1>
      <Card title="Find people">
        <form class="grid" onSubmit={e => {
          e.preventDefault()
          const form = e.currentTarget
          const tags = words(formValue(form, 'tags'))
          const search = formValue(form, 'search')
          const listId = formValue(form, 'list_id')
          // Fields left out rather than undefined: the CBOR body has no undefined.
          const filter = { ...(search !== '' && { search }), ...(tags.length > 0 && { tags }) }
          void refresh(listId === '' ? { filter } : { list_id: listId, filter })
        }}>
          <Field label={searchLabel(list.data?.search_in)}><input name="search" type="search" /></Field>
          <Field label="Tags (all of them)"><input name="tags" placeholder="housing, canvasser" /></Field>
          <Field label="Saved list">
            <select name="list_id"><option value="">Everyone</option>{lists.data?.lists.map(l => <option key={l.list_id} value={l.list_id}>{l.name} ({l.count})</option>)}</select>
          </Field>
          <button type="submit" disabled={list.busy}>Find</button>
        </form>
        <ErrorLine error={list.error ?? detail.error} />
        <p class="muted" data-testid="people-total">{list.data === undefined ? '' : `${list.data.total} people`} · <a href={exportUrl} download>Export CSV</a></p>
        <div class="scroll">
          <table data-testid="people">
            <thead><tr><th>Name</th><th>City</th><th>Tags</th><th>Roles</th></tr></thead>
            <tbody>{list.data?.people.map(p => (
              <tr key={p.person_id}>
                <td><button type="button" class="link" onClick={() => { void detail.run({ person_id: p.person_id }) }}>{p.name}</button>{p.email !== undefined && p.email !== '' && <><br /><span class="muted">{p.email}</span></>}</td>
                <td>{p.city}</td><td>{p.tags.join(', ')}</td><td>{p.roles.join(', ')}</td>
              </tr>
            ))}</tbody>
          </table>
        </div>
        {may('save-list') && (
          <form class="row" onSubmit={e => {
            e.preventDefault()
            const form = e.currentTarget
            void saveList.run({ name: formValue(form, 'name'), filter: query.filter }).then(async saved => { if (saved !== undefined) { form.reset(); await lists.run() } })
          }}>
            <input name="name" aria-label="List name" placeholder="Save this search as a list" required />
            <button type="submit" disabled={saveList.busy}>Save list</button>
          </form>
        )}
        <ErrorLine error={saveList.error} />
      </Card>
      {detail.data !== undefined && (
        <Card title={detail.data.person.name}>
          <dl class="facts" data-testid="person-detail">
            <dt>City</dt><dd>{detail.data.person.city || '—'}</dd>
            <dt>Tags</dt><dd>{detail.data.person.tags.join(', ') || '—'}</dd>
            <dt>Roles</dt><dd>{detail.data.person.roles.join(', ') || '—'}</dd>
            {detail.data.person.email !== undefined && <><dt>E-mail</dt><dd>{detail.data.person.email || '—'}</dd></>}
            {detail.data.person.phone !== undefined && <><dt>Phone</dt><dd>{detail.data.person.phone || '—'}</dd></>}
            {detail.data.person.address !== undefined && <><dt>Address</dt><dd>{[detail.data.person.address, detail.data.person.postcode].filter(Boolean).join(', ') || '—'}</dd></>}
            {detail.data.person.consent !== undefined && <><dt>Consent</dt><dd>{detail.data.person.consent.do_not_contact ? 'do not contact' : [detail.data.person.consent.email && 'e-mail', detail.data.person.consent.sms && 'SMS'].filter(Boolean).join(', ') || 'none'}</dd></>}
            {detail.data.household !== undefined && <><dt>Household</dt><dd>{detail.data.household.map(p => p.name).join(', ') || '—'}</dd></>}
          </dl>
          {detail.data.history.length > 0 && (
            <div class="scroll">
              <table data-testid="person-history">
                <thead><tr><th>When</th><th>Who</th><th>What</th></tr></thead>
                <tbody>{detail.data.history.map(h => <tr key={h.audit_id}><td>{new Date(h.at).toLocaleString()}</td><td>{h.by}</td><td>{h.function} ({h.change})</td></tr>)}</tbody>
              </table>
            </div>
          )}
        </Card>
      )}
      {may('save-person') && (
        <Card title="Add a person">
          <form class="grid" onSubmit={e => {
            e.preventDefault()
            const form = e.currentTarget
            const check = (name: string): boolean => (form.elements.namedItem(name) as HTMLInputElement).checked
            void save.run({ name: formValue(form, 'name'), email: formValue(form, 'email'), phone: formValue(form, 'phone'), address: formValue(form, 'address'), city: formValue(form, 'city'), postcode: formValue(form, 'postcode'), tags: words(formValue(form, 'tags')), consent: { email: check('consent_email'), sms: check('consent_sms') } })
              .then(async saved => { if (saved !== undefined) { form.reset(); await refresh() } })
          }}>
            <Field label="Name"><input name="name" required /></Field>
            <Field label="E-mail"><input name="email" type="email" /></Field>
            <Field label="Phone"><input name="phone" type="tel" /></Field>
            <Field label="Address"><input name="address" /></Field>
            <Field label="City"><input name="city" /></Field>
            <Field label="Postcode"><input name="postcode" /></Field>
            <Field label="Tags"><input name="tags" /></Field>
            <label class="check"><input type="checkbox" name="consent_email" /> E-mail consent</label>
            <label class="check"><input type="checkbox" name="consent_sms" /> SMS consent</label>
            <button type="submit" disabled={save.busy}>Add</button>
          </form>
          <ErrorLine error={save.error} />
        </Card>
      )}
      {may('find-duplicates') && (
        <Card title="Likely duplicates">
          <button type="button" onClick={() => { void duplicates.run() }} disabled={duplicates.busy}>Find duplicates</button>
          <ErrorLine error={duplicates.error ?? merge.error} />
          {duplicates.data?.groups.length === 0 && <p class="muted">No likely duplicates.</p>}
          <ul data-testid="duplicates">{duplicates.data?.groups.map(group => (
            <li key={group[0].person_id}>
              {group.map(p => `${p.name} (${p.email ?? p.city})`).join(' · ')}{' '}
              <button type="button" onClick={() => { void merge.run({ keep_id: group[0].person_id, merge_ids: group.slice(1).map(p => p.person_id) }).then(async () => { await duplicates.run(); await refresh() }) }}>Merge into the first</button>
            </li>
          ))}</ul>
        </Card>
      )}
      {may('import-csv') && (
        <Card title="Import a CSV file">
          <form class="grid" onSubmit={e => {
            e.preventDefault()
            if (file !== undefined) void importer.run({ ...file, mapping: importer.data?.mapping, dry_run: true })
          }}>
            <Field label="What the file holds">
              <select name="kind" onChange={e => {
                if (file === undefined) return
                // Another kind: a fresh dry run, its mapping suggested again from the header.
                const next = { ...file, kind: e.currentTarget.value }
                setFile(next)
                void importer.run({ ...next, dry_run: true })
              }}>{KINDS.map(k => <option key={k} value={k}>{k}</option>)}</select>
            </Field>
            <Field label="File"><input name="file" type="file" accept=".csv,text/csv" onChange={e => {
              const input = e.currentTarget
              const kind = formValue(input.form as HTMLFormElement, 'kind')
              void input.files?.[0]?.text().then(csv => { setFile({ kind, csv }); void importer.run({ kind, csv, dry_run: true }) })
            }} /></Field>
          </form>
          <ErrorLine error={importer.error} />
          {importer.data !== undefined && (
            <div data-testid="import-report">
              <p><strong>{importer.data.dry_run ? 'Dry run: nothing written yet.' : 'Imported.'}</strong> {importer.data.rows} rows: {importer.data.created} new, {importer.data.updated} matched to people known, {importer.data.duplicates_in_file} repeated in the file, {importer.data.failed} with problems.</p>
              <div class="scroll">
                <table data-testid="import-mapping">
                  <thead><tr><th>Column</th><th>Goes to</th></tr></thead>
                  <tbody>{importer.data.columns.map(column => <tr key={column}><td>{column}</td><td>{importer.data?.mapping[column] ?? 'left out'}</td></tr>)}</tbody>
                </table>
              </div>
              {importer.data.errors.length > 0 && <ul class="problems">{importer.data.errors.map(p => <li key={p.row}>Row {p.row}: {p.message}</li>)}</ul>}
              {importer.data.dry_run && file !== undefined && (
                <button type="button" disabled={importer.busy} onClick={() => { void importer.run({ ...file, mapping: importer.data?.mapping, dry_run: false }).then(async () => { await refresh() }) }}>Import {importer.data.rows - importer.data.failed} rows</button>
              )}
            </div>
          )}
        </Card>
      )}
    </>
  )
}
