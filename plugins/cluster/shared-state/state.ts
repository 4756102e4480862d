// The control plane's state shared by several masters in etcd, under `<prefix>state/<plugin>/<database>/<key>`,
// with a local mirror every read is served from (mirror.ts). Opening loads the whole prefix in
// pages at one revision, then a watch from the next revision brings other masters' writes; this
// master's own writes enter the mirror when etcd acknowledges them (a quorum commit). Reads never wait
// for etcd, so they may lag another master's latest write by the watch's delay. While etcd cannot be
// reached or has no quorum, writes reject with SharedStateUnavailable (503) and reads go on; the watch
// resumes by itself when etcd returns (loading everything again if the revisions it missed were
// compacted). Values are standard CBOR (cbor-x, already a dependency, its record extension off): each
// value describes itself, so any master or CBOR tool decodes it alone. Plugins' views: view.ts.
import { Encoder } from 'cbor-x'
import {
  CompareResult, CompareTarget, EtcdAuthenticationFailedError, EtcdPermissionDeniedError, GRPCInvalidArgumentError,
  type Etcd3, type ICompare, type IKeyValue, type IRequestOp, type IWatchResponse, type Watcher
} from 'etcd3'
import { BerthError, Unavailable, messageOf } from '../../../kernel/index.js'
import { MirrorTable, type PendingValue } from './mirror.js'
import { CLUSTER_CODES } from '../errors.js'

const codec = new Encoder({ useRecords: false })

export const encodeValue = (value: unknown): Buffer => Buffer.from(codec.encode(value))
export const decodeValue = (bytes: Buffer): unknown => codec.decode(bytes)

/** etcd's default limit of operations in one transaction (`--max-txn-ops`). */
export const ETCD_MAX_TXN_OPS = 128

/** etcd cannot take writes now (unreachable, no quorum, or no answer in time). */
export class SharedStateUnavailable extends Unavailable {
  constructor (message: string, options?: ErrorOptions) {
    super(message, { ...options, code: CLUSTER_CODES.SHARED_STATE_UNAVAILABLE })
  }
}

/** A fenced write was refused: this master does not lead, or etcd says its term has ended. Nothing was applied. */
export class FencedWriteRefused extends Unavailable {
  constructor (message: string) {
    super(message, { code: CLUSTER_CODES.LEADERSHIP_LOST })
  }
}

/** A transaction with more writes than etcd takes in one: refused whole, nothing sent. */
export class TransactionTooLarge extends BerthError {
  constructor (message: string) {
    super(message, CLUSTER_CODES.SHARED_TRANSACTION_TOO_LARGE.status, CLUSTER_CODES.SHARED_TRANSACTION_TOO_LARGE.code)
  }
}

/**
 * The authority a write carries: it applies only while `key` still has this create revision and
 * lease (a LeaderTerm of the cluster plugin's leadership is one).
 */
export interface WriteFence {
  key: string
  createRevision: string
  lease: string
}

/** One write: the mirror's table (`<plugin>/<database>`), the key in it, its etcd key, the encoded value or null to remove. */
export interface Write {
  table: string
  key: string
  etcdKey: string
  value: PendingValue
}

export interface SharedStateOptions {
  client: Etcd3
  /** The cluster's prefix, ending in '/'; the state lives under `<prefix>state/`. */
  prefix: string
  /** A write (or a page of the load) rejects with SharedStateUnavailable when etcd has not committed it by then. */
  timeoutMs?: number
  /**
   * Deadline of each attempt within `timeoutMs`: one stuck while etcd elects a leader of its own (a
   * member lost) gives way to the next, on another member.
   */
  attemptMs?: number
  /** Wait between attempts to resume the watch. */
  retryMs?: number
  /** Keys a page of the initial load holds. */
  pageSize?: number
  /** Most writes a transaction may hold (etcd's `--max-txn-ops`). */
  maxTxnOps?: number
}

const fenceCompares = (fence: WriteFence): ICompare[] => [
  { key: Buffer.from(fence.key), target: CompareTarget.Create, result: CompareResult.Equal, create_revision: fence.createRevision },
  { key: Buffer.from(fence.key), target: CompareTarget.Lease, result: CompareResult.Equal, lease: fence.lease }
]

const operationOf = ({ etcdKey, value }: Write): IRequestOp => value === null
  ? { request_delete_range: { key: Buffer.from(etcdKey) } }
  : { request_put: { key: Buffer.from(etcdKey), value } }

/** A failed call as the caller should see it: errors of the request itself as they are, the rest as etcd being unavailable. */
function failureOf (err: unknown, doing: string): Error {
  if (err instanceof GRPCInvalidArgumentError || err instanceof EtcdPermissionDeniedError || err instanceof EtcdAuthenticationFailedError) return err
  return new SharedStateUnavailable(`the shared state in etcd cannot be reached to ${doing} (${messageOf(err)}); reads answer from this master's copy, and writes work again once etcd has a quorum`, { cause: err })
}

/**
 * Apply a change of `revision` to the table of `tables` it belongs to. `unseen`: an acknowledged write
 * of this master the watch has not shown yet (a removal is then remembered, so that older changes the
 * watch brings cannot undo it).
 */
function applyTo (tables: Map<string, MirrorTable>, table: string, key: string, value: PendingValue, revision: number, unseen: boolean): void {
  let mirror = tables.get(table)
  if (mirror === undefined) {
    if (value === null) return
    mirror = new MirrorTable()
    tables.set(table, mirror)
  }
  if (value === null) mirror.remove(key, revision, unseen)
  else mirror.put(key, value, revision)
}

/** Pause between attempts, so that refusals at once (every member's circuit open) do not spin. */
const ATTEMPT_PAUSE_MS = 100

/** The key after every key starting with `prefix` (which ends in '/'). */
const rangeEndOf = (prefix: string): Buffer => Buffer.from(`${prefix.slice(0, -1)}0`)

export class SharedState {
  readonly #client: Etcd3
  readonly #root: string
  readonly #timeoutMs: number
  readonly #attemptMs: number
  readonly #retryMs: number
  readonly #pageSize: number
  readonly #maxTxnOps: number
  #tables = new Map<string, MirrorTable>()
  /** The mirror being loaded again, which this master's acknowledged writes enter too. */
  #loading: Map<string, MirrorTable> | undefined
  /** Every change up to this revision is in the mirror. */
  #revision = 0
  #watcher: Watcher | undefined
  #retry: NodeJS.Timeout | undefined
  #reloadNeeded = false
  #closed = false

  private constructor (options: SharedStateOptions) {
    this.#client = options.client
    this.#root = `${options.prefix}state/`
    this.#timeoutMs = options.timeoutMs ?? 5000
    this.#attemptMs = options.attemptMs ?? 1000
    this.#retryMs = options.retryMs ?? 500
    this.#pageSize = options.pageSize ?? 256
    this.#maxTxnOps = options.maxTxnOps ?? ETCD_MAX_TXN_OPS
  }

  /** Load the state under `<prefix>state/` and follow it; rejects with SharedStateUnavailable when etcd cannot answer. */
  static async open (options: SharedStateOptions): Promise<SharedState> {
    const state = new SharedState(options)
    await state.#load()
    state.#watch()
    return state
  }

  /** The etcd key of `key` in `table`. */
  etcdKey (table: string, key: string): string {
    return `${this.#root}${table}/${key}`
  }

  table (name: string): MirrorTable | undefined {
    return this.#tables.get(name)
  }

  /**
   * Apply `writes` (at most one per key) in one etcd transaction, fenced when `fence` is given; resolves
   * with whether each write changed anything (a removal of a missing key did not) once committed.
   */
  async commit (writes: readonly Write[], fence?: () => WriteFence | undefined): Promise<boolean[]> {
    if (this.#closed) throw new Error('the shared state is closed')
    if (writes.length === 0) return []
    if (writes.length > this.#maxTxnOps) {
      throw new TransactionTooLarge(`a transaction of ${writes.length} writes exceeds the ${this.#maxTxnOps} etcd applies at once; nothing was written (split it where atomicity is not needed)`)
    }
    const term = fence?.()
    if (fence !== undefined && term === undefined) throw new FencedWriteRefused('this master does not lead: the write was not sent')
    const request = { compare: term === undefined ? [] : fenceCompares(term), success: writes.map(operationOf), failure: [] }
    // A linearizable read first: it needs etcd's quorum, so without one the write is never proposed
    // (a proposal a member kept could still be committed once the quorum returns, after its refusal).
    const probe = { key: Buffer.from(this.#root), count_only: true }
    let proposed = false
    const answer = await this.#call('write', async options => {
      await this.#client.kv.range(probe, options)
      proposed = true
      return await this.#client.kv.txn(request, options)
    }).catch((err: unknown) => {
      if (!(err instanceof SharedStateUnavailable)) throw err
      throw new SharedStateUnavailable(proposed
        ? `etcd did not confirm the write in time (${messageOf(err.cause)}): it was sent, and may still be applied once etcd commits it; read before trying again`
        : `${err.message}; nothing was written`, { cause: err.cause })
    })
    if (!answer.succeeded) throw new FencedWriteRefused('etcd refused the write: the leadership it was made under has ended (its key expired or changed hands); nothing was applied')
    const revision = Number(answer.header.revision)
    // Once the watch has passed this revision, the mirror has the write and whatever followed it.
    const mirrors = [revision > this.#revision ? this.#tables : undefined, this.#loading]
    for (const mirror of mirrors) if (mirror !== undefined) for (const write of writes) applyTo(mirror, write.table, write.key, write.value, revision, true)
    return writes.map((write, i) => write.value !== null || Number(answer.responses[i].response_delete_range.deleted) > 0)
  }

  /** Stop following etcd. The client stays open: it belongs to the caller. */
  close (): void {
    this.#closed = true
    clearTimeout(this.#retry)
    const watcher = this.#watcher
    this.#watcher = undefined
    void watcher?.cancel().catch(() => {})
  }

  /**
   * Make a call to etcd, again while etcd is unavailable, until `timeoutMs` has passed. Each of this
   * store's writes sets or removes whole keys, so one applied by an attempt that timed out is applied
   * again harmlessly (a fenced one is refused, and reported as such, only when its term has ended).
   */
  async #call<T> (doing: string, call: (options: { deadline: number }) => Promise<T>): Promise<T> {
    const giveUpAt = Date.now() + this.#timeoutMs
    for (;;) {
      try {
        return await call({ deadline: Math.min(giveUpAt, Date.now() + this.#attemptMs) })
      } catch (err) {
        const failure = failureOf(err, doing)
        if (!(failure instanceof SharedStateUnavailable) || this.#closed || Date.now() + ATTEMPT_PAUSE_MS >= giveUpAt) throw failure
        await new Promise(resolve => setTimeout(resolve, ATTEMPT_PAUSE_MS))
      }
    }
  }

  /** The table and key of an etcd key under the root, or undefined for one that is not `<plugin>/<database>/<key>`. */
  #locate (kv: IKeyValue): [string, string] | undefined {
    const name = kv.key.toString().slice(this.#root.length)
    const split = name.indexOf('/', name.indexOf('/') + 1)
    return split <= 0 ? undefined : [name.slice(0, split), name.slice(split + 1)]
  }

  /** Read every key under the root, in pages at one revision, into a new mirror (the old one serves reads meanwhile). */
  async #load (): Promise<void> {
    const tables = new Map<string, MirrorTable>()
    this.#loading = tables
    const end = rangeEndOf(this.#root)
    let from = Buffer.from(this.#root)
    let revision: string | undefined
    try {
      for (;;) {
        const request = { key: from, range_end: end, limit: this.#pageSize, revision }
        const page = await this.#call('load it', async options => await this.#client.kv.range(request, options))
        revision ??= page.header.revision
        for (const kv of page.kvs) {
          const place = this.#locate(kv)
          if (place !== undefined) applyTo(tables, ...place, kv.value, Number(kv.mod_revision), false)
        }
        if (!page.more || page.kvs.length === 0) break
        from = Buffer.concat([page.kvs[page.kvs.length - 1].key, Buffer.from([0])])
      }
    } finally {
      this.#loading = undefined
    }
    this.#tables = tables
    this.#revision = Number(revision)
  }

  /** Follow changes after the mirror's revision. */
  #watch (): void {
    if (this.#closed) return
    const watcher = this.#client.watch().prefix(this.#root).startRevision(String(this.#revision + 1)).watcher()
    this.#watcher = watcher
    watcher.on('data', (response: IWatchResponse) => { if (this.#watcher === watcher) this.#follow(response) })
    // The client would resume on its own, but from the revision in a header, which may run ahead of
    // the events delivered; a new watch from the mirror's own revision misses nothing.
    watcher.on('disconnected', () => { this.#resume(watcher, false) })
    // Canceled by etcd: the revisions it needed were compacted (or the watch was refused).
    watcher.on('error', () => { this.#resume(watcher, true) })
  }

  #follow (response: IWatchResponse): void {
    let seen = response.events.length === 0 ? Number(response.header.revision) : 0
    for (const { type, kv } of response.events) {
      const place = this.#locate(kv)
      const revision = Number(kv.mod_revision)
      if (place !== undefined) applyTo(this.#tables, ...place, type === 'Put' ? kv.value : null, revision, false)
      seen = Math.max(seen, revision)
    }
    if (seen <= this.#revision) return
    this.#revision = seen
    for (const table of this.#tables.values()) table.watchedUpTo(seen)
  }

  #resume (watcher: Watcher, reload: boolean): void {
    if (this.#watcher !== watcher || this.#closed) return
    this.#watcher = undefined
    if (!reload) void watcher.cancel().catch(() => {})
    this.#reloadNeeded ||= reload
    this.#retry = setTimeout(() => { void this.#rewatch() }, this.#retryMs)
  }

  async #rewatch (): Promise<void> {
    try {
      if (this.#reloadNeeded) await this.#load()
      this.#reloadNeeded = false
      this.#watch()
    } catch {
      if (!this.#closed) this.#retry = setTimeout(() => { void this.#rewatch() }, this.#retryMs)
    }
  }
}
