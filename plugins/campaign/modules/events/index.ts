// The events module's surface for other modules: the event book service, its RSVP record view, a
// shift's summary and the public pages' figures. Another module imports this module through this file alone (docs/architecture.md,
// Boundaries).
export { type EventBook, RSVP_VIEW, summary } from './event-book.js'
export type { PageStats } from './page-views.js'
