// The coaching and debate module: its page in the navigation, and its server functions with the roles that may call each.
import type { ModuleManifest } from '../manifest.js'

export const manifest: ModuleManifest = {
  id: 'coaching-debate',
  title: 'Coaching and debate',
  blurb: 'Practise answers: an opponent who rebuts from the record, or a coach who measures them.',
  group: 'Candidate',
  functions: {
    'coaching-exchange': ['staff']
  }
}
