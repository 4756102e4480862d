// The policy diff module: its page in the navigation, and its server functions with the roles that may call each.
import type { ModuleManifest } from '../manifest.js'

export const manifest: ModuleManifest = {
  id: 'policy-diff',
  title: 'Policy diff',
  blurb: 'Two versions of a policy compared clause by clause, and what changed in substance.',
  group: 'Policy and compliance',
  functions: {
    'compare-policies': ['staff', 'readonly']
  }
}
