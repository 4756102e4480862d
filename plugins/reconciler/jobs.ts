// Scheduled jobs: each service's `[[service.jobs]]` run on its six-field cron schedule (croner reads
// it) as a one-off container (ContainerEngine.runJob), on the leader only and not for a service a stop
// request stopped. A run that comes due while the job's last one still runs is skipped and counted;
// each run's outcome (exit code, the end of its output, its times) is kept, the last RUNS_KEPT per
// job, in the control state; a failed run is an operator alert, as a failed deploy is.
import { Cron } from 'croner'
import type { Logger } from 'pino'
import type { KeyValueDatabase, OperatorAlert } from '../../kernel/index.js'
import type { JobSpec, ServiceSpec } from './spec.js'

const RUNS_KEPT = 20

export interface JobRun {
  started_at: string
  finished_at: string
  duration_ms: number
  /** null when it could not run (the engine failed): then `error` says why. */
  exit_code: number | null
  /** The end of its output (stdout and stderr, the last 4 KiB). */
  output: string
  error?: string
}

/** What is kept of a job: its last runs, oldest first, and the runs skipped because the one before still ran. */
export interface JobRecord {
  runs: JobRun[]
  skipped: number
}

export interface JobStatus {
  service: string
  job: string
  schedule: string
  command: string[]
  /** When it runs next (on the leader), ISO time; null when no time matches the schedule any more. */
  next_run: string | null
  running: boolean
  skipped: number
  last_run: JobRun | null
}

export type JobOutcome = 'succeeded' | 'failed' | 'skipped'

export interface JobDeps {
  /** The services whose jobs run now (deployed, not stopped). */
  specs(): ServiceSpec[]
  run(spec: ServiceSpec, job: JobSpec): Promise<{ exitCode: number, output: string }>
  records: KeyValueDatabase<JobRecord>
  /** Whether this node runs the jobs (the leader of a cluster; a lone server always). */
  leading(): boolean
  counted(service: string, job: string, outcome: JobOutcome): void
  alert(event: OperatorAlert): void
  log: Logger
  /** Aborted when the server stops: runs under way are recorded as interrupted, nothing is written after. */
  stopping: AbortSignal
}

/** The first time after `after` the schedule names, ms; Infinity when none. */
function nextRun (schedule: string, after: number): number {
  const cron = new Cron(schedule, { paused: true })
  const next = cron.nextRun(new Date(after))
  cron.stop()
  return next?.getTime() ?? Number.POSITIVE_INFINITY
}

const keyOf = (service: string, job: string): string => `${service}/${job}`

export class JobScheduler {
  readonly #deps: JobDeps
  /** Each job's schedule and next time due, by key. */
  readonly #due = new Map<string, { schedule: string, at: number }>()
  /** Runs under way, with when they started. */
  readonly #running = new Map<string, number>()
  #stopped = false

  constructor (deps: JobDeps) {
    this.#deps = deps
    deps.stopping.addEventListener('abort', () => { this.#interrupt() }, { once: true })
  }

  /** Start the jobs due at `now` (called every second). */
  tick (now = Date.now()): void {
    if (!this.#deps.leading() || this.#stopped) {
      this.#due.clear()
      return
    }
    const current = new Set<string>()
    for (const spec of this.#deps.specs()) {
      for (const job of spec.jobs ?? []) {
        const key = keyOf(spec.name, job.name)
        current.add(key)
        const due = this.#due.get(key)
        if (due === undefined || due.schedule !== job.schedule) {
          this.#due.set(key, { schedule: job.schedule, at: nextRun(job.schedule, now) })
          continue
        }
        if (due.at > now) continue
        due.at = nextRun(job.schedule, now)
        if (this.#running.has(key)) this.#skip(spec.name, job.name)
        else this.#start(spec, job)
      }
    }
    for (const key of [...this.#due.keys()]) if (!current.has(key)) this.#due.delete(key)
  }

  statuses (): JobStatus[] {
    return this.#deps.specs().flatMap(spec => (spec.jobs ?? []).map(job => {
      const key = keyOf(spec.name, job.name)
      const record = this.#deps.records.get(key)
      const at = this.#due.get(key)?.at ?? nextRun(job.schedule, Date.now())
      return {
        service: spec.name,
        job: job.name,
        schedule: job.schedule,
        command: job.command,
        next_run: Number.isFinite(at) ? new Date(at).toISOString() : null,
        running: this.#running.has(key),
        skipped: record?.skipped ?? 0,
        last_run: record?.runs.at(-1) ?? null
      }
    }))
  }

  /** A job's kept runs, oldest first; undefined for a job no service declares. */
  runs (service: string, job: string): JobRun[] | undefined {
    if (!this.#deps.specs().some(s => s.name === service && s.jobs?.some(j => j.name === job) === true)) return undefined
    return this.#deps.records.get(keyOf(service, job))?.runs ?? []
  }

  #skip (service: string, job: string): void {
    const key = keyOf(service, job)
    const record = this.#deps.records.get(key) ?? { runs: [], skipped: 0 }
    void this.#deps.records.put(key, { ...record, skipped: record.skipped + 1 })
    this.#deps.counted(service, job, 'skipped')
    this.#deps.log.warn({ service, job }, 'job run skipped: its last run still runs')
  }

  /** Keep a finished (or interrupted) run of the job `key`. */
  #keep (key: string, started: number, exitCode: number | null, output: string, error?: string): JobRun {
    const finished = Date.now()
    const run: JobRun = {
      started_at: new Date(started).toISOString(), finished_at: new Date(finished).toISOString(), duration_ms: finished - started,
      exit_code: exitCode, output, ...(error !== undefined && { error })
    }
    const record = this.#deps.records.get(key) ?? { runs: [], skipped: 0 }
    void this.#deps.records.put(key, { ...record, runs: [...record.runs, run].slice(-RUNS_KEPT) })
    return run
  }

  /** The server stops: the runs under way are kept as interrupted (their containers are removed now or at the next start). */
  #interrupt (): void {
    this.#stopped = true
    for (const [key, started] of this.#running) this.#keep(key, started, null, '', 'interrupted: the server stopped while it ran')
  }

  #start (spec: ServiceSpec, job: JobSpec): void {
    const key = keyOf(spec.name, job.name)
    const started = Date.now()
    this.#running.set(key, started)
    const finish = (exitCode: number | null, output: string, error?: string): void => {
      if (this.#stopped) return
      const run = this.#keep(key, started, exitCode, output, error)
      const failed = exitCode !== 0
      this.#deps.counted(spec.name, job.name, failed ? 'failed' : 'succeeded')
      this.#deps.log.info({ service: spec.name, job: job.name, exit_code: exitCode, duration_ms: run.duration_ms, ...(error !== undefined && { error }) }, 'job ran')
      if (failed) {
        this.#deps.alert({
          kind: 'job.failed',
          subject: spec.name,
          message: `job ${job.name} of ${spec.name} ${error !== undefined ? `could not run: ${error}` : `exited with ${String(exitCode)}`}`,
          at: Date.parse(run.finished_at),
          details: { job: job.name, ...(exitCode !== null && { exit_code: exitCode }), ...(error !== undefined && { error }) }
        })
      }
    }
    this.#deps.run(spec, job).then(({ exitCode, output }) => { finish(exitCode, output) }, (err: Error) => { finish(null, '', err.message) })
      .finally(() => { this.#running.delete(key) })
  }
}
