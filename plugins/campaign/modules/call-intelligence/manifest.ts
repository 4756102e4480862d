// The call intelligence module: its page in the navigation, its server functions with the roles that may call each, and what each role sees of its records.
import { READERS, STAFF, type ModuleManifest } from '../manifest.js'

export const manifest = {
  id: 'call-intelligence',
  title: 'Call intelligence',
  blurb: 'What canvassing calls say: outcomes, issues, sentiment, and their trends.',
  group: 'Listen',
  functions: {
    'analyze-transcript': ['staff', 'volunteer'],
    'call-trends': ['staff', 'readonly']
  },
  views: {
    call: {
      call_id: READERS,
      called_at: READERS,
      caller: READERS,
      outcome: READERS,
      sentiment: READERS,
      issues: READERS,
      follow_up: READERS,
      turns: READERS,
      contact: STAFF
    }
  }
} satisfies ModuleManifest
