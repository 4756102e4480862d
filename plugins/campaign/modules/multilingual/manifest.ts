// The multilingual module: its page in the navigation, and its server functions with the roles that may call each.
import type { ModuleManifest } from '../manifest.js'

export const manifest: ModuleManifest = {
  id: 'multilingual',
  title: 'Multilingual',
  blurb: 'Campaign content translated, saying plainly what was and was not translated.',
  group: 'Message',
  functions: {
    'translate-content': ['staff', 'volunteer']
  }
}
