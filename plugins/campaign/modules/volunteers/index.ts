// The volunteers module's surface for other modules: a volunteer and its record view. Another module
// imports this module through this file alone (docs/architecture.md, Boundaries).
export { type Volunteer, VOLUNTEER_VIEW } from './volunteers.js'
