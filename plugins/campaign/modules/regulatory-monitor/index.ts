// The regulatory monitor's surface for other modules: its stored regulations. Another module imports
// this module through this file alone (docs/architecture.md, Boundaries).
export type { StoredRegulation } from './regulatory-monitor.js'
