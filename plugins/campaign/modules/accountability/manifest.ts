// The accountability module: its page in the navigation, and its server functions with the roles that may call each.
import type { ModuleManifest } from '../manifest.js'

export const manifest: ModuleManifest = {
  id: 'accountability',
  title: 'Accountability',
  blurb: 'Commitments made in speeches, the evidence on them, and what is overdue.',
  group: 'Policy and compliance',
  functions: {
    'extract-commitments': ['staff'],
    'add-evidence': ['staff'],
    'accountability-report': ['staff', 'readonly']
  }
}
