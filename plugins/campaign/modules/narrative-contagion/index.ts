// The narrative contagion module's surface for other modules: the narratives of a set of posts.
// Another module imports this module through this file alone (docs/architecture.md, Boundaries).
export { carries, extractNarratives } from './narrative-contagion.js'
