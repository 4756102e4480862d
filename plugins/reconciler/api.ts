// The reconciler's contract with the plugins that build on it (proxy, cluster, backup, databases,
// webhooks): the service spec and its name and image rules, the containers an engine reports and the
// container-engine interface, the traffic hooks of zero-downtime deploys, the placement seam a
// cluster scheduler implements, the deploy result, its error codes, and the helpers those plugins share with it. Other
// plugins import the reconciler through this module or its index only (a lint rule says so).
export type { ContainerEngine, ContainerEvent, ContainerState, CreateRequest, EngineInfo } from './container-engine.js'
export type { RemoteContainer, RemoteOutcome, Schedule, SchedulePull, ScheduleRequest, Scheduler } from './placement.js'
export type { DeployResult, Reconciler } from './reconciler.js'
export { IMAGE, NAME, type ServiceSpec } from './spec.js'
export { parseCidr, type MiddlewareSpec } from './route-spec.js'
export { Traffic, type TrafficHooks } from './traffic.js'
export { parseMemory } from './units.js'
export { RECONCILER_CODES } from './errors.js'
export { probe } from './probe.js'
export { describeCertificate } from './certificate-text.js'
