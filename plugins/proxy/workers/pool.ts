// The proxy's worker threads, seen from the main thread: started once the listeners are bound (they
// bind the same ports), restarted when one dies, told of every change of the routing table, of ACME
// challenges and certificates, and asked to drain a replica (the drain ends once every thread has
// no request in flight on it). A restart in place (`berth reload`) parks them: they go on serving on
// the table they have while the new kernel starts, whose proxy takes them over when its settings are
// the same (else it starts new ones, then lets the parked ones finish and exit).
import { extname } from 'node:path'
import { Worker } from 'node:worker_threads'
import type { Logger } from 'pino'
import type { CountsReport } from '../metrics.js'
import type { FromWorker, ToWorker, WorkerInit } from './protocol.js'

/** What the proxy of the running kernel gives its threads and takes from them. */
export interface PoolHooks {
  /** The routing table as the threads get it. */
  table(): Extract<ToWorker, { type: 'table' }>
  challenges(): Array<[string, string]>
  /** The certificate a thread serves for `name`. */
  pair(name: string): Promise<{ cert: string, key: string }>
  failed(upstream: string, why: string): void
  counted(worker: number, report: CountsReport | undefined, connections: number): void
  restarted(worker: number): void
  log: Logger
}

/** A thread that dies is started again after this long, doubled at each death in a row, at most MAX_BACKOFF_MS. */
const FIRST_BACKOFF_MS = 100
const MAX_BACKOFF_MS = 5000
/** How long a thread has to bind its ports. */
const LISTEN_TIMEOUT_MS = 30_000
/** Parked threads no kernel takes over within this long finish and exit. */
const PARKED_MS = 60_000
/** The table is compared with what the threads have this often, whatever told of a change. */
const SYNC_MS = 1000

const ENTRY = new URL(`./thread${extname(new URL(import.meta.url).pathname)}`, import.meta.url)

interface Thread {
  worker: Worker
  listening: Promise<void>
}

/** Threads parked by a restart in place, for the next kernel's proxy. */
let parked: { key: string, pool: WorkerPool, timer: NodeJS.Timeout } | undefined

export class WorkerPool {
  readonly #init: Omit<WorkerInit, 'index'>
  readonly #threads: Array<Thread | undefined>
  #hooks: PoolHooks | undefined
  #closing = false
  #lastTable = ''
  #deaths = 0
  #seq = 0
  readonly #drains = new Map<number, { left: Set<number>, done: () => void }>()
  /** Certificate requests that came while parked, answered once taken over. */
  readonly #asked: Array<{ index: number, id: number, name: string }> = []
  readonly #sync: NodeJS.Timeout

  private constructor (init: Omit<WorkerInit, 'index'>, threads: number) {
    this.#init = init
    this.#threads = Array.from({ length: threads }, () => undefined)
    this.#sync = setInterval(() => { this.sync() }, SYNC_MS).unref()
  }

  /**
   * The threads for `init` (`threads` of them, numbered from 1): the parked ones when their settings
   * are these, else new ones (parked ones with other settings finish once the new ones listen).
   */
  static async start (init: Omit<WorkerInit, 'index'>, threads: number, hooks: PoolHooks): Promise<WorkerPool> {
    const key = JSON.stringify({ init, threads })
    const before = parked
    parked = undefined
    if (before !== undefined) clearTimeout(before.timer)
    if (before?.key === key) {
      before.pool.#attach(hooks)
      return before.pool
    }
    const pool = new WorkerPool(init, threads)
    pool.#attach(hooks)
    try {
      await Promise.all(pool.#threads.map(async (_thread, i) => { await pool.#spawn(i + 1).listening }))
    } catch (err) {
      await pool.close(0)
      throw err
    }
    void before?.pool.close(init.settings.client_idle_timeout_secs * 1000)
    return pool
  }

  #attach (hooks: PoolHooks): void {
    this.#hooks = hooks
    for (const thread of this.#threads) thread?.worker.ref()
    this.#lastTable = ''
    this.sync()
    this.challengesChanged()
    // Certificates may have been renewed while parked.
    this.#post({ type: 'certificates' })
    for (const { index, id, name } of this.#asked.splice(0)) this.#answerCertificate(index, id, name)
  }

  /** Send the table to the threads when it differs from the one they have. */
  sync (): void {
    if (this.#hooks === undefined) return
    const table = this.#hooks.table()
    const text = JSON.stringify(table)
    if (text === this.#lastTable) return
    this.#lastTable = text
    this.#post(table)
  }

  challengesChanged (): void {
    if (this.#hooks !== undefined) this.#post({ type: 'challenges', tokens: this.#hooks.challenges() })
  }

  certificatesChanged (): void {
    this.#post({ type: 'certificates' })
    this.sync()
  }

  /** Resolves once no thread has a request in flight on replica `upstream` (or `timeoutMs` passed); the table saying it drains is sent first. */
  async drain (upstream: string, timeoutMs: number): Promise<void> {
    this.sync()
    const seq = this.#seq++
    const left = new Set(this.#threads.flatMap((thread, i) => thread === undefined ? [] : [i + 1]))
    if (left.size === 0) return
    await new Promise<void>(resolve => {
      const timer = setTimeout(done, timeoutMs + 1000)
      function done (): void { clearTimeout(timer); resolve() }
      this.#drains.set(seq, { left, done })
      this.#post({ type: 'drain', upstream, seq, timeoutMs })
    })
    this.#drains.delete(seq)
  }

  /** A restart in place: the threads serve on while the next kernel starts, and are its proxy's if it takes them within PARKED_MS. */
  park (): void {
    this.#hooks = undefined
    for (const thread of this.#threads) thread?.worker.unref()
    const key = JSON.stringify({ init: this.#init, threads: this.#threads.length })
    parked = { key, pool: this, timer: setTimeout(() => { parked = undefined; void this.close(0) }, PARKED_MS).unref() }
  }

  /** Stop every thread: they stop accepting, and requests in flight have `graceMs` to finish. */
  async close (graceMs: number): Promise<void> {
    this.#closing = true
    clearInterval(this.#sync)
    const exits = this.#threads.map(async thread => {
      if (thread === undefined) return
      await new Promise<void>(resolve => {
        thread.worker.once('exit', () => { resolve() })
        thread.worker.postMessage({ type: 'close', graceMs } satisfies ToWorker)
      })
    })
    for (const drain of this.#drains.values()) drain.done()
    await Promise.all(exits)
  }

  /** Stop thread `index` at once, as a crash would: it is started again like any that dies. */
  async kill (index: number): Promise<void> {
    await this.#threads[index - 1]?.worker.terminate()
  }

  #post (message: ToWorker): void {
    for (const thread of this.#threads) thread?.worker.postMessage(message)
  }

  #spawn (index: number): Thread {
    const worker = new Worker(ENTRY, { workerData: { ...this.#init, index } satisfies WorkerInit })
    let listened: () => void = () => {}
    let failed: (err: Error) => void = () => {}
    const listening = new Promise<void>((resolve, reject) => {
      listened = resolve
      failed = reject
      setTimeout(() => { reject(new Error(`proxy worker ${index} did not bind its ports within ${LISTEN_TIMEOUT_MS / 1000} s`)) }, LISTEN_TIMEOUT_MS).unref()
    })
    listening.catch(() => {})
    const thread = { worker, listening }
    this.#threads[index - 1] = thread
    if (this.#hooks === undefined) {
      worker.unref()
    } else {
      worker.postMessage(this.#hooks.table() satisfies ToWorker)
      worker.postMessage({ type: 'challenges', tokens: this.#hooks.challenges() } satisfies ToWorker)
    }
    worker.on('message', (message: FromWorker) => {
      if (message.type === 'listening') {
        this.#deaths = 0
        listened()
      } else {
        this.#receive(index, message)
      }
    })
    worker.on('error', err => { failed(err); this.#hooks?.log.error({ worker: index, err: err.message }, 'proxy worker failed') })
    worker.on('exit', code => {
      failed(new Error(`proxy worker ${index} exited (${code})`))
      if (this.#threads[index - 1] === thread) this.#threads[index - 1] = undefined
      for (const [seq, drain] of this.#drains) if (drain.left.delete(index) && drain.left.size === 0) this.#drained(seq)
      if (this.#closing) return
      const delay = Math.min(FIRST_BACKOFF_MS * 2 ** this.#deaths++, MAX_BACKOFF_MS)
      this.#hooks?.log.warn({ worker: index, code, restartInMs: delay }, 'proxy worker exited: starting it again')
      this.#hooks?.restarted(index)
      setTimeout(() => { if (!this.#closing) this.#spawn(index) }, delay).unref()
    })
    return thread
  }

  #receive (index: number, message: Exclude<FromWorker, { type: 'listening' }>): void {
    switch (message.type) {
      case 'certificate': this.#answerCertificate(index, message.id, message.name); break
      case 'failed': this.#hooks?.failed(message.upstream, message.why); break
      case 'counts': this.#hooks?.counted(index, message.report, message.connections); break
      case 'drained': {
        const drain = this.#drains.get(message.seq)
        if (drain !== undefined && drain.left.delete(index) && drain.left.size === 0) this.#drained(message.seq)
        break
      }
    }
  }

  #drained (seq: number): void {
    this.#drains.get(seq)?.done()
    this.#drains.delete(seq)
  }

  #answerCertificate (index: number, id: number, name: string): void {
    const hooks = this.#hooks
    if (hooks === undefined) {
      this.#asked.push({ index, id, name })
      return
    }
    const reply = (message: ToWorker): void => { this.#threads[index - 1]?.worker.postMessage(message) }
    hooks.pair(name).then(pair => { reply({ type: 'certificate', id, pair }) }, (err: Error) => { reply({ type: 'certificate', id, error: err.message }) })
  }
}
