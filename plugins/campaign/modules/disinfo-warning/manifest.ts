// The disinfo warning module: its page in the navigation, and its server functions with the roles that may call each.
import type { ModuleManifest } from '../manifest.js'

export const manifest: ModuleManifest = {
  id: 'disinfo-warning',
  title: 'Disinfo warning',
  blurb: 'How likely a text is disinformation, and a cited counter-message.',
  group: 'Listen',
  functions: {
    'analyze-disinfo': ['staff'],
    'counter-messaging': ['staff']
  }
}
