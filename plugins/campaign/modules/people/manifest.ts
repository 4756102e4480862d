// The people module: its page in the navigation, its server functions with the roles that may call each, and what each role sees of its records.
import { READERS, STAFF, type ModuleManifest } from '../manifest.js'

export const manifest = {
  id: 'people',
  title: 'People',
  blurb: 'Contacts with their households, tags and consent; saved lists, duplicates merged, CSV import and export.',
  group: 'Organise',
  functions: {
    'save-person': ['staff'],
    'person-detail': ['staff', 'readonly'],
    'list-people': ['staff', 'readonly'],
    'delete-person': ['staff'],
    'find-duplicates': ['staff'],
    'merge-people': ['staff'],
    'save-list': ['staff'],
    'list-lists': ['staff', 'readonly'],
    'delete-list': ['staff'],
    'import-csv': ['staff']
  },
  views: {
    person: {
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
    }
  }
} satisfies ModuleManifest
