// The shared functions' surface for modules: the record-feedback counts per module (the admin
// panel). Another module imports this module through this file alone (docs/architecture.md,
// Boundaries).
export type { ModuleFeedback } from './feedback.js'
