// Fundraising: donors and their donations (list-donors, record-donation) with the per-donor limit of
// contributions in a calendar year (UTC), checked and written in one transaction; draft-solicitation
// writes an ask that never exceeds what the donor may still give this year.
import { createHash, randomUUID } from 'node:crypto'
import type { Database } from 'lmdb'
import { Conflict, NotFound } from '../../../kernel/index.js'
import { Type } from '../../../kernel/schema.js'
import { serverFunction, type ServerFunction } from '../functions.js'

export interface Donor {
  donor_id: string
  name: string
  email: string
  created_at: string
}

export interface Donation {
  donation_id: string
  donor_id: string
  amount_cents: number
  /** YYYY-MM-DD. */
  received_on: string
  recorded_by: string
}

export type DonorDb = Database<Donor, string>
/** Donations by [donor_id, received_on, donation_id]. */
export type DonationDb = Database<Donation, [string, string, string]>

export interface FundraisingStores {
  donors: DonorDb
  donations: DonationDb
  /** One write transaction across both databases. */
  transaction<T>(fn: () => T): Promise<T>
}

/** The donor id: derived from the e-mail address, so one person is one donor. */
export function donorId (email: string): string {
  return createHash('sha256').update(email.trim().toLowerCase()).digest('hex').slice(0, 16)
}

export function dollars (cents: number): string {
  return `$${(cents / 100).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`
}

const today = (): string => new Date().toISOString().slice(0, 10)

export class Fundraising {
  readonly #stores: FundraisingStores
  readonly limitCents: number

  constructor (stores: FundraisingStores, limitCents: number) {
    this.#stores = stores
    this.limitCents = limitCents
  }

  get donorCount (): number {
    return this.#stores.donors.getCount()
  }

  donations (donorId: string): Donation[] {
    return [...this.#stores.donations.getRange({ start: [donorId], end: [donorId, '\uffff'] })].map(({ value }) => value)
  }

  /** Cents the donor gave in `year`. */
  givenIn (donorId: string, year: string): number {
    return this.donations(donorId).filter(d => d.received_on.startsWith(year)).reduce((sum, d) => sum + d.amount_cents, 0)
  }

  /** Record a donation unless it takes the donor's total for its year over the limit (Conflict). */
  async record (input: { donor_name: string, donor_email: string, amount_cents: number, received_on: string }, recordedBy: string): Promise<Donation & { year_total_cents: number, remaining_cents: number }> {
    const id = donorId(input.donor_email)
    const year = input.received_on.slice(0, 4)
    const { donors, donations } = this.#stores
    return await this.#stores.transaction(() => {
      const total = this.givenIn(id, year) + input.amount_cents
      if (total > this.limitCents) {
        throw new Conflict(`a donation of ${dollars(input.amount_cents)} would bring ${input.donor_name}'s ${year} total to ${dollars(total)}, ` +
          `over the per-donor limit of ${dollars(this.limitCents)} (${dollars(this.limitCents - total + input.amount_cents)} remaining)`)
      }
      if (donors.get(id) === undefined) {
        void donors.put(id, { donor_id: id, name: input.donor_name, email: input.donor_email.trim(), created_at: new Date().toISOString() })
      }
      const donation: Donation = { donation_id: randomUUID(), donor_id: id, amount_cents: input.amount_cents, received_on: input.received_on, recorded_by: recordedBy }
      void donations.put([id, donation.received_on, donation.donation_id], donation)
      return { ...donation, year_total_cents: total, remaining_cents: this.limitCents - total }
    })
  }

  summaries (search: string | undefined): Array<Donor & { year_total_cents: number, lifetime_total_cents: number, remaining_cents: number, donation_count: number, last_donation_on: string }> {
    const year = today().slice(0, 4)
    const needle = search?.toLowerCase()
    return [...this.#stores.donors.getRange()].map(({ value }) => value)
      .filter(d => needle === undefined || d.name.toLowerCase().includes(needle) || d.email.toLowerCase().includes(needle))
      .map(donor => {
        const gifts = this.donations(donor.donor_id)
        const yearTotal = gifts.filter(g => g.received_on.startsWith(year)).reduce((sum, g) => sum + g.amount_cents, 0)
        return {
          ...donor,
          year_total_cents: yearTotal,
          lifetime_total_cents: gifts.reduce((sum, g) => sum + g.amount_cents, 0),
          remaining_cents: Math.max(0, this.limitCents - yearTotal),
          donation_count: gifts.length,
          last_donation_on: gifts.map(g => g.received_on).sort().at(-1) ?? ''
        }
      })
      .sort((a, b) => a.name.localeCompare(b.name))
  }

  /** A solicitation letter; the ask is 1.5 × the largest gift (at least $25), rounded up to $5, capped by what remains this year. */
  draft (id: string, purpose: string): { donor_id: string, subject: string, body: string, suggested_ask_cents: number, remaining_cents: number } {
    const donor = this.#stores.donors.get(id)
    if (donor === undefined) throw new NotFound(`no donor "${id}"`)
    const gifts = this.donations(id)
    const remaining = Math.max(0, this.limitCents - this.givenIn(id, today().slice(0, 4)))
    const largest = Math.max(0, ...gifts.map(g => g.amount_cents))
    const ask = Math.min(remaining, Math.ceil(Math.max(2500, largest * 1.5) / 500) * 500)
    const firstName = donor.name.split(' ')[0]
    const thanks = gifts.length > 0
      ? `Thank you for your ${gifts.length === 1 ? 'gift' : `${gifts.length} gifts`} so far: they have made a real difference to ${purpose}.`
      : `People like you make ${purpose} possible.`
    const request = ask > 0
      ? `Would you consider a contribution of ${dollars(ask)} to help us reach our next goal?`
      : 'You have given the most the law allows this year; thank you. Sharing our work with friends helps just as much.'
    return {
      donor_id: id,
      subject: ask > 0 ? `${firstName}, will you stand with us again?` : `${firstName}, thank you`,
      body: `Dear ${firstName},\n\n${thanks}\n\n${request}\n\nWith gratitude,\nThe campaign team`,
      suggested_ask_cents: ask,
      remaining_cents: remaining
    }
  }
}

const RecordArgs = Type.Object({
  donor_name: Type.String({ minLength: 1, maxLength: 200 }),
  donor_email: Type.String({ pattern: '^[^@\\s]+@[^@\\s]+$', maxLength: 254 }),
  amount_cents: Type.Integer({ minimum: 1 }),
  received_on: Type.Optional(Type.String({ pattern: '^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])$' }))
}, { additionalProperties: false })

export function fundraisingFunctions (fundraising: Fundraising): ServerFunction[] {
  return [
    serverFunction({
      name: 'list-donors',
      module: 'fundraising',
      access: ['staff', 'readonly'],
      args: Type.Object({ search: Type.Optional(Type.String({ maxLength: 200 })) }, { additionalProperties: false }),
      handler: ({ search }) => ({ limit_cents: fundraising.limitCents, donors: fundraising.summaries(search) })
    }),
    serverFunction({
      name: 'record-donation',
      module: 'fundraising',
      access: ['staff'],
      args: RecordArgs,
      handler: async (args, { session }) => await fundraising.record({ ...args, received_on: args.received_on ?? today() }, session?.email ?? '')
    }),
    serverFunction({
      name: 'draft-solicitation',
      module: 'fundraising',
      access: ['staff'],
      args: Type.Object({
        donor_id: Type.String({ minLength: 1, maxLength: 64 }),
        purpose: Type.String({ minLength: 1, maxLength: 200, default: 'our campaign' })
      }, { additionalProperties: false }),
      handler: ({ donor_id: id, purpose }) => fundraising.draft(id, purpose)
    })
  ]
}
