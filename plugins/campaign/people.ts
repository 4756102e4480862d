// Who sees what of a person. Each record type that holds people has one view: for every field, the
// roles that see it (admin sees every field); the functions returning such records show them through
// it, and the functions listing or searching them filter, sort and search through it too: a role may
// query only the fields it sees. Attribution fields (`recorded_by`, `created_by`…: the e-mail of the
// user who did something) are one rule for every record, applied to every result: only admin and
// staff see them.
import { Forbidden } from '../../kernel/index.js'
import type { Role } from './roles.js'
import type { Donation, DonorSummary } from './modules/fundraising/fundraising.js'
import type { UserRecord } from './modules/admin/admin.js'
import type { Volunteer } from './modules/volunteers/volunteers.js'
import type { CallRecord } from './modules/call-intelligence/call-intelligence.js'
import type { Person } from './modules/people/directory.js'
import type { Attendance, RosterEntry } from './modules/events/event-book.js'
import type { SendLogRecord } from './modules/sending/messenger.js'
import type { SmsReply } from './modules/sending/sms-replies.js'

/** The roles besides admin that see a field. */
export type Audience = ReadonlyArray<Exclude<Role, 'admin'>>

/** The fields naming the user who did something, wherever they appear in a result. */
export const ATTRIBUTION_FIELDS = ['recorded_by', 'created_by', 'checked_by', 'added_by', 'analyzed_by', 'changed_by'] as const
type AttributionField = typeof ATTRIBUTION_FIELDS[number]
/** A field of a record type that its view names. */
export type ViewField<T> = Exclude<keyof T, AttributionField>
/** The conditions a query (a filter, a sort order, a search) may give, each with the fields of the record it reads. */
export type Conditions<T> = Readonly<Record<string, ReadonlyArray<ViewField<T>>>>
/** Who sees attribution fields besides admin. */
export const ATTRIBUTION_AUDIENCE: Audience = ['staff']

const sees = (role: Role | undefined, audience: Audience): boolean => role === 'admin' || (role !== undefined && (audience as readonly Role[]).includes(role))

/** A record type's view: every field but the attribution ones names its audience. */
export class PeopleView<T extends object> {
  readonly kind: string
  readonly fields: { readonly [K in ViewField<T>]-?: Audience }

  constructor (kind: string, fields: { readonly [K in ViewField<T>]-?: Audience }) {
    this.kind = kind
    this.fields = fields
  }

  /** Whether `role` sees `field`; nobody without a role does. */
  sees (field: ViewField<T>, role: Role | undefined): boolean {
    return sees(role, this.fields[field])
  }

  /** Of `fields`, those `role` sees, in the order given: where a free-text search by `role` looks. */
  visibleOf<F extends ViewField<T>> (fields: readonly F[], role: Role | undefined): F[] {
    return fields.filter(field => this.sees(field, role))
  }

  /** The first condition `query` gives (of `reads`) that reads a field `role` does not see, with that field; undefined when the role sees them all. */
  unseen (role: Role | undefined, query: object, reads: Conditions<T>): [string, ViewField<T>] | undefined {
    for (const [condition, fields] of Object.entries(reads)) {
      if ((query as Record<string, unknown>)[condition] === undefined) continue
      const hidden = fields.find(field => !this.sees(field, role))
      if (hidden !== undefined) return [condition, hidden]
    }
    return undefined
  }

  /**
   * Refuse (403) a query by `role` giving a condition that reads a field the role does not see: a
   * role filters, sorts and searches only on what it sees, so no count, order or match tells it the
   * rest. `use` says what the query is ("filter list-people").
   */
  refuseUnseen (role: Role | undefined, use: string, query: object, reads: Conditions<T>): void {
    const hidden = this.unseen(role, query, reads)
    if (hidden === undefined) return
    const who = role ?? 'a caller without a role'
    throw new Forbidden(`${who} may not ${use} by ${hidden[0]}: it reads the ${this.kind}'s ${String(hidden[1])}, which ${who} does not see`)
  }

  /** The record with only the fields `role` sees (attribution fields pass, for `hideAttribution`). */
  show (record: T, role: Role | undefined): Partial<T> {
    const audiences = this.fields as Record<string, Audience | undefined>
    return Object.fromEntries(Object.entries(record).filter(([field]) => {
      const audience = audiences[field]
      return audience === undefined ? (ATTRIBUTION_FIELDS as readonly string[]).includes(field) : sees(role, audience)
    })) as Partial<T>
  }
}

const EVERYONE: Audience = ['staff', 'volunteer', 'readonly']
const READERS: Audience = ['staff', 'readonly']
const STAFF: Audience = ['staff']
const ADMIN: Audience = []

export const VOLUNTEER_VIEW = new PeopleView<Volunteer>('volunteer', {
  volunteer_id: EVERYONE,
  name: EVERYONE,
  skills: EVERYONE,
  availability: EVERYONE,
  updated_at: EVERYONE,
  email: STAFF,
  location: STAFF
})

export const DONOR_VIEW = new PeopleView<DonorSummary>('donor', {
  donor_id: READERS,
  name: READERS,
  created_at: READERS,
  updated_at: READERS,
  election: READERS,
  election_total_cents: READERS,
  remaining_cents: READERS,
  cycle_total_cents: READERS,
  lifetime_total_cents: READERS,
  donation_count: READERS,
  last_donation_on: READERS,
  missing_itemization: READERS,
  email: STAFF,
  address: STAFF,
  occupation: STAFF,
  employer: STAFF
})

export const DONATION_VIEW = new PeopleView<Donation>('donation', {
  donation_id: READERS,
  donor_id: READERS,
  amount_cents: READERS,
  refunded_cents: READERS,
  received_on: READERS,
  designation: READERS,
  election: READERS,
  recorded_at: READERS,
  history: READERS
})

export const USER_VIEW = new PeopleView<UserRecord>('user', {
  sub: ADMIN,
  email: ADMIN,
  name: ADMIN,
  role: ADMIN,
  last_login_at: ADMIN,
  logins: ADMIN
})

export const CALL_VIEW = new PeopleView<CallRecord>('call', {
  call_id: READERS,
  called_at: READERS,
  caller: READERS,
  outcome: READERS,
  sentiment: READERS,
  issues: READERS,
  follow_up: READERS,
  turns: READERS,
  contact: STAFF
})

export const PERSON_VIEW = new PeopleView<Person>('person', {
  person_id: READERS,
  name: READERS,
  city: READERS,
  tags: READERS,
  issues: READERS,
  roles: READERS,
  merged_from: READERS,
  created_at: READERS,
  updated_at: READERS,
  last_activity_at: READERS,
  email: STAFF,
  phone: STAFF,
  address: STAFF,
  postcode: STAFF,
  household_id: STAFF,
  custom: STAFF,
  consent: STAFF
})

/** A person on a shift's roster: who they are, whether they came, their record of coming. */
export const RSVP_VIEW = new PeopleView<RosterEntry>('rsvp', {
  person_id: STAFF,
  name: STAFF,
  email: STAFF,
  state: STAFF,
  position: STAFF,
  rsvp_at: STAFF,
  checked_in_at: STAFF,
  reminded_at: STAFF,
  attended: STAFF,
  no_shows: STAFF
})

export const ATTENDANCE_VIEW = new PeopleView<Attendance>('attendance', {
  person_id: STAFF,
  name: STAFF,
  attended: STAFF,
  no_shows: STAFF,
  upcoming: STAFF
})

/** A send log record: who was sent what and when; the address and the server's answer (which may name it) are staff's. */
export const SEND_LOG_VIEW = new PeopleView<SendLogRecord>('send log', {
  send_id: READERS,
  channel: READERS,
  person_id: READERS,
  purpose: READERS,
  status: READERS,
  message_id: READERS,
  at: READERS,
  address: STAFF,
  response: STAFF,
  sent_by: STAFF
})

/** A reply to a text: the number it came from and what it says, and what it did to the sender's consent, are staff's. */
export const SMS_REPLY_VIEW = new PeopleView<SmsReply>('sms reply', {
  reply_id: STAFF,
  message_sid: STAFF,
  from: STAFF,
  to: STAFF,
  body: STAFF,
  keyword: STAFF,
  action: STAFF,
  person_id: STAFF,
  received_at: STAFF
})

/** Every view, for the documentation's table. */
export const PEOPLE_VIEWS: ReadonlyArray<PeopleView<object>> = [PERSON_VIEW, VOLUNTEER_VIEW, DONOR_VIEW, DONATION_VIEW, USER_VIEW, CALL_VIEW, RSVP_VIEW, ATTENDANCE_VIEW, SEND_LOG_VIEW, SMS_REPLY_VIEW] as unknown as ReadonlyArray<PeopleView<object>>

const isPlainObject = (item: unknown): item is Record<string, unknown> => item !== null && typeof item === 'object' && [Object.prototype, null].includes(Object.getPrototypeOf(item))

/** `value` without attribution fields at any depth, unless `role` sees them (arrays and plain objects are copied, other values kept). */
export function hideAttribution (value: unknown, role: Role | undefined): unknown {
  if (sees(role, ATTRIBUTION_AUDIENCE)) return value
  const strip = (item: unknown): unknown => {
    if (Array.isArray(item)) return item.map(strip)
    if (!isPlainObject(item)) return item
    return Object.fromEntries(Object.entries(item).filter(([key]) => !(ATTRIBUTION_FIELDS as readonly string[]).includes(key)).map(([key, v]) => [key, strip(v)]))
  }
  return strip(value)
}
