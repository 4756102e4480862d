// The volunteers module: its page in the navigation, and its server functions with the roles that may call each.
import type { ModuleManifest } from '../manifest.js'

export const manifest: ModuleManifest = {
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
  }
}
