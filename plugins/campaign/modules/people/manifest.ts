// The people module: its page in the navigation, and its server functions with the roles that may call each.
import type { ModuleManifest } from '../manifest.js'

export const manifest: ModuleManifest = {
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
  }
}
