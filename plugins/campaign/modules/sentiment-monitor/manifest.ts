// The sentiment monitor module: its page in the navigation, and its server functions with the roles that may call each.
import type { ModuleManifest } from '../manifest.js'

export const manifest: ModuleManifest = {
  id: 'sentiment-monitor',
  title: 'Sentiment monitor',
  blurb: 'Sentiment of the post stream over time, by source, and its spikes.',
  group: 'Listen',
  functions: {
    'ingest-posts': ['staff'],
    'sentiment-summary': ['staff', 'readonly'],
    'detect-spikes': ['staff', 'readonly']
  }
}
