// The coalition detector module: its page in the navigation, and its server functions with the roles that may call each.
import type { ModuleManifest } from '../manifest.js'

export const manifest: ModuleManifest = {
  id: 'coalition-detector',
  title: 'Coalition detector',
  blurb: 'Where member groups of the coalition disagree, topic by topic, with quotes.',
  group: 'Coalition',
  functions: {
    'detect-tensions': ['staff', 'readonly']
  }
}
