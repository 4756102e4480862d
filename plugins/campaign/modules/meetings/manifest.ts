// The meetings module: its page in the navigation, and its server functions with the roles that may call each.
import type { ModuleManifest } from '../manifest.js'

export const manifest: ModuleManifest = {
  id: 'meetings',
  title: 'Meetings',
  blurb: 'Meeting summaries with decisions, action items and open questions.',
  group: 'Organise',
  functions: {
    'summarize-meeting': ['staff']
  }
}
