// The sending module: its page in the navigation, and its server functions with the roles that may call each.
import type { ModuleManifest } from '../manifest.js'

export const manifest: ModuleManifest = {
  id: 'sending',
  title: 'Sending',
  blurb: 'E-mail and SMS to people who agreed to them, with unsubscribe, suppression, replies to texts and a send log.',
  group: 'Message',
  functions: {
    'send-email': ['staff'],
    'send-sms': ['staff'],
    'preview-send': ['staff'],
    'list-send-log': ['staff', 'readonly'],
    'list-suppressions': ['staff'],
    'list-sms-replies': ['staff'],
    'add-suppression': ['staff'],
    'remove-suppression': []
  }
}
