// The faction mapper's surface for other modules: the consensus between factions. Another module
// imports this module through this file alone (docs/architecture.md, Boundaries).
export { findConsensus } from './faction-mapper.js'
