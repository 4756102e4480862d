// The events module's surface for other modules: the event book service, its RSVP record view and a
// shift's summary. Another module imports this module through this file alone (docs/architecture.md,
// Boundaries).
export { type EventBook, RSVP_VIEW, summary } from './event-book.js'
