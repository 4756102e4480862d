// The people module's surface for other modules: the directory service, its person record view and
// list filters. Another module imports this module through this file alone (docs/architecture.md,
// Boundaries).
export { type Channel, normalEmail, normalPhone, type PeopleDirectory, type Person } from './directory.js'
export { filterAs, type ListFilter, matchesFilter, PERSON_VIEW } from './filter.js'
