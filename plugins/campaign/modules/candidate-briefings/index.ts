// The candidate briefings module's surface for other modules: the articles about a subject and the
// media section. Another module imports this module through this file alone (docs/architecture.md,
// Boundaries).
export { articlesAbout } from './app-records.js'
export { mediaSection } from './briefing-book.js'
