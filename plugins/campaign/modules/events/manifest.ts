// The events module: its page in the navigation, and its server functions with the roles that may call each.
import type { ModuleManifest } from '../manifest.js'

export const manifest: ModuleManifest = {
  id: 'events',
  title: 'Events and shifts',
  blurb: 'Events with shifts to sign up for, the waitlist, check-in and reminders.',
  group: 'Organise',
  functions: {
    'save-event': ['staff'],
    'list-events': ['staff', 'volunteer', 'readonly'],
    'event-detail': ['staff', 'volunteer', 'readonly'],
    'rsvp-shift': ['staff', 'volunteer'],
    'cancel-rsvp': ['staff', 'volunteer'],
    'check-in': ['staff'],
    'shift-roster': ['staff'],
    'person-attendance': ['staff'],
    'send-shift-reminders': ['staff']
  }
}
