// The narrative contagion module: its page in the navigation, and its server functions with the roles that may call each.
import type { ModuleManifest } from '../manifest.js'

export const manifest: ModuleManifest = {
  id: 'narrative-contagion',
  title: 'Narrative contagion',
  blurb: 'The stories spreading through the posts, and how fast.',
  group: 'Listen',
  functions: {
    'extract-narratives': ['staff', 'readonly'],
    'predict-virality': ['staff', 'readonly']
  }
}
