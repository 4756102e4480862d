// The knowledge base module's surface for other modules: the service and its documents. Another module
// imports this module through this file alone (docs/architecture.md, Boundaries).
export type { KbDocument, KnowledgeBase } from './knowledge-base.js'
