// The media monitor module: its page in the navigation, and its server functions with the roles that may call each.
import type { ModuleManifest } from '../manifest.js'

export const manifest: ModuleManifest = {
  id: 'media-monitor',
  title: 'Media monitor',
  blurb: 'Articles analysed, and how outlets cover the same story.',
  group: 'Listen',
  functions: {
    'analyze-article': ['staff'],
    'compare-coverage': ['staff', 'readonly']
  }
}
