// The campaign UI's published module kit: the one file of the core that a module's page (page.tsx)
// imports, browser code only (the server's module kit is plugins/campaign/module-kit.ts, which a page
// never reaches, so no server code enters the browser bundle). It is the contract for module authors'
// pages: the call hook and its formatting, the shared components and charts, the choices a page
// shares with the server's schema. Nothing in the core imports this file.
export { COUNTER_TONES } from '../../grounding/counter-tones.js'
export { type AuthInfo, dollars, electionLabel, useCall } from './api.js'
export { Bars } from './bars.js'
export { Card, ErrorLine, Field, formValue, words } from './ui.js'
export { regularSlots, STEP_SECONDS } from './series.js'
export { Feedback } from './feedback.js'
export { parseSpeakers, rangeArgs, RangeFields, speakerLines } from './speakers.js'
export { factionColor, FactionGraph, type GraphEdge, type GraphNode } from './faction-graph.js'
export { TimeChart } from './charts.js'
