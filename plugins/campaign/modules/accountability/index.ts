// The accountability module's surface for other modules: its commitments store and when one is
// overdue. Another module imports this module through this file alone (docs/architecture.md,
// Boundaries).
export { type Commitment, commitmentStore, isOverdue } from './accountability.js'
