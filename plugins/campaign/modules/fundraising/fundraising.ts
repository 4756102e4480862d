// Fundraising: donors and their donations. A donor may give at most the contribution limit toward each
// election (elections.ts: a cycle's primary and general), and above the itemisation threshold in a
// cycle must have an address, occupation and employer on record; both are checked and the donation
// written in one transaction that holds the donor (one at a time per donor, across instances on a
// shared database). Donations are corrected or refunded with a history of each change;
// draft-solicitation writes an ask within what the donor may still give toward the next election.
import { createHash, randomUUID } from 'node:crypto'
import { BadRequest, Conflict, NotFound } from '../../../../kernel/index.js'
import { Type } from '../../../../kernel/schema.js'
import { moduleFunction, type ModuleFunction, PeopleView, type Role, calendarDay, type Alongside, type CampaignStore, type Table, type Transaction, CAMPAIGN_CODES } from '../../module-kit.js'
import type { PeopleDirectory } from '../people/index.js'
import { manifest } from './manifest.js'
import { cycleOfElection, ELECTION_KINDS, electionName, type Election, type ElectionKind, type Elections } from './elections.js'

/** What each role sees of a donor and of a donation (the manifest's views). */
export const DONOR_VIEW = new PeopleView<DonorSummary>('donor', manifest.views.donor)
export const DONATION_VIEW = new PeopleView<Donation>('donation', manifest.views.donation)

export interface Donor {
  donor_id: string
  name: string
  email: string
  /** The itemisation fields: required once the donor's gifts in a cycle pass the threshold ('' until given). */
  address: string
  occupation: string
  employer: string
  created_at: string
  updated_at: string
}

export const ITEMIZATION_FIELDS = ['address', 'occupation', 'employer'] as const
/** Where list-donors' search looks, of the fields the searching role sees (DONOR_VIEW). */
export const DONOR_SEARCH_FIELDS = ['name', 'email'] as const
/** A search of donors: its text, and the fields it looks in. */
export interface DonorSearch { text: string, in: ReadonlyArray<typeof DONOR_SEARCH_FIELDS[number]> }

export interface DonationChange {
  at: string
  changed_by: string
  action: 'corrected' | 'refunded'
  reason: string
  /** Each field changed, from and to. */
  changes: Record<string, { from: string | number | null, to: string | number | null }>
}

export interface Donation {
  donation_id: string
  donor_id: string
  amount_cents: number
  /** Cents given back; the rest counts toward the limit. */
  refunded_cents: number
  /** YYYY-MM-DD. */
  received_on: string
  /** The election the donor designated, or null: the next one on or after `received_on`. */
  designation: ElectionKind | null
  /** The election it counts toward (`<cycle>-primary`, `<cycle>-general`). */
  election: string
  recorded_by: string
  recorded_at: string
  /** Corrections and refunds, oldest first. */
  history: DonationChange[]
}

/** A donor with their totals: toward the next election (null when no cycle is configured ahead), in its cycle, and in all. */
export interface DonorSummary extends Donor {
  election: string | null
  election_total_cents: number
  remaining_cents: number
  cycle_total_cents: number
  lifetime_total_cents: number
  donation_count: number
  last_donation_on: string
  /** Itemisation fields missing while the cycle's total is over the threshold. */
  missing_itemization: string[]
}

/** A donation as recorded, corrected or refunded, with the donor's totals after it. */
export type DonationOutcome = Donation & { election_total_cents: number, remaining_cents: number, cycle_total_cents: number }

/** As stored: records written before the itemisation fields, elections and refunds lack them. */
export type StoredDonor = Pick<Donor, 'donor_id' | 'name' | 'email' | 'created_at'> & Partial<Donor>
export type StoredDonation = Pick<Donation, 'donation_id' | 'donor_id' | 'amount_cents' | 'received_on' | 'recorded_by'> & Partial<Donation>

/** Donations are keyed by [donor_id, received_on, donation_id]. */
type DonationKey = [string, string, string]
const DONORS = 'donors'
const DONATIONS = 'donations'
const donorsOf = (tables: Transaction): Table<StoredDonor> => tables.table<StoredDonor>(DONORS)
const donationsOf = (tables: Transaction): Table<StoredDonation, DonationKey> => tables.table<StoredDonation, DonationKey>(DONATIONS)

export interface FundraisingRules {
  /** Most one donor may give toward one election, in cents. */
  limitCents: number
  /** A donor whose gifts in a cycle add up to more than this must have the itemisation fields. */
  itemizeAboveCents: number
  elections: Elections
}

/** The donor fields a gift may bring (the itemisation fields, as the arguments name them). */
export interface DonorFields { donor_address?: string, donor_occupation?: string, donor_employer?: string }

/** A donation to record, with its donor's name, e-mail and any itemisation fields. */
export type NewDonation = { donor_name: string, donor_email: string, amount_cents: number, received_on: string, election: ElectionKind | null } & DonorFields

/** The donor id: derived from the e-mail address, so one person is one donor. */
export function donorId (email: string): string {
  return createHash('sha256').update(email.trim().toLowerCase()).digest('hex').slice(0, 16)
}

export function dollars (cents: number): string {
  return `$${(cents / 100).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`
}

/** What counts toward the limit: the amount less refunds. */
export const netCents = (d: Pick<Donation, 'amount_cents' | 'refunded_cents'>): number => d.amount_cents - d.refunded_cents

const today = (): string => new Date().toISOString().slice(0, 10)
/** The latest day that is today somewhere (UTC+14): a gift received today anywhere is not in the future. */
const latestToday = (): string => new Date(Date.now() + 14 * 3_600_000).toISOString().slice(0, 10)

/** A `received_on` argument: a calendar day that is not in the future, or 400 naming the field. */
export function receivedOn (field: string, day: string): string {
  calendarDay(field, day)
  if (day > latestToday()) throw new BadRequest(`invalid arguments: /${field}: ${day} is in the future`)
  return day
}

const sum = (gifts: readonly Donation[]): number => gifts.reduce((total, g) => total + netCents(g), 0)
const listed = (words: readonly string[]): string => words.length < 2 ? words.join('') : `${words.slice(0, -1).join(', ')} and ${words[words.length - 1]}`

export class Fundraising {
  readonly #store: CampaignStore
  readonly limitCents: number
  readonly itemizeAboveCents: number
  readonly elections: Elections

  constructor (store: CampaignStore, rules: FundraisingRules) {
    this.#store = store
    this.limitCents = rules.limitCents
    this.itemizeAboveCents = rules.itemizeAboveCents
    this.elections = rules.elections
  }

  async donorCount (): Promise<number> {
    return await donorsOf(this.#store).count()
  }

  async donor (id: string, tables: Transaction = this.#store): Promise<Donor | undefined> {
    const stored = await donorsOf(tables).get(id)
    return stored === undefined ? undefined : { address: '', occupation: '', employer: '', updated_at: stored.created_at, ...stored }
  }

  async donations (donorId: string, tables: Transaction = this.#store): Promise<Donation[]> {
    return (await donationsOf(tables).list({ start: [donorId], end: [donorId, '\uffff'] })).map(({ value }) => this.#completed(value))
  }

  /** Record a donation (and its donor, or the itemisation fields it brings); 409 over the limit or without required itemisation fields. */
  async record (input: NewDonation, recordedBy: string, alongside?: Alongside): Promise<DonationOutcome> {
    const id = donorId(input.donor_email)
    return await this.#store.transaction(alongside === undefined ? `donor:${id}` : [`donor:${id}`, alongside.subject], async tx => {
      const known = await this.donor(id, tx)
      const { donor, donation, election } = this.#draft(input, recordedBy, known)
      const outcome = this.#admit(donor, await this.donations(id, tx), donation, election, `a donation of ${dollars(input.amount_cents)}`)
      if (donor !== known) await donorsOf(tx).put(id, donor)
      await donationsOf(tx).put([id, donation.received_on, donation.donation_id], donation)
      await alongside?.write(tx)
      return outcome
    })
  }

  /** Correct a donation's amount, day or designation (the donor's itemisation fields may come with it); the change goes into its history. */
  async correct (input: { donation_id: string, amount_cents?: number, received_on?: string, election?: ElectionKind, reason: string } & DonorFields, changedBy: string): Promise<DonationOutcome> {
    return await this.#inDonorOf(input.donation_id, async (tx, key, before) => {
      const donor = await this.donor(before.donor_id, tx) as Donor
      const receivedOn = input.received_on ?? before.received_on
      const designation = input.election ?? before.designation
      const election = this.elections.designate(input.received_on !== undefined ? 'received_on' : 'election', receivedOn, designation)
      const amount = input.amount_cents ?? before.amount_cents
      if (amount < before.refunded_cents) throw new Conflict(`${dollars(before.refunded_cents)} of this donation was refunded; it cannot be corrected to less (${dollars(amount)})`, { code: CAMPAIGN_CODES.REFUND_EXCEEDS_GIFT })
      const now = new Date().toISOString()
      const after: Donation = { ...before, amount_cents: amount, received_on: receivedOn, designation, election: election.id }
      const changes = changed(before, after, ['amount_cents', 'received_on', 'designation', 'election'])
      const updated = withFields(donor, input, now)
      if (Object.keys(changes).length === 0 && updated === donor) throw new BadRequest('invalid arguments: nothing to correct: give amount_cents, received_on, election or a donor field that differs')
      // The donor's fields are not the donation's: only a change of the donation goes into its history.
      if (Object.keys(changes).length > 0) after.history = [...before.history, { at: now, changed_by: changedBy, action: 'corrected', reason: input.reason, changes }]
      const outcome = this.#admit(updated, (await this.donations(before.donor_id, tx)).filter(d => d.donation_id !== before.donation_id), after, election, 'this correction')
      if (updated !== donor) await donorsOf(tx).put(donor.donor_id, updated)
      await donationsOf(tx).remove(key)
      await donationsOf(tx).put([after.donor_id, after.received_on, after.donation_id], after)
      return outcome
    })
  }

  /** Give back part or all (default) of what remains of a donation; it stops counting toward the limit. */
  async refund (input: { donation_id: string, amount_cents?: number, reason: string }, changedBy: string): Promise<DonationOutcome> {
    return await this.#inDonorOf(input.donation_id, async (tx, key, before) => {
      const left = netCents(before)
      const amount = input.amount_cents ?? left
      if (left === 0) throw new Conflict('this donation was refunded in full already', { code: CAMPAIGN_CODES.REFUND_EXCEEDS_GIFT })
      if (amount > left) throw new Conflict(`a refund of ${dollars(amount)} is more than the ${dollars(left)} of this donation not yet refunded`, { code: CAMPAIGN_CODES.REFUND_EXCEEDS_GIFT })
      const after: Donation = { ...before, refunded_cents: before.refunded_cents + amount }
      after.history = [...before.history, { at: new Date().toISOString(), changed_by: changedBy, action: 'refunded', reason: input.reason, changes: changed(before, after, ['refunded_cents']) }]
      await donationsOf(tx).put(key, after)
      return this.#totals(after, (await this.donations(before.donor_id, tx)).filter(d => d.donation_id !== before.donation_id))
    })
  }

  /** Every donation, donor by donor, read in batches (for exports). */
  async * allDonations (): AsyncIterable<Donation> {
    for await (const { value } of donationsOf(this.#store).range()) yield this.#completed(value)
  }

  /** Every donor's summary by name; with `search`, those with its text in one of its fields. */
  async summaries (search: DonorSearch | undefined): Promise<DonorSummary[]> {
    const needle = search?.text.toLowerCase()
    const found: DonorSummary[] = []
    for await (const { key } of donorsOf(this.#store).range()) {
      const donor = await this.donor(key) as Donor
      if (search === undefined || search.in.some(field => donor[field].toLowerCase().includes(needle as string))) found.push(await this.summary(donor))
    }
    return found.sort((a, b) => a.name.localeCompare(b.name))
  }

  async summary (donor: Donor): Promise<DonorSummary> {
    const gifts = await this.donations(donor.donor_id)
    const next = this.elections.nextOn(today())
    const electionTotal = next === undefined ? 0 : sum(gifts.filter(g => g.election === next.id))
    const cycleTotal = next === undefined ? 0 : sum(gifts.filter(g => cycleOfElection(g.election) === next.cycle))
    return {
      ...donor,
      election: next?.id ?? null,
      election_total_cents: electionTotal,
      remaining_cents: next === undefined ? 0 : Math.max(0, this.limitCents - electionTotal),
      cycle_total_cents: cycleTotal,
      lifetime_total_cents: sum(gifts),
      donation_count: gifts.length,
      last_donation_on: gifts.map(g => g.received_on).sort().at(-1) ?? '',
      missing_itemization: cycleTotal > this.itemizeAboveCents ? ITEMIZATION_FIELDS.filter(f => donor[f] === '') : []
    }
  }

  /** A solicitation letter; the ask is 1.5 × the largest gift (at least $25), rounded up to $5, capped by what remains toward the next election. */
  async draft (id: string, purpose: string): Promise<{ donor_id: string, election: string | null, subject: string, body: string, suggested_ask_cents: number, remaining_cents: number }> {
    const donor = await this.donor(id)
    if (donor === undefined) throw new NotFound(`no donor "${id}"`)
    const gifts = await this.donations(id)
    const { election, remaining_cents: remaining } = await this.summary(donor)
    const largest = Math.max(0, ...gifts.map(g => g.amount_cents))
    const ask = Math.min(remaining, Math.ceil(Math.max(2500, largest * 1.5) / 500) * 500)
    const firstName = donor.name.split(' ')[0]
    const thanks = gifts.length > 0
      ? `Thank you for your ${gifts.length === 1 ? 'gift' : `${gifts.length} gifts`} so far: they have made a real difference to ${purpose}.`
      : `People like you make ${purpose} possible.`
    const request = ask > 0
      ? `Would you consider a contribution of ${dollars(ask)} to help us reach our next goal?`
      : 'You have given the most the law allows for this election; thank you. Sharing our work with friends helps just as much.'
    return {
      donor_id: id,
      election,
      subject: ask > 0 ? `${firstName}, will you stand with us again?` : `${firstName}, thank you`,
      body: `Dear ${firstName},\n\n${thanks}\n\n${request}\n\nWith gratitude,\nThe campaign team`,
      suggested_ask_cents: ask,
      remaining_cents: remaining
    }
  }

  /** The stored key and donation of `id`, or 404. */
  async #find (id: string, tables: Transaction): Promise<[DonationKey, Donation]> {
    for await (const { key, value } of donationsOf(tables).range()) if (value.donation_id === id) return [key, this.#completed(value)]
    throw new NotFound(`no donation "${id}"`)
  }

  /** Run `fn` on donation `id` (404 when unknown) in a transaction holding its donor, the donation read again inside it. */
  async #inDonorOf<T> (id: string, fn: (tx: Transaction, key: DonationKey, before: Donation) => Promise<T>): Promise<T> {
    const [, found] = await this.#find(id, this.#store)
    return await this.#store.transaction(`donor:${found.donor_id}`, async tx => {
      const [key, before] = await this.#find(id, tx)
      return await fn(tx, key, before)
    })
  }

  /** A stored donation with the fields older records lack: nothing refunded, no history, counting toward the next election of its day. */
  /**
   * What `record` would answer for `input` if the donations in `earlier` (a file's rows before it) had
   * been recorded first, writing nothing: a 409 over the limit or without required itemisation fields.
   */
  async check (input: NewDonation, earlier: readonly NewDonation[]): Promise<DonationOutcome> {
    const id = donorId(input.donor_email)
    let donor = await this.donor(id)
    const donations = await this.donations(id)
    for (const row of earlier.filter(row => donorId(row.donor_email) === id)) {
      const drafted = this.#draft(row, '', donor)
      donor = drafted.donor
      donations.push(drafted.donation)
    }
    const { donor: withInput, donation, election } = this.#draft(input, '', donor)
    return this.#admit(withInput, donations, donation, election, `a donation of ${dollars(input.amount_cents)}`)
  }

  /** A new donation of `input` and its donor (`known`, with the fields the input brings, or new), in its election. */
  #draft (input: NewDonation, recordedBy: string, known: Donor | undefined): { donor: Donor, donation: Donation, election: Election } {
    const election = this.elections.designate('received_on', input.received_on, input.election)
    const id = donorId(input.donor_email)
    const now = new Date().toISOString()
    const donor = withFields(known ?? { donor_id: id, name: input.donor_name, email: input.donor_email.trim(), address: '', occupation: '', employer: '', created_at: now, updated_at: now }, input, now)
    const donation: Donation = {
      donation_id: randomUUID(),
      donor_id: id,
      amount_cents: input.amount_cents,
      refunded_cents: 0,
      received_on: input.received_on,
      designation: input.election,
      election: election.id,
      recorded_by: recordedBy,
      recorded_at: now,
      history: []
    }
    return { donor, donation, election }
  }

  #completed (stored: StoredDonation): Donation {
    return { refunded_cents: 0, designation: null, recorded_at: '', history: [], ...stored, election: stored.election ?? this.elections.nextOn(stored.received_on)?.id ?? '' }
  }

  /** 409 when `donation` with the donor's `others` goes over the limit toward its election, or over the itemisation threshold without the fields; else the totals. */
  #admit (donor: Donor, others: readonly Donation[], donation: Donation, election: Election, what: string): DonationOutcome {
    const outcome = this.#totals(donation, others)
    if (outcome.election_total_cents > this.limitCents) {
      throw new Conflict(`${what} would bring ${donor.name}'s total toward ${electionName(election.id)} to ${dollars(outcome.election_total_cents)}, ` +
        `over the per-donor limit of ${dollars(this.limitCents)} per election (${dollars(this.limitCents - outcome.election_total_cents + netCents(donation))} remaining)`, { code: CAMPAIGN_CODES.DONATION_OVER_LIMIT })
    }
    const missing = ITEMIZATION_FIELDS.filter(f => donor[f] === '')
    if (outcome.cycle_total_cents > this.itemizeAboveCents && missing.length > 0) {
      throw new Conflict(`${what} would bring ${donor.name}'s gifts in the ${election.cycle} cycle to ${dollars(outcome.cycle_total_cents)}, over the itemisation threshold of ` +
        `${dollars(this.itemizeAboveCents)}: give the donor's ${listed(missing)} (${missing.map(f => `donor_${f}`).join(', ')})`, { code: CAMPAIGN_CODES.ITEMIZATION_REQUIRED })
    }
    return outcome
  }

  #totals (donation: Donation, others: readonly Donation[]): DonationOutcome {
    const all = [...others, donation]
    const electionTotal = sum(all.filter(d => d.election === donation.election))
    return {
      ...donation,
      election_total_cents: electionTotal,
      remaining_cents: Math.max(0, this.limitCents - electionTotal),
      cycle_total_cents: sum(all.filter(d => cycleOfElection(d.election) === cycleOfElection(donation.election)))
    }
  }
}

/** The donor with the itemisation fields `fields` brings (trimmed, non-empty ones), or the same object when nothing changes. */
function withFields (donor: Donor, fields: DonorFields, now: string): Donor {
  const given = { address: fields.donor_address, occupation: fields.donor_occupation, employer: fields.donor_employer }
  const updates = Object.fromEntries(ITEMIZATION_FIELDS.map(f => [f, given[f]?.trim()]).filter(([f, v]) => v !== undefined && v !== '' && v !== donor[f as keyof Donor]))
  return Object.keys(updates).length === 0 ? donor : { ...donor, ...updates, updated_at: now }
}

function changed<K extends keyof Donation> (before: Donation, after: Donation, fields: readonly K[]): DonationChange['changes'] {
  return Object.fromEntries(fields.filter(f => before[f] !== after[f]).map(f => [f, { from: before[f] as string | number | null, to: after[f] as string | number | null }]))
}

const Email = Type.String({ pattern: '^[^@\\s]+@[^@\\s]+$', maxLength: 254 })
const Day = Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'YYYY-MM-DD, a calendar day not in the future' })
const Designation = Type.Union(ELECTION_KINDS.map(k => Type.Literal(k)), { description: 'the election the donor designated; the next one when absent' })
const DonorFieldArgs = {
  donor_address: Type.Optional(Type.String({ maxLength: 300, description: 'mailing address (itemisation)' })),
  donor_occupation: Type.Optional(Type.String({ maxLength: 200 })),
  donor_employer: Type.Optional(Type.String({ maxLength: 200 }))
}
const Reason = Type.String({ minLength: 1, maxLength: 500 })
const DonationId = Type.String({ minLength: 1, maxLength: 64 })

const RecordArgs = Type.Object({
  donor_name: Type.String({ minLength: 1, maxLength: 200 }),
  donor_email: Email,
  amount_cents: Type.Integer({ minimum: 1 }),
  received_on: Type.Optional(Day),
  election: Type.Optional(Designation),
  ...DonorFieldArgs
}, { additionalProperties: false })

const CorrectArgs = Type.Object({
  donation_id: DonationId,
  amount_cents: Type.Optional(Type.Integer({ minimum: 1 })),
  received_on: Type.Optional(Day),
  election: Type.Optional(Designation),
  reason: Reason,
  ...DonorFieldArgs
}, { additionalProperties: false })

const RefundArgs = Type.Object({
  donation_id: DonationId,
  amount_cents: Type.Optional(Type.Integer({ minimum: 1, description: 'what is given back; all that remains when absent' })),
  reason: Reason
}, { additionalProperties: false })

/** The module's functions; a donor is also one of the campaign's people, with the donor role. */
export function fundraisingFunctions (fundraising: Fundraising, people: PeopleDirectory): ModuleFunction[] {
  const shown = ({ election_total_cents: election, remaining_cents: remaining, cycle_total_cents: cycle, ...donation }: DonationOutcome, role: Role | undefined): object =>
    ({ ...DONATION_VIEW.show(donation, role), election_total_cents: election, remaining_cents: remaining, cycle_total_cents: cycle })
  const rules = (): { limit_cents: number, itemize_above_cents: number, election: Election | null } => ({ limit_cents: fundraising.limitCents, itemize_above_cents: fundraising.itemizeAboveCents, election: fundraising.elections.nextOn(today()) ?? null })
  return [
    moduleFunction({
      name: 'list-donors',
      args: Type.Object({ search: Type.Optional(Type.String({ maxLength: 200, description: 'in the name or e-mail (those of them the caller\'s role sees)' })) }, { additionalProperties: false }),
      handler: async ({ search }, { session }) => {
        const found = await fundraising.summaries(search === undefined ? undefined : { text: search, in: DONOR_VIEW.visibleOf(DONOR_SEARCH_FIELDS, session?.role) })
        return { ...rules(), donors: found.map(d => DONOR_VIEW.show(d, session?.role)) }
      }
    }),
    moduleFunction({
      name: 'list-donations',
      args: Type.Object({ donor_id: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false }),
      handler: async ({ donor_id: id }, { session }) => {
        const donor = await fundraising.donor(id)
        if (donor === undefined) throw new NotFound(`no donor "${id}"`)
        return {
          ...rules(),
          donor: DONOR_VIEW.show(await fundraising.summary(donor), session?.role),
          donations: (await fundraising.donations(id)).sort((a, b) => b.received_on.localeCompare(a.received_on)).map(d => DONATION_VIEW.show(d, session?.role))
        }
      }
    }),
    moduleFunction({
      name: 'record-donation',
      args: RecordArgs,
      handler: async (args, { session }) => {
        const by = session?.email ?? ''
        const outcome = await fundraising.record({ ...args, received_on: receivedOn('received_on', args.received_on ?? today()), election: args.election ?? null }, by, people.withRole({ name: args.donor_name, email: args.donor_email }, 'donor', by))
        return shown(outcome, session?.role)
      }
    }),
    moduleFunction({
      name: 'correct-donation',
      args: CorrectArgs,
      handler: async (args, { session }) => shown(await fundraising.correct({
        ...args, ...(args.received_on !== undefined ? { received_on: receivedOn('received_on', args.received_on) } : {})
      }, session?.email ?? ''), session?.role)
    }),
    moduleFunction({
      name: 'refund-donation',
      args: RefundArgs,
      handler: async (args, { session }) => shown(await fundraising.refund(args, session?.email ?? ''), session?.role)
    }),
    moduleFunction({
      name: 'draft-solicitation',
      args: Type.Object({
        donor_id: Type.String({ minLength: 1, maxLength: 64 }),
        purpose: Type.String({ minLength: 1, maxLength: 200, default: 'our campaign' })
      }, { additionalProperties: false }),
      handler: async ({ donor_id: id, purpose }) => await fundraising.draft(id, purpose)
    })
  ]
}

declare module '../../module-kit.js' {
  interface ModuleKit {
    /** Donors and donations with the contribution limit (read by compliance). */
    fundraising: Fundraising
  }
}
