// The sending module's surface for other modules: the messenger and SMS replies services and their
// record views. Another module imports this module through this file alone (docs/architecture.md,
// Boundaries).
export { SMS_REPLY_VIEW, type SmsReplies } from './sms-replies.js'
export { type Messenger, SEND_LOG_VIEW } from './messenger.js'
