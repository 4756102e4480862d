// Scheduled work: six-field cron expressions (croner) and fixed intervals. Jobs run only while the
// kernel runs, never overlap themselves, log their failures, and all stop on shutdown.
import { Cron } from 'croner'
import type { Logger } from 'pino'
import { messageOf } from './errors.js'
import { StorageFault } from './storage-fault.js'

const CRON_FIELDS = 'seconds minutes hours day-of-month month day-of-week'

/** Why a cron expression is unusable, or undefined when it is a valid six-field expression. */
export function cronProblem (expression: string): string | undefined {
  const fields = expression.trim().split(/\s+/).filter(f => f !== '')
  if (fields.length !== 6) return `six fields expected (${CRON_FIELDS}), got ${fields.length}`
  try {
    new Cron(expression, { paused: true }).stop()
    return undefined
  } catch (err) {
    return messageOf(err)
  }
}

interface Job {
  readonly name: string
  resume(): void
  stop(): void
}

export type JobFunction = () => void | Promise<void>

export class Scheduler {
  readonly #jobs = new Set<Job>()
  readonly #log: Logger
  #running = false
  #onFailure: (job: string) => void

  constructor (log: Logger, onFailure: (job: string) => void = () => {}) {
    this.#log = log
    this.#onFailure = onFailure
  }

  /** Run `fn` on a six-field cron schedule (`0 30 2 * * *` = 02:30:00 daily). */
  cron (name: string, expression: string, fn: JobFunction): Job {
    const problem = cronProblem(expression)
    if (problem !== undefined) throw new TypeError(`schedule "${name}": ${problem}`)
    const guarded = this.#guard(name, fn)
    const cron = new Cron(expression, { paused: true }, () => { void guarded() })
    return this.#add({ name, resume: () => cron.resume(), stop: () => cron.stop() })
  }

  /** Run `fn` every `ms` milliseconds (first run after one interval). */
  every (name: string, ms: number, fn: JobFunction): Job {
    if (!Number.isFinite(ms) || ms <= 0) throw new TypeError(`schedule "${name}": interval must be a positive number of milliseconds`)
    const guarded = this.#guard(name, fn)
    let timer: NodeJS.Timeout | undefined
    return this.#add({
      name,
      resume: () => { timer ??= setInterval(() => { void guarded() }, ms) },
      stop: () => { clearInterval(timer); timer = undefined }
    })
  }

  /** Begin running every job (and any added later). */
  start (): void {
    this.#running = true
    for (const job of this.#jobs) job.resume()
  }

  /** Stop one job for good. */
  remove (job: Job): void {
    job.stop()
    this.#jobs.delete(job)
  }

  /** Stop every job for good. */
  stop (): void {
    this.#running = false
    for (const job of this.#jobs) job.stop()
    this.#jobs.clear()
  }

  #add (job: Job): Job {
    this.#jobs.add(job)
    if (this.#running) job.resume()
    return job
  }

  /** Skip a tick while the previous run is still going; log and count failures. */
  #guard (name: string, fn: JobFunction): () => Promise<void> {
    let busy = false
    return async () => {
      if (busy) return
      busy = true
      try {
        await fn()
      } catch (err) {
        // A store refusing writes is reported once, by the health report; each refused run is only counted.
        if (err instanceof StorageFault) this.#log.debug({ job: name, reason: err.message }, 'scheduled job refused: the store takes no writes now')
        else this.#log.error({ err, job: name }, 'scheduled job failed')
        this.#onFailure(name)
      } finally {
        busy = false
      }
    }
  }
}

/** The scheduler as one plugin sees it: its jobs stop when it stops, and each run is tracked as work in flight. */
export class ScopedScheduler {
  readonly #scheduler: Scheduler
  readonly #owner: string
  readonly #jobs: Job[] = []
  readonly #track: (run: Promise<void>) => Promise<void>

  constructor (scheduler: Scheduler, owner: string, track: (run: Promise<void>) => Promise<void> = async run => { await run }) {
    this.#scheduler = scheduler
    this.#owner = owner
    this.#track = track
  }

  cron (name: string, expression: string, fn: JobFunction): void {
    this.#jobs.push(this.#scheduler.cron(`${this.#owner}.${name}`, expression, this.#tracked(fn)))
  }

  every (name: string, ms: number, fn: JobFunction): void {
    this.#jobs.push(this.#scheduler.every(`${this.#owner}.${name}`, ms, this.#tracked(fn)))
  }

  close (): void {
    for (const job of this.#jobs.splice(0)) this.#scheduler.remove(job)
  }

  #tracked (fn: JobFunction): JobFunction {
    return async () => { await this.#track((async () => { await fn() })()) }
  }
}
