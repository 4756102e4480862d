// CSV import of people, volunteers and donations: the file's columns are mapped to fields (a mapping
// is suggested from the header), each row is checked and its problems reported by row number, and
// rows are matched to people already known by e-mail address, then phone number, so an import
// updates them rather than making duplicates. A dry run reports all of it and writes nothing; a real
// run writes every good row of people and volunteers in one transaction, and each donation in its
// donor's (the contribution limits are checked there, as for record-donation).
import { randomUUID } from 'node:crypto'
import { parse } from 'csv-parse/sync'
import { BadRequest, messageOf } from '../../../../kernel/index.js'
import { Type } from '../../../../kernel/schema.js'
import { moduleFunction, type ModuleFunction, type CampaignStore } from '../../module-kit.js'
import { receivedOn, type Fundraising, type NewDonation } from '../fundraising/index.js'
import type { Volunteer } from '../volunteers/index.js'
import { normalEmail, normalPhone, peopleTables, type PeopleDirectory, type Person, type PersonFields } from './directory.js'

export const IMPORT_KINDS = ['people', 'volunteers', 'donations'] as const
export type ImportKind = typeof IMPORT_KINDS[number]

/** The fields each kind takes, with the header spellings that suggest them (compared without case, spaces or punctuation). */
const FIELDS: Record<ImportKind, Record<string, readonly string[]>> = {
  people: {
    name: ['name', 'fullname'],
    first_name: ['firstname', 'first', 'givenname', 'forename'],
    last_name: ['lastname', 'last', 'surname', 'familyname'],
    email: ['email', 'emailaddress', 'mail'],
    phone: ['phone', 'phonenumber', 'mobile', 'cell', 'mobilephone', 'tel', 'telephone'],
    address: ['address', 'streetaddress', 'street', 'address1'],
    city: ['city', 'town'],
    postcode: ['postcode', 'zip', 'zipcode', 'postalcode'],
    tags: ['tags', 'tag', 'labels'],
    issues: ['issues', 'issue', 'interests'],
    consent_email: ['consentemail', 'emailconsent', 'emailoptin', 'subscribed'],
    consent_sms: ['consentsms', 'smsconsent', 'smsoptin', 'textoptin'],
    do_not_contact: ['donotcontact', 'dnc']
  },
  volunteers: {
    name: ['name', 'fullname'],
    email: ['email', 'emailaddress'],
    phone: ['phone', 'mobile', 'phonenumber'],
    skills: ['skills', 'skill'],
    availability: ['availability', 'slots'],
    lat: ['lat', 'latitude'],
    lon: ['lon', 'lng', 'longitude']
  },
  donations: {
    donor_name: ['donorname', 'name', 'fullname'],
    donor_email: ['donoremail', 'email', 'emailaddress'],
    amount: ['amount', 'amountusd', 'dollars'],
    amount_cents: ['amountcents', 'cents'],
    received_on: ['receivedon', 'date', 'received', 'donationdate'],
    election: ['election', 'designation'],
    donor_address: ['donoraddress', 'address'],
    donor_occupation: ['donoroccupation', 'occupation'],
    donor_employer: ['donoremployer', 'employer']
  }
}
/** People's columns may also go to a custom field: `custom:<name>`. */
const CUSTOM = /^custom:([a-z][a-z0-9_]{0,31})$/
/** Row problems listed in full; beyond, only counted. */
const MAX_ERRORS = 200
const PREVIEW_ROWS = 5

const squash = (text: string): string => text.toLowerCase().replace(/[^a-z0-9]/g, '')
const slug = (text: string): string => text.toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_+|_+$/g, '').replace(/^(\d)/, 'f$1').slice(0, 32)

/** The field each column goes to (null: left out), from the header. */
export function suggestMapping (kind: ImportKind, columns: readonly string[]): Record<string, string | null> {
  const taken = new Set<string>()
  return Object.fromEntries(columns.map(column => {
    const field = Object.entries(FIELDS[kind]).find(([name, spellings]) => !taken.has(name) && spellings.includes(squash(column)))?.[0]
    if (field !== undefined) { taken.add(field); return [column, field] }
    if (kind === 'people' && CUSTOM.test(column)) return [column, column]
    return [column, kind === 'people' && slug(column) !== '' ? `custom:${slug(column)}` : null]
  }))
}

function checkMapping (kind: ImportKind, columns: readonly string[], mapping: Record<string, string | null>): void {
  const seen = new Set<string>()
  for (const [column, field] of Object.entries(mapping)) {
    if (!columns.includes(column)) throw new BadRequest(`invalid arguments: /mapping: the file has no column "${column}"`)
    if (field === null) continue
    if (!Object.hasOwn(FIELDS[kind], field) && !(kind === 'people' && CUSTOM.test(field))) throw new BadRequest(`invalid arguments: /mapping/${column}: ${kind} have no field "${field}"`)
    if (seen.has(field)) throw new BadRequest(`invalid arguments: /mapping: two columns go to ${field}`)
    seen.add(field)
  }
}

/** A row's cells by field, through the mapping. */
type Mapped = Record<string, string>

const YES = new Set(['1', 'y', 'yes', 'true', 't', 'x', 'on'])
const NO = new Set(['', '0', 'n', 'no', 'false', 'f', 'off'])
function flag (field: string, value: string): boolean {
  const word = value.trim().toLowerCase()
  if (YES.has(word)) return true
  if (NO.has(word)) return false
  throw new Error(`${field} must be yes or no, got ${JSON.stringify(value)}`)
}
const words = (value: string | undefined): string[] | undefined => value === undefined ? undefined : value.split(/[;,|]/).map(w => w.trim()).filter(w => w !== '')
const EMAIL = /^[^@\s]+@[^@\s]+$/

/** A people row as the fields of a save; throws the row's first problem. */
function personRow (row: Mapped): PersonFields {
  const name = (row.name ?? [row.first_name, row.last_name].filter(part => part !== undefined && part.trim() !== '').join(' ')).trim()
  if (name === '') throw new Error('no name')
  const email = row.email?.trim()
  if (email !== undefined && email !== '' && !EMAIL.test(email)) throw new Error(`email ${JSON.stringify(email)} is not an e-mail address`)
  const consent: PersonFields['consent'] = {}
  if (row.consent_email !== undefined) consent.email = flag('consent_email', row.consent_email)
  if (row.consent_sms !== undefined) consent.sms = flag('consent_sms', row.consent_sms)
  if (row.do_not_contact !== undefined) consent.do_not_contact = flag('do_not_contact', row.do_not_contact)
  const custom = Object.fromEntries(Object.entries(row).flatMap(([field, value]) => {
    const match = CUSTOM.exec(field)
    return match === null || value.trim() === '' ? [] : [[match[1], value.trim().slice(0, 500)]]
  }))
  const fields: PersonFields = { name: name.slice(0, 200), consent }
  if (email !== undefined && email !== '') fields.email = email
  if (row.phone !== undefined && row.phone.trim() !== '') fields.phone = normalPhone(row.phone)
  for (const field of ['address', 'city', 'postcode'] as const) if (row[field] !== undefined && row[field].trim() !== '') fields[field] = row[field].trim()
  if (row.tags !== undefined) fields.tags = words(row.tags)
  if (row.issues !== undefined) fields.issues = words(row.issues)
  if (Object.keys(custom).length > 0) fields.custom = custom
  return fields
}

/** The person a row's fields are merged into: found by e-mail, else phone; an error when those two are different people. */
async function matchOf (people: PeopleDirectory, tables: ReturnType<typeof peopleTables>, fields: PersonFields): Promise<Person | undefined> {
  const byEmail = fields.email === undefined ? undefined : await people.byEmail(fields.email, tables)
  const byPhone = fields.phone === undefined ? undefined : await people.byPhone(fields.phone, tables)
  if (byEmail !== undefined && byPhone !== undefined && byEmail.person_id !== byPhone.person_id) {
    throw new Error(`its e-mail is ${byEmail.name}'s (person_id ${byEmail.person_id}) and its phone ${byPhone.name}'s (person_id ${byPhone.person_id}): merge them first`)
  }
  return byEmail ?? byPhone
}

/** A row's fields over the person it matches: the file's non-empty cells win, tags and issues are added, custom fields joined. */
function over (person: Person, fields: PersonFields): PersonFields {
  return {
    ...fields,
    person_id: person.person_id,
    tags: [...person.tags, ...fields.tags ?? []],
    issues: [...person.issues, ...fields.issues ?? []],
    custom: { ...person.custom, ...fields.custom }
  }
}

const SLOT = /^(mon|tue|wed|thu|fri|sat|sun)-(am|pm|eve)$/
function volunteerRow (row: Mapped): Omit<Volunteer, 'volunteer_id' | 'updated_at'> {
  const name = row.name?.trim() ?? ''
  if (name === '') throw new Error('no name')
  const email = row.email?.trim() ?? ''
  if (!EMAIL.test(email)) throw new Error(email === '' ? 'no email' : `email ${JSON.stringify(email)} is not an e-mail address`)
  const availability = (words(row.availability) ?? []).map(s => s.toLowerCase())
  const wrong = availability.find(slot => !SLOT.test(slot))
  if (wrong !== undefined) throw new Error(`availability ${JSON.stringify(wrong)} is not a slot such as sat-am`)
  const lat = Number(row.lat)
  const lon = Number(row.lon)
  if (row.lat === undefined || row.lat.trim() === '' || !Number.isFinite(lat) || Math.abs(lat) > 90) throw new Error(`lat must be a latitude, got ${JSON.stringify(row.lat ?? '')}`)
  if (row.lon === undefined || row.lon.trim() === '' || !Number.isFinite(lon) || Math.abs(lon) > 180) throw new Error(`lon must be a longitude, got ${JSON.stringify(row.lon ?? '')}`)
  return { name: name.slice(0, 200), email, skills: (words(row.skills) ?? []).map(s => s.slice(0, 64)), availability, location: { lat, lon } }
}

interface DonationRow { donor_name: string, donor_email: string, amount_cents: number, received_on: string, election: 'primary' | 'general' | null, donor_address?: string, donor_occupation?: string, donor_employer?: string }
function donationRow (row: Mapped): DonationRow {
  const name = row.donor_name?.trim() ?? ''
  if (name === '') throw new Error('no donor_name')
  const email = row.donor_email?.trim() ?? ''
  if (!EMAIL.test(email)) throw new Error(email === '' ? 'no donor_email' : `donor_email ${JSON.stringify(email)} is not an e-mail address`)
  const cents = row.amount_cents !== undefined ? Number(row.amount_cents) : Math.round(Number((row.amount ?? '').replace(/[$,\s]/g, '')) * 100)
  if (!Number.isInteger(cents) || cents < 1) throw new Error(`the amount must be a positive sum, got ${JSON.stringify(row.amount_cents ?? row.amount ?? '')}`)
  const day = row.received_on?.trim() ?? ''
  const election = (row.election ?? '').trim().toLowerCase()
  if (election !== '' && election !== 'primary' && election !== 'general') throw new Error(`election must be primary or general, got ${JSON.stringify(row.election)}`)
  const donation: DonationRow = { donor_name: name, donor_email: email, amount_cents: cents, received_on: day === '' ? new Date().toISOString().slice(0, 10) : receivedOn('received_on', day), election: election === '' ? null : election }
  for (const field of ['donor_address', 'donor_occupation', 'donor_employer'] as const) if (row[field] !== undefined && row[field].trim() !== '') donation[field] = row[field].trim()
  return donation
}

export interface RowProblem { row: number, message: string }
export interface ImportReport {
  kind: ImportKind
  dry_run: boolean
  columns: string[]
  mapping: Record<string, string | null>
  rows: number
  created: number
  updated: number
  /** Rows matching an earlier row of the same file (merged into the person it made or matched). */
  duplicates_in_file: number
  failed: number
  errors: RowProblem[]
  preview: Array<Record<string, unknown>>
}

/** A cell as it was before an export defused it (a leading apostrophe before what a spreadsheet reads as a formula). */
const unguarded = (cell: string): string => cell.replace(/^'(?=[=+\-@\t\r])/, '')

/** The file's header and rows; 400 for a file that is not CSV. */
function readCsv (csv: string): { columns: string[], rows: string[][] } {
  let records: string[][]
  try {
    records = parse(csv, { bom: true, skip_empty_lines: true, relax_column_count: true, trim: true }) as string[][]
  } catch (err) {
    throw new BadRequest(`invalid arguments: /csv: ${messageOf(err)}`)
  }
  if (records.length === 0) throw new BadRequest('invalid arguments: /csv: the file is empty')
  const [header, ...rows] = records
  const columns = header.map((column, i) => column === '' ? `column ${i + 1}` : column)
  if (new Set(columns).size !== columns.length) throw new BadRequest('invalid arguments: /csv: two columns have the same name')
  return { columns, rows }
}

const Args = Type.Object({
  kind: Type.Union(IMPORT_KINDS.map(k => Type.Literal(k))),
  csv: Type.String({ minLength: 1, description: 'the file, with a header row' }),
  mapping: Type.Optional(Type.Record(Type.String({ maxLength: 200 }), Type.Union([Type.String({ maxLength: 64 }), Type.Null()]), { description: 'column → field (null leaves a column out); suggested from the header when absent' })),
  dry_run: Type.Boolean({ default: true, description: 'check and report without writing (the default)' })
}, { additionalProperties: false })

export interface ImportSources { people: PeopleDirectory, store: CampaignStore, fundraising: Fundraising }

export function csvImportFunctions ({ people, store, fundraising }: ImportSources): ModuleFunction[] {
  return [moduleFunction({
    name: 'import-csv',
    args: Args,
    maxRequestBytes: 32 * 1024 * 1024,
    handler: async ({ kind, csv, mapping: given, dry_run: dryRun }, { session }): Promise<ImportReport> => {
      const by = session?.email ?? ''
      const { columns, rows } = readCsv(csv)
      const mapping = given ?? suggestMapping(kind, columns)
      checkMapping(kind, columns, mapping)
      const mapped = rows.map(cells => Object.fromEntries(columns.flatMap((column, i) => {
        const field = mapping[column]
        return field === null || field === undefined ? [] : [[field, unguarded(cells[i] ?? '')]]
      })) as Mapped)
      const report: ImportReport = { kind, dry_run: dryRun, columns, mapping, rows: rows.length, created: 0, updated: 0, duplicates_in_file: 0, failed: 0, errors: [], preview: [] }
      const fail = (index: number, err: unknown): void => {
        report.failed++
        if (report.errors.length < MAX_ERRORS) report.errors.push({ row: index + 2, message: messageOf(err).replace(/^invalid arguments: \/\w+: /, '') })
      }
      if (kind === 'people') await importPeople(people, store, mapped, dryRun, by, report, fail)
      else if (kind === 'volunteers') await importVolunteers(people, store, mapped, dryRun, by, report, fail)
      else await importDonations(people, fundraising, mapped, dryRun, by, report, fail)
      return report
    }
  })]
}

type Fail = (index: number, err: unknown) => void

/** People rows in one transaction (a dry run's is thrown away): each matched by e-mail or phone, or created. */
async function importPeople (people: PeopleDirectory, store: CampaignStore, rows: Mapped[], dryRun: boolean, by: string, report: ImportReport, fail: Fail): Promise<void> {
  const touched = new Set<string>()
  const run = async (): Promise<void> => {
    await store.transaction(people.subject, async tx => {
      const tables = peopleTables(tx)
      const now = new Date().toISOString()
      for (const [index, row] of rows.entries()) {
        try {
          const fields = personRow(row)
          const match = await matchOf(people, tables, fields)
          const saved = await people.saveIn(tables, match === undefined ? fields : over(match, fields), by, now)
          if (match === undefined) report.created++
          else if (touched.has(match.person_id)) report.duplicates_in_file++
          else report.updated++
          touched.add(saved.person_id)
          if (report.preview.length < PREVIEW_ROWS) report.preview.push({ row: index + 2, action: match === undefined ? 'create' : 'update', ...saved })
        } catch (err) {
          fail(index, err)
        }
      }
      if (dryRun) throw DRY_RUN
    })
  }
  try {
    await run()
  } catch (err) {
    if (err !== DRY_RUN) throw err
  }
}

/** Thrown to leave a dry run's transaction without writing. */
const DRY_RUN = new Error('dry run')

/** Volunteer rows in one transaction with their people: matched to the roster by e-mail; each volunteer is a person with the volunteer role. */
async function importVolunteers (people: PeopleDirectory, store: CampaignStore, rows: Mapped[], dryRun: boolean, by: string, report: ImportReport, fail: Fail): Promise<void> {
  try {
    await store.transaction(['volunteers', people.subject], async tx => {
      const roster = tx.table<Volunteer>('volunteers')
      const byEmail = new Map((await roster.list()).map(({ value }) => [normalEmail(value.email), value]))
      const touched = new Set<string>()
      const now = new Date().toISOString()
      for (const [index, row] of rows.entries()) {
        try {
          const fields = volunteerRow(row)
          const known = byEmail.get(normalEmail(fields.email))
          const volunteer: Volunteer = { ...fields, volunteer_id: known?.volunteer_id ?? randomUUID(), updated_at: now }
          if (known === undefined) report.created++
          else if (touched.has(volunteer.volunteer_id)) report.duplicates_in_file++
          else report.updated++
          touched.add(volunteer.volunteer_id)
          byEmail.set(normalEmail(fields.email), volunteer)
          await roster.put(volunteer.volunteer_id, volunteer)
          await people.ensureIn(tx, volunteer, 'volunteer', by)
          if (report.preview.length < PREVIEW_ROWS) report.preview.push({ row: index + 2, action: known === undefined ? 'create' : 'update', ...volunteer })
        } catch (err) {
          fail(index, err)
        }
      }
      if (dryRun) throw DRY_RUN
    })
  } catch (err) {
    if (err !== DRY_RUN) throw err
  }
}

/**
 * Donation rows, each recorded in its donor's transaction with the donor's person, the limit and the
 * itemisation threshold checked as record-donation checks them; a dry run checks each row the same
 * way, counting the file's good rows before it as recorded.
 */
async function importDonations (people: PeopleDirectory, fundraising: Fundraising, rows: Mapped[], dryRun: boolean, by: string, report: ImportReport, fail: Fail): Promise<void> {
  const accepted: NewDonation[] = []
  for (const [index, row] of rows.entries()) {
    try {
      const donation = donationRow(row)
      const outcome = dryRun
        ? await fundraising.check(donation, accepted)
        : await fundraising.record(donation, by, people.withRole({ name: donation.donor_name, email: donation.donor_email }, 'donor', by))
      accepted.push(donation)
      if (report.preview.length < PREVIEW_ROWS) report.preview.push({ row: index + 2, action: 'create', ...outcome })
      report.created++
    } catch (err) {
      fail(index, err)
    }
  }
}
