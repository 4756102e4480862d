// The campaign copy module: its page in the navigation, and its server functions with the roles that may call each.
import type { ModuleManifest } from '../manifest.js'

export const manifest: ModuleManifest = {
  id: 'campaign-copy',
  title: 'Campaign copy',
  blurb: 'Texts, posts, emails, flyers and speeches written from the knowledge base, cited.',
  group: 'Message',
  functions: {
    'generate-copy': ['staff'],
    'list-copy-history': ['staff', 'readonly']
  }
}
