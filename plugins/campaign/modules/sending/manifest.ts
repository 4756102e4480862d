// The sending module: its page in the navigation, its server functions with the roles that may call each, and what each role sees of its records.
import { READERS, STAFF, type ModuleManifest } from '../manifest.js'

export const manifest = {
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
  },
  views: {
    /** A send log record: who was sent what and when; the address and the server's answer (which may name it) are staff's. */
    'send log': {
      send_id: READERS,
      channel: READERS,
      person_id: READERS,
      purpose: READERS,
      status: READERS,
      message_id: READERS,
      at: READERS,
      address: STAFF,
      response: STAFF,
      sent_by: STAFF
    },
    /** A reply to a text: the number it came from and what it says, and what it did to the sender's consent, are staff's. */
    'sms reply': {
      reply_id: STAFF,
      message_sid: STAFF,
      from: STAFF,
      to: STAFF,
      body: STAFF,
      keyword: STAFF,
      action: STAFF,
      person_id: STAFF,
      received_at: STAFF
    }
  }
} satisfies ModuleManifest
