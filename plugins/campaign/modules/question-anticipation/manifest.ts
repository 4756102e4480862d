// The question anticipation module: its page in the navigation, and its server functions with the roles that may call each.
import type { ModuleManifest } from '../manifest.js'

export const manifest: ModuleManifest = {
  id: 'question-anticipation',
  title: 'Question anticipation',
  blurb: 'The questions an event will bring, why, suggested answers, and a preparation checklist.',
  group: 'Message',
  functions: {
    'anticipate-questions': ['staff', 'readonly'],
    'preparation-checklist': ['staff']
  }
}
