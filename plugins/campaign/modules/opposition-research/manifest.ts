// The opposition research module: its page in the navigation, and its server functions with the roles that may call each.
import type { ModuleManifest } from '../manifest.js'

export const manifest: ModuleManifest = {
  id: 'opposition-research',
  title: 'Opposition research',
  blurb: 'Opponents\' statements by topic and stance, their contradictions and their coverage.',
  group: 'Candidate',
  functions: {
    'list-opponents': ['staff', 'readonly'],
    'generate-opposition-briefing': ['staff'],
    'detect-contradictions': ['staff', 'readonly']
  }
}
