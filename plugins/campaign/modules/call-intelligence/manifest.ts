// The call intelligence module: its page in the navigation, and its server functions with the roles that may call each.
import type { ModuleManifest } from '../manifest.js'

export const manifest: ModuleManifest = {
  id: 'call-intelligence',
  title: 'Call intelligence',
  blurb: 'What canvassing calls say: outcomes, issues, sentiment, and their trends.',
  group: 'Listen',
  functions: {
    'analyze-transcript': ['staff', 'volunteer'],
    'call-trends': ['staff', 'readonly']
  }
}
