// The fundraising module: its page in the navigation, and its server functions with the roles that may call each.
import type { ModuleManifest } from '../manifest.js'

export const manifest: ModuleManifest = {
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
  }
}
