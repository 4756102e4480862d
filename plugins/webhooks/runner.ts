// The work a matched push starts, run in the background after the 202: one run at a time per target
// service; pushes that arrive meanwhile wait, and only the newest waiting one runs (older ones are
// recorded as superseded). The last 10 invocations of each webhook are kept in memory.
import type { Push } from './push.js'
import type { Registration } from './registrations.js'

export const HISTORY_LENGTH = 10

export interface Invocation {
  at: string
  sha: string
  outcome: 'ok' | 'failed' | 'superseded'
  /** What was deployed, or why it failed. */
  detail: string
  duration_ms: number
}

export interface Job {
  registration: Registration
  push: Push
}

/** Runs a job; resolves with a line saying what it did, rejects with why it failed. */
export type Work = (job: Job) => Promise<string>

export class Runner {
  readonly #work: Work
  readonly #running = new Map<string, Promise<void>>()
  readonly #waiting = new Map<string, Job>()
  readonly #history = new Map<string, Invocation[]>()

  constructor (work: Work) {
    this.#work = work
  }

  submit (job: Job): void {
    const target = job.registration.service_name
    const older = this.#waiting.get(target)
    if (older !== undefined) this.#record(older, { outcome: 'superseded', detail: `a newer push (${job.push.sha}) replaced it`, duration_ms: 0 })
    this.#waiting.set(target, job)
    if (!this.#running.has(target)) {
      const run = this.#drain(target).finally(() => { this.#running.delete(target) })
      this.#running.set(target, run)
    }
  }

  async #drain (target: string): Promise<void> {
    for (let job = this.#waiting.get(target); job !== undefined; job = this.#waiting.get(target)) {
      this.#waiting.delete(target)
      const started = performance.now()
      const outcome = await this.#work(job).then(
        detail => ({ outcome: 'ok' as const, detail }),
        (err: unknown) => ({ outcome: 'failed' as const, detail: err instanceof Error ? err.message : String(err) }))
      this.#record(job, { ...outcome, duration_ms: Math.round(performance.now() - started) })
    }
  }

  #record (job: Job, result: Omit<Invocation, 'at' | 'sha'>): void {
    const list = this.#history.get(job.registration.id) ?? []
    list.unshift({ at: new Date().toISOString(), sha: job.push.sha, ...result })
    this.#history.set(job.registration.id, list.slice(0, HISTORY_LENGTH))
  }

  /** Newest first. */
  history (id: string): Invocation[] {
    return this.#history.get(id) ?? []
  }

  forget (id: string): void {
    this.#history.delete(id)
  }

  /** Resolves when no run is in progress (the ones in progress finish, waiting ones too). */
  async idle (): Promise<void> {
    while (this.#running.size > 0) await Promise.allSettled([...this.#running.values()])
  }
}
