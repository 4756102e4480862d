// The campaign's people: one record per person with their household, tags, issues, custom fields and
// consent, found by id, e-mail address or phone number. An e-mail address and a phone number belong to
// one person (their indexes are written in the same transaction as the person). Volunteers and donors
// are people with those roles; merged people are kept, pointing at the person they were merged into.
import { createHash, randomUUID } from 'node:crypto'
import { BadRequest, Conflict, NotFound } from '../../../../kernel/index.js'
import { type Alongside, type CampaignStore, type Table, type Transaction, CAMPAIGN_CODES } from '../../module-kit.js'
import { matchesFilter, wholeFilter, type ListFilter, type ScopedFilter } from './filter.js'

export type Channel = 'email' | 'sms'
export type PersonRole = 'volunteer' | 'donor'

export interface Consent { email: boolean, sms: boolean, do_not_contact: boolean }

export interface Person {
  person_id: string
  name: string
  /** Lower-cased; '' when none. */
  email: string
  /** `+` and digits; '' when none. */
  phone: string
  address: string
  city: string
  postcode: string
  /** People at the same address and postcode share one (null without an address). */
  household_id: string | null
  tags: string[]
  /** Issues the person cares about. */
  issues: string[]
  custom: Record<string, string>
  consent: Consent
  roles: PersonRole[]
  /** People merged into this one. */
  merged_from: string[]
  created_at: string
  updated_at: string
  /** The last time the person did something (an RSVP, a gift, a check-in). */
  last_activity_at: string | null
}

/** A person merged into another: kept, so their id still leads somewhere. */
export interface MergedPerson extends Person { merged_into: string }

export interface SavedList {
  list_id: string
  name: string
  filter: ListFilter
  created_by: string
  created_at: string
  updated_at: string
}

/** What a save may set (person_id names the person to update). */
export type PersonFields = Partial<Omit<Person, 'person_id' | 'household_id' | 'roles' | 'merged_from' | 'created_at' | 'updated_at' | 'last_activity_at' | 'consent'>> & { person_id?: string, name: string, consent?: Partial<Consent> }

export const PEOPLE = 'people'
const BY_EMAIL = 'people-by-email'
const BY_PHONE = 'people-by-phone'
const LISTS = 'people-lists'
/** Transactions that change people or their indexes: one at a time, so an address has one holder. */
const PEOPLE_SUBJECT = 'people'
const NO_CONSENT: Consent = { email: false, sms: false, do_not_contact: false }

export const normalEmail = (email: string): string => email.trim().toLowerCase()

/** A phone number as `+` and digits (a leading 00 counts as +); refused when it has fewer than 6 digits. */
export function normalPhone (phone: string): string {
  const trimmed = phone.trim()
  if (trimmed === '') return ''
  const digits = trimmed.replace(/[\s().-]/g, '')
  if (!/^(\+|00)?\d{6,15}$/.test(digits)) throw new BadRequest(`invalid arguments: /phone: ${JSON.stringify(phone)} is not a phone number`)
  return digits.startsWith('+') ? digits : digits.startsWith('00') ? `+${digits.slice(2)}` : `+${digits}`
}

/** The household of an address: the same street address and postcode, spelled with any case or spacing. */
export function householdOf (address: string, postcode: string): string | null {
  const street = address.toLowerCase().replace(/[\s,.]+/g, ' ').trim()
  if (street === '') return null
  return `hh-${createHash('sha256').update(`${street}\0${postcode.trim().toLowerCase().replace(/\s+/g, '')}`).digest('hex').slice(0, 12)}`
}

const unique = (words: readonly string[]): string[] => [...new Set(words.map(w => w.trim()).filter(w => w !== ''))]

interface Tables { people: Table<Person | MergedPerson>, byEmail: Table<string>, byPhone: Table<string> }
const tablesOf = (tx: Transaction): Tables => ({ people: tx.table(PEOPLE), byEmail: tx.table(BY_EMAIL), byPhone: tx.table(BY_PHONE) })
const isMerged = (person: Person | MergedPerson): person is MergedPerson => 'merged_into' in person

export class PeopleDirectory {
  /** The subject a transaction writing people holds. */
  readonly subject = PEOPLE_SUBJECT
  readonly #store: CampaignStore
  readonly #tables: Tables
  readonly #lists: Table<SavedList>

  constructor (store: CampaignStore) {
    this.#store = store
    this.#tables = tablesOf(store)
    this.#lists = store.table<SavedList>(LISTS)
  }

  /** The person, following merges; undefined when there is none. */
  async get (personId: string, tables = this.#tables): Promise<Person | undefined> {
    let person = await tables.people.get(personId)
    for (let hops = 0; person !== undefined && isMerged(person) && hops < 100; hops++) person = await tables.people.get(person.merged_into)
    return person === undefined || isMerged(person) ? undefined : person
  }

  async byEmail (email: string, tables = this.#tables): Promise<Person | undefined> {
    const id = await tables.byEmail.get(normalEmail(email))
    return id === undefined ? undefined : await this.get(id, tables)
  }

  async byPhone (phone: string, tables = this.#tables): Promise<Person | undefined> {
    const id = await tables.byPhone.get(normalPhone(phone))
    return id === undefined ? undefined : await this.get(id, tables)
  }

  /** Every person (merged ones aside), in id order. */
  async all (): Promise<Person[]> {
    return (await this.#tables.people.list()).map(({ value }) => value).filter((p): p is Person => !isMerged(p))
  }

  async count (): Promise<number> {
    return (await this.all()).length
  }

  /** Create a person (no person_id) or update one; an e-mail or phone another person holds is refused with 409 naming them. */
  async save (fields: PersonFields, by: string): Promise<Person> {
    return await this.#store.transaction(PEOPLE_SUBJECT, async tx => await this.saveIn(tablesOf(tx), fields, by))
  }

  /** `save` inside a transaction the caller holds (an import writes many people in one). */
  async saveIn (tables: Tables, fields: PersonFields, _by: string, now = new Date().toISOString()): Promise<Person> {
    const before = fields.person_id === undefined ? undefined : await this.get(fields.person_id, tables)
    if (fields.person_id !== undefined && before === undefined) throw new NotFound(`no person "${fields.person_id}"`)
    const email = fields.email === undefined ? before?.email ?? '' : normalEmail(fields.email)
    const phone = fields.phone === undefined ? before?.phone ?? '' : normalPhone(fields.phone)
    const person: Person = {
      person_id: before?.person_id ?? randomUUID(),
      name: fields.name.trim(),
      email,
      phone,
      address: fields.address ?? before?.address ?? '',
      city: fields.city ?? before?.city ?? '',
      postcode: fields.postcode ?? before?.postcode ?? '',
      household_id: null,
      tags: unique(fields.tags ?? before?.tags ?? []),
      issues: unique(fields.issues ?? before?.issues ?? []),
      custom: fields.custom ?? before?.custom ?? {},
      consent: { ...(before?.consent ?? NO_CONSENT), ...fields.consent },
      roles: before?.roles ?? [],
      merged_from: before?.merged_from ?? [],
      created_at: before?.created_at ?? now,
      updated_at: now,
      last_activity_at: before?.last_activity_at ?? null
    }
    person.household_id = householdOf(person.address, person.postcode)
    await this.#claim(tables, person, before)
    await tables.people.put(person.person_id, person)
    return person
  }

  /** The person with this e-mail address, created when there is none; `role` added. */
  async ensure (fields: { name: string, email: string }, role: PersonRole | undefined, by: string): Promise<Person> {
    return await this.#store.transaction(PEOPLE_SUBJECT, async tx => await this.ensureIn(tx, fields, role, by))
  }

  /** `ensure` inside a transaction that holds PEOPLE_SUBJECT (with the roster entry or donation that gives the role). */
  async ensureIn (tx: Transaction, fields: { name: string, email: string }, role: PersonRole | undefined, by: string): Promise<Person> {
    const tables = tablesOf(tx)
    const found = await this.byEmail(fields.email, tables)
    const person = found ?? await this.saveIn(tables, { name: fields.name, email: fields.email }, by)
    if (role === undefined || person.roles.includes(role)) return person
    const withRole = { ...person, roles: [...person.roles, role].sort(), updated_at: new Date().toISOString() }
    await tables.people.put(person.person_id, withRole)
    return withRole
  }

  /** The person with this e-mail address given `role`, as a write for another module's transaction. */
  withRole (fields: { name: string, email: string }, role: PersonRole, by: string): Alongside {
    return { subject: PEOPLE_SUBJECT, write: async tx => await this.ensureIn(tx, fields, role, by) }
  }

  /** The person with this e-mail address loses `role` (a volunteer taken off the roster), as a write for another module's transaction; nothing when there is none. */
  withoutRole (email: string, role: PersonRole): Alongside {
    return {
      subject: PEOPLE_SUBJECT,
      write: async tx => {
        const tables = tablesOf(tx)
        const person = await this.byEmail(email, tables)
        if (person !== undefined && person.roles.includes(role)) await tables.people.put(person.person_id, { ...person, roles: person.roles.filter(r => r !== role), updated_at: new Date().toISOString() })
      }
    }
  }

  async noteActivity (personId: string, at: string): Promise<void> {
    await this.#store.transaction(PEOPLE_SUBJECT, async tx => {
      const tables = tablesOf(tx)
      const person = await this.get(personId, tables)
      if (person !== undefined && (person.last_activity_at ?? '') < at) await tables.people.put(person.person_id, { ...person, last_activity_at: at })
    })
  }

  /** Consent for the channel withdrawn (an unsubscribe); nothing else changes. */
  async withdrawConsent (personId: string, channel: Channel, _reason: string): Promise<void> {
    await this.#store.transaction(PEOPLE_SUBJECT, async tx => {
      const person = await this.get(personId, tablesOf(tx))
      if (person === undefined) throw new NotFound(`no person "${personId}"`)
      await this.setConsentIn(tx, person, channel, false)
    })
  }

  /** The person holding a phone number, inside a transaction (one holding PEOPLE_SUBJECT sees its own writes). */
  async byPhoneIn (tx: Transaction, phone: string): Promise<Person | undefined> {
    return await this.byPhone(phone, tablesOf(tx))
  }

  /** Consent for the channel given or withdrawn, inside a transaction holding PEOPLE_SUBJECT; nothing else changes. */
  async setConsentIn (tx: Transaction, person: Person, channel: Channel, given: boolean): Promise<void> {
    if (person.consent[channel] !== given) await tablesOf(tx).people.put(person.person_id, { ...person, consent: { ...person.consent, [channel]: given }, updated_at: new Date().toISOString() })
  }

  /** Whether a message on `channel` may go to the person: consent given, not do-not-contact, and an address to send to. */
  mayContact (person: Person, channel: Channel): boolean {
    if (person.consent.do_not_contact || !person.consent[channel]) return false
    return channel === 'email' ? person.email !== '' : person.phone !== ''
  }

  /** Delete a person (their addresses freed); merged records pointing at them stay. */
  async remove (personId: string): Promise<Person> {
    return await this.#store.transaction(PEOPLE_SUBJECT, async tx => {
      const tables = tablesOf(tx)
      const person = await this.get(personId, tables)
      if (person === undefined) throw new NotFound(`no person "${personId}"`)
      if (person.email !== '') await tables.byEmail.remove(person.email)
      if (person.phone !== '') await tables.byPhone.remove(person.phone)
      await tables.people.remove(person.person_id)
      return person
    })
  }

  /**
   * Merge `others` into `keep`: the kept person's fields win, empty ones are filled from the others
   * (oldest first), tags, issues, roles and custom fields are joined; consent is given only where every
   * record that has the address gave it, and do-not-contact from any record holds. The others are kept
   * as merged records pointing at `keep`; their addresses find the person kept.
   */
  async merge (keepId: string, otherIds: readonly string[]): Promise<Person> {
    return await this.#store.transaction(PEOPLE_SUBJECT, async tx => {
      const tables = tablesOf(tx)
      const keep = await this.get(keepId, tables)
      if (keep === undefined) throw new NotFound(`no person "${keepId}"`)
      const others: Person[] = []
      for (const id of unique(otherIds)) {
        const other = await this.get(id, tables)
        if (other === undefined) throw new NotFound(`no person "${id}"`)
        if (other.person_id === keep.person_id) throw new BadRequest(`invalid arguments: /merge_ids: ${id} is the person kept`)
        others.push(other)
      }
      others.sort((a, b) => a.created_at.localeCompare(b.created_at))
      const now = new Date().toISOString()
      const everyone = [keep, ...others]
      const fill = <K extends 'email' | 'phone' | 'address' | 'city' | 'postcode'>(field: K): string => everyone.find(p => p[field] !== '')?.[field] ?? ''
      const merged: Person = {
        ...keep,
        email: fill('email'),
        phone: fill('phone'),
        address: fill('address'),
        city: fill('city'),
        postcode: fill('postcode'),
        tags: unique(everyone.flatMap(p => p.tags)),
        issues: unique(everyone.flatMap(p => p.issues)),
        custom: Object.assign({}, ...[...others].reverse().map(p => p.custom), keep.custom),
        roles: [...new Set(everyone.flatMap(p => p.roles))].sort(),
        consent: {
          email: everyone.filter(p => p.email !== '').every(p => p.consent.email),
          sms: everyone.filter(p => p.phone !== '').every(p => p.consent.sms),
          do_not_contact: everyone.some(p => p.consent.do_not_contact)
        },
        merged_from: unique([...keep.merged_from, ...others.flatMap(p => [p.person_id, ...p.merged_from])]),
        last_activity_at: everyone.map(p => p.last_activity_at).filter((at): at is string => at !== null).sort().at(-1) ?? null,
        updated_at: now
      }
      merged.household_id = householdOf(merged.address, merged.postcode)
      // The others' addresses keep leading to the person kept: an import or save naming one finds them.
      for (const other of others) {
        if (other.email !== '') await tables.byEmail.put(other.email, keep.person_id)
        if (other.phone !== '') await tables.byPhone.put(other.phone, keep.person_id)
        await tables.people.put(other.person_id, { ...other, merged_into: keep.person_id, updated_at: now })
      }
      await this.#claim(tables, merged, keep)
      await tables.people.put(merged.person_id, merged)
      return merged
    })
  }

  /** The people at the person's address (the person among them). */
  async household (person: Person): Promise<Person[]> {
    if (person.household_id === null) return [person]
    return (await this.all()).filter(p => p.household_id === person.household_id)
  }

  // Saved lists: a named filter, evaluated when read (its members are who matches now).

  async saveList (fields: { list_id?: string, name: string, filter: ListFilter }, by: string): Promise<SavedList> {
    const now = new Date().toISOString()
    const before = fields.list_id === undefined ? undefined : await this.#lists.get(fields.list_id)
    if (fields.list_id !== undefined && before === undefined) throw new NotFound(`no list "${fields.list_id}"`)
    const list: SavedList = { list_id: before?.list_id ?? randomUUID(), name: fields.name, filter: fields.filter, created_by: before?.created_by ?? by, created_at: before?.created_at ?? now, updated_at: now }
    await this.#lists.put(list.list_id, list)
    return list
  }

  async lists (): Promise<SavedList[]> {
    return (await this.#lists.list()).map(({ value }) => value).sort((a, b) => a.name.localeCompare(b.name))
  }

  async list (listId: string): Promise<SavedList> {
    const list = await this.#lists.get(listId)
    if (list === undefined) throw new NotFound(`no list "${listId}"`)
    return list
  }

  async removeList (listId: string): Promise<void> {
    await this.list(listId)
    await this.#lists.remove(listId)
  }

  /** The people a saved list's filter matches now on every field, by name. */
  async members (listId: string): Promise<Person[]> {
    return await this.matching(wholeFilter((await this.list(listId)).filter))
  }

  /** The people a filter matches, by name. */
  async matching (filter: ScopedFilter, now = new Date()): Promise<Person[]> {
    return (await this.all()).filter(p => matchesFilter(p, filter, now)).sort((a, b) => a.name.localeCompare(b.name) || a.person_id.localeCompare(b.person_id))
  }

  /** The person's addresses indexed to them; 409 when another person holds one. */
  async #claim (tables: Tables, person: Person, before: Person | undefined): Promise<void> {
    const claims: Array<[Table<string>, string, string, string]> = [
      [tables.byEmail, person.email, before?.email ?? '', 'e-mail'],
      [tables.byPhone, person.phone, before?.phone ?? '', 'phone number']
    ]
    for (const [index, value, old, what] of claims) {
      if (value === old) continue
      if (value !== '') {
        const holderId = await index.get(value)
        const holder = holderId === undefined ? undefined : await this.get(holderId, tables)
        if (holder !== undefined && holder.person_id !== person.person_id) {
          throw new Conflict(`${holder.name} (person_id ${holder.person_id}) has the ${what} ${value} already; save with that person_id to update them, or merge the two`, { code: CAMPAIGN_CODES.DUPLICATE_PERSON })
        }
        await index.put(value, person.person_id)
      }
      if (old !== '') await index.remove(old)
    }
  }
}

/** The tables a transaction sees, for `saveIn`. */
export const peopleTables = tablesOf

declare module '../../module-kit.js' {
  interface ModuleKit {
    /** The campaign's people: contacts, volunteers and donors, with their consent and saved lists. */
    people: PeopleDirectory
  }
}
