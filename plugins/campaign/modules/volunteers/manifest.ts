// The volunteers module: its page in the navigation, its server functions with the roles that may call each, and what each role sees of its records.
import { EVERYONE, STAFF, type ModuleManifest } from '../manifest.js'

export const manifest = {
  id: 'volunteers',
  title: 'Volunteers',
  blurb: 'The volunteer roster and the best match for an assignment.',
  group: 'Organise',
  functions: {
    'save-volunteer': ['staff'],
    'delete-volunteer': ['staff'],
    'list-volunteers': ['staff', 'volunteer', 'readonly'],
    'volunteer-detail': ['staff', 'volunteer', 'readonly'],
    'match-volunteer': ['staff', 'volunteer', 'readonly']
  },
  views: {
    volunteer: {
      volunteer_id: EVERYONE,
      name: EVERYONE,
      skills: EVERYONE,
      availability: EVERYONE,
      updated_at: EVERYONE,
      email: STAFF,
      location: STAFF
    }
  }
} satisfies ModuleManifest
