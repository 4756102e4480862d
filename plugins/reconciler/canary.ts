// Canaries and rollbacks, the rules apart from the engine: the `canary` field of a deploy request (its
// weight, and when it is judged by its health), what
// a canary may change beside the replicas it runs with, its view in answers, and the version a
// rollback returns to (the spec deployed before the current one, from the deploy history).
import { BadRequest, Conflict } from '../../kernel/index.js'
import type { CanaryState, HistoryEntry, StoredService } from './state.js'
import type { ServiceSpec } from './spec.js'
import { RECONCILER_CODES } from './errors.js'

/** Percent of requests a canary gets when the deploy names no weight. */
export const DEFAULT_CANARY_WEIGHT = 10

/** A canary as answers and the status show it. */
export interface CanaryView {
  image: string
  hash: string
  weight: number
  started_at: string
  by?: string
  /** When it is judged by its health: promoted if healthy then, else rolled back. */
  judge_at?: string
}

export function canaryView (canary: CanaryState): CanaryView {
  return {
    image: canary.spec.image, hash: canary.hash, weight: canary.weight, started_at: canary.started_at,
    ...(canary.by !== undefined && { by: canary.by }), ...(canary.judge_at !== undefined && { judge_at: canary.judge_at })
  }
}

/** The longest a canary may run before it is judged (a week). */
const MAX_JUDGE_SECS = 7 * 86_400

/** What a deploy request's `canary` field asks for: its share of requests, and seconds until it is judged by its health (none: an operator decides). */
export interface CanaryRequest {
  weight: number
  autoPromoteSecs?: number
}

/** A percent of requests for a canary: an integer from 1 to 99. */
export function checkWeight (value: unknown, field: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > 99) {
    throw new BadRequest(`${field} must be an integer from 1 to 99 (percent of requests), got ${JSON.stringify(value)}`)
  }
  return value
}

/**
 * Take the `canary` field out of a deploy request body: `{"canary": {"weight": 30, "auto_promote_secs":
 * 300}}` (both optional). Returns what it asks for (undefined when the body has no canary) and the
 * body without it.
 */
export function takeCanary (body: unknown): { canary?: CanaryRequest, rest: unknown } {
  if (typeof body !== 'object' || body === null || Array.isArray(body) || !('canary' in body)) return { rest: body }
  const { canary, ...rest } = body as Record<string, unknown>
  if (typeof canary !== 'object' || canary === null || Array.isArray(canary)) throw new BadRequest(`canary must be an object such as {"weight": 10}, got ${JSON.stringify(canary)}`)
  const unknown = Object.keys(canary).filter(key => key !== 'weight' && key !== 'auto_promote_secs')
  if (unknown.length > 0) throw new BadRequest(`canary.${unknown[0]} is not a known field (canary has weight and auto_promote_secs)`)
  const { weight, auto_promote_secs: secs } = canary as { weight?: unknown, auto_promote_secs?: unknown }
  if (secs !== undefined && (typeof secs !== 'number' || !Number.isInteger(secs) || secs < 1 || secs > MAX_JUDGE_SECS)) {
    throw new BadRequest(`canary.auto_promote_secs must be an integer from 1 to ${MAX_JUDGE_SECS} (seconds before the canary is judged by its health), got ${JSON.stringify(secs)}`)
  }
  return { canary: { weight: weight === undefined ? DEFAULT_CANARY_WEIGHT : checkWeight(weight, 'canary.weight'), ...(secs !== undefined && { autoPromoteSecs: secs }) }, rest }
}

/** Refuse a canary that cannot run beside the deployed service: another one runs, nothing differs, or its route would. */
export function checkCanary (stable: StoredService, running: CanaryState | undefined, candidate: { spec: ServiceSpec, hash: string, stableHash: string }): void {
  const name = stable.spec.name
  if (running !== undefined) throw new Conflict(`a canary of "${name}" is running (${running.spec.image}); promote it or roll it back first, or deploy the same canary with another weight`, { code: RECONCILER_CODES.CANARY_RUNNING })
  if (candidate.hash === candidate.stableHash) throw new Conflict(`the canary of "${name}" would run the same containers as its replicas; change the spec first`)
  for (const field of ['domain', 'internal', 'project'] as const) {
    if (candidate.spec[field] !== stable.spec[field]) throw new BadRequest(`a canary of "${name}" must keep the service's ${field} (${JSON.stringify(stable.spec[field])}), got ${JSON.stringify(candidate.spec[field])}`)
  }
}

/**
 * The spec a rollback returns to: in the history, newest first, the last spec of the service that
 * deployed without error and whose container hash differs from `currentHash`. Canary deploys do not
 * count (their spec never ran on the replicas). Undefined when there is none.
 */
export function previousVersion (history: readonly HistoryEntry[], name: string, currentHash: string): { spec: ServiceSpec, hash: string } | undefined {
  for (const entry of [...history].reverse()) {
    if (entry.trigger === 'canary' || !entry.deployed.includes(name)) continue
    const recorded = entry.services.find(s => s.name === name)
    if (recorded?.spec !== undefined && recorded.hash !== currentHash) return { spec: recorded.spec, hash: recorded.hash }
  }
  return undefined
}
