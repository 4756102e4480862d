// Auto-promotion: a canary started with `auto_promote_secs` is judged by its health once that time
// has come (by the leader, on a tick): promoted when its container runs, the engine's healthcheck (if
// the spec has one) calls it healthy and its health path (if any) answers; rolled back otherwise. The
// judgement and its reason are the history entry of the promote or rollback (Nomad's auto_promote).
import type { Logger } from 'pino'
import { probe } from './probe.js'
import type { Reconciler } from './reconciler.js'
import type { CanaryState, ReconcilerState } from './state.js'

/** The wait for a canary's health path to answer when it is judged. */
const PROBE_TIMEOUT_MS = 2000

export interface Judgement {
  service: string
  promoted: boolean
  reason: string
}

/** What is wrong with the running canary, or undefined when it is healthy. */
async function problemOf (canary: CanaryState, reconciler: Reconciler): Promise<string | undefined> {
  const { spec } = canary
  const container = (await reconciler.containers()).find(c => c.service === spec.name && c.canary === true)
  if (container === undefined) return 'its container is gone'
  if (!container.running) return `its container is ${container.state}`
  if (container.health !== undefined && container.health !== 'healthy') return `the engine's healthcheck says ${container.health}`
  if (spec.health === undefined) return undefined
  if (container.address === undefined) return 'its port is not published'
  return await probe(container.address, spec.health, PROBE_TIMEOUT_MS) ? undefined : `its health check ${spec.health} does not pass`
}

/** Promote or roll back each canary whose judgement is due at `now`; what was decided. */
export async function judgeCanaries (state: ReconcilerState, reconciler: Reconciler, log: Logger, now = Date.now()): Promise<Judgement[]> {
  const judged: Judgement[] = []
  for (const canary of state.canaries()) {
    if (canary.judge_at === undefined || Date.parse(canary.judge_at) > now) continue
    const service = canary.spec.name
    const secs = Math.round((Date.parse(canary.judge_at) - Date.parse(canary.started_at)) / 1000)
    const problem = await problemOf(canary, reconciler)
    const reason = problem === undefined ? `auto-promotion: healthy after ${secs} s` : `auto-promotion: ${problem} after ${secs} s`
    try {
      if (problem === undefined) await reconciler.promote(service, undefined, reason)
      else await reconciler.rollback(service, undefined, reason)
    } catch (err) {
      // An operator promoted or rolled it back meanwhile, or the service is gone: nothing left to judge.
      if (state.canary(service)?.hash === canary.hash) log.warn({ err, service }, 'the canary could not be judged; tried again at the next tick')
      continue
    }
    log.info({ service, promoted: problem === undefined, reason }, problem === undefined ? 'canary promoted' : 'canary rolled back')
    judged.push({ service, promoted: problem === undefined, reason })
  }
  return judged
}
