// The local issues module's surface for other modules: the issues a set of texts raises. Another
// module imports this module through this file alone (docs/architecture.md, Boundaries).
export { analyzeLocalIssues, type IssueReport, type LocalText } from './local-issues.js'
