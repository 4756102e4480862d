// The local issues module: its page in the navigation, and its server functions with the roles that may call each.
import type { ModuleManifest } from '../manifest.js'

export const manifest: ModuleManifest = {
  id: 'local-issues',
  title: 'Local issues',
  blurb: 'The issues people raise, ranked by urgency, and where they raise them.',
  group: 'Listen',
  functions: {
    'analyze-local-issues': ['staff', 'volunteer', 'readonly']
  }
}
