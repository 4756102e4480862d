// The fundraising module: its page in the navigation, its server functions with the roles that may call each, and what each role sees of its records.
import { READERS, STAFF, type ModuleManifest } from '../manifest.js'

export const manifest = {
  id: 'fundraising',
  title: 'Fundraising',
  blurb: 'Donors, donations within the limits, and solicitation drafts.',
  group: 'Organise',
  functions: {
    'list-donors': ['staff', 'readonly'],
    'list-donations': ['staff', 'readonly'],
    'record-donation': ['staff'],
    'correct-donation': ['staff'],
    'refund-donation': ['staff'],
    'draft-solicitation': ['staff']
  },
  views: {
    donor: {
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
    },
    donation: {
      donation_id: READERS,
      donor_id: READERS,
      amount_cents: READERS,
      refunded_cents: READERS,
      received_on: READERS,
      designation: READERS,
      election: READERS,
      recorded_at: READERS,
      history: READERS
    }
  }
} satisfies ModuleManifest
