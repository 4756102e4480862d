// The knowledge base module: its page in the navigation, and its server functions with the roles that may call each.
import type { ModuleManifest } from '../manifest.js'

export const manifest: ModuleManifest = {
  id: 'knowledge-base',
  title: 'Knowledge base',
  blurb: 'Search campaign documents and cite the passages.',
  group: 'Organise',
  functions: {
    'kb-ingest': ['staff'],
    'kb-query': ['staff', 'volunteer', 'readonly']
  }
}
