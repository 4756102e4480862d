// The empathy simulator module: its page in the navigation, and its server functions with the roles that may call each.
import type { ModuleManifest } from '../manifest.js'

export const manifest: ModuleManifest = {
  id: 'empathy-simulator',
  title: 'Empathy simulator',
  blurb: 'How voter personas might react to a message, and what it leaves out for them.',
  group: 'Message',
  functions: {
    'simulate-reaction': ['staff', 'readonly']
  }
}
