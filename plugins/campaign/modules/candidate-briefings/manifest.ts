// The candidate briefings module: its page in the navigation, and its server functions with the roles that may call each.
import type { ModuleManifest } from '../manifest.js'

export const manifest: ModuleManifest = {
  id: 'candidate-briefings',
  title: 'Candidate briefings',
  blurb: 'A briefing book on an event, place, person or topic: what the app knows, and the likely questions.',
  group: 'Candidate',
  functions: {
    'generate-briefing': ['staff']
  }
}
