// The fundraising module's surface for other modules: donations and donors, their record views,
// elections. Another module imports this module through this file alone (docs/architecture.md,
// Boundaries).
export { cycleOfElection, electionName } from './elections.js'
export { dollars, type Donation, DONATION_VIEW, DONOR_VIEW, donorId, type Fundraising, netCents, type NewDonation, receivedOn } from './fundraising.js'
