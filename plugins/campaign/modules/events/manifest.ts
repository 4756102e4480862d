// The events module: its page in the navigation, its server functions with the roles that may call each, and what each role sees of its records.
import { STAFF, type ModuleManifest } from '../manifest.js'

export const manifest = {
  id: 'events',
  title: 'Events and shifts',
  blurb: 'Events with shifts to sign up for, public event pages, public forms and petitions, the waitlist, check-in and reminders.',
  group: 'Organise',
  functions: {
    'save-event': ['staff'],
    'publish-event': ['staff'],
    'list-events': ['staff', 'volunteer', 'readonly'],
    'event-detail': ['staff', 'volunteer', 'readonly'],
    'rsvp-shift': ['staff', 'volunteer'],
    'cancel-rsvp': ['staff', 'volunteer'],
    'check-in': ['staff'],
    'shift-roster': ['staff'],
    'person-attendance': ['staff'],
    'send-shift-reminders': ['staff'],
    'save-form': ['staff'],
    'list-forms': ['staff', 'readonly'],
    'form-signatures': ['staff'],
    'public-page-stats': ['staff', 'readonly']
  },
  views: {
    /** A person on a shift's roster: who they are, whether they came, their record of coming. */
    rsvp: {
      person_id: STAFF,
      name: STAFF,
      email: STAFF,
      state: STAFF,
      position: STAFF,
      rsvp_at: STAFF,
      checked_in_at: STAFF,
      reminded_at: STAFF,
      attended: STAFF,
      no_shows: STAFF
    },
    attendance: {
      person_id: STAFF,
      name: STAFF,
      attended: STAFF,
      no_shows: STAFF,
      upcoming: STAFF
    }
  }
} satisfies ModuleManifest
