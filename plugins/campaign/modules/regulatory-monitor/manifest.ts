// The regulatory monitor module: its page in the navigation, and its server functions with the roles that may call each.
import type { ModuleManifest } from '../manifest.js'

export const manifest: ModuleManifest = {
  id: 'regulatory-monitor',
  title: 'Regulatory monitor',
  blurb: 'What a bill or rule requires of the campaign, by when, and at what penalty.',
  group: 'Policy and compliance',
  functions: {
    'analyze-regulation': ['staff']
  }
}
