// The media monitor's surface for other modules: its stored articles and how one covers a topic.
// Another module imports this module through this file alone (docs/architecture.md, Boundaries).
export { type Tone, TOPIC_MATCH, topicRelevance } from './media-coverage.js'
export { articleStore, type StoredArticle } from './media-monitor.js'
