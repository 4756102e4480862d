// The compliance module: its page in the navigation, and its server functions with the roles that may call each.
import type { ModuleManifest } from '../manifest.js'

export const manifest: ModuleManifest = {
  id: 'compliance',
  title: 'Compliance',
  blurb: 'Disclaimers, required fields, prohibited phrases and contribution limits checked; period reports.',
  group: 'Policy and compliance',
  functions: {
    'compliance-check': ['staff'],
    'generate-report': ['staff']
  }
}
