// One plugin's part of the shared state (state.ts) behind the KeyValueStore interface LMDB's
// plugin store also meets: databases under `<plugin>/<database>`, reads from the mirror, and
// transactions that gather a callback's writes into one etcd transaction. A transaction holds at most
// etcd's 128 writes (one per key, the last write to a key counting): a larger one is refused whole
// with TransactionTooLarge, never split, since a transaction promises all or nothing.
import type { KeyRange, KeyValueDatabase, KeyValueStore } from '../../../kernel/index.js'
import { MirrorTable, type PendingValue } from './mirror.js'
import { decodeValue, encodeValue, type SharedState, type Write, type WriteFence } from './state.js'

/** The writes of a transaction being gathered, by etcd key, and their outcome once committed. */
class Batch {
  readonly writes = new Map<string, Write>()
  readonly outcome: Promise<ReadonlyMap<string, boolean>>
  settle: (outcome: ReadonlyMap<string, boolean> | Error) => void = () => {}

  constructor () {
    this.outcome = new Promise((resolve, reject) => {
      this.settle = outcome => { if (outcome instanceof Error) reject(outcome); else resolve(outcome) }
    })
    // Writes inside a transaction are seldom awaited one by one: their failure is the transaction's.
    this.outcome.catch(() => {})
  }

  /** The promise of one write of the batch; a failure is reported by the transaction, not as an unhandled rejection. */
  resultOf (etcdKey: string): Promise<boolean> {
    const result = this.outcome.then(outcome => outcome.get(etcdKey) ?? true)
    result.catch(() => {})
    return result
  }
}

/** The table of a database nothing has been written to yet. */
const EMPTY = new MirrorTable()

const toError = (err: unknown): Error => err instanceof Error ? err : new Error(String(err))

function checkName (what: string, name: string): void {
  if (name === '' || name.includes('/')) throw new TypeError(`a ${what} name of the shared state cannot be empty or contain "/": ${JSON.stringify(name)}`)
}

class SharedDatabase<V> implements KeyValueDatabase<V> {
  constructor (private readonly view: SharedPluginStore, private readonly table: string) {}

  get (key: string): V | undefined {
    const bytes = this.view.read(this.table, key)
    return bytes === undefined ? undefined : decodeValue(bytes) as V
  }

  getRange (range?: KeyRange): Array<{ key: string, value: V }> {
    return this.view.range(this.table, range).map(([key, bytes]) => ({ key, value: decodeValue(bytes) as V }))
  }

  getKeys (range?: KeyRange): string[] {
    return this.view.range(this.table, range).map(([key]) => key)
  }

  getKeysCount (range?: KeyRange): number {
    return this.view.range(this.table, { ...range, limit: undefined }).length
  }

  // Not async: a write inside a transaction returns the batch's promise itself, whose failure the
  // transaction reports (a wrapping promise would be an unhandled rejection when not awaited).
  put (key: string, value: V): Promise<boolean> {
    return this.view.write(this.table, key, encodeValue(value))
  }

  remove (key: string): Promise<boolean> {
    return this.view.write(this.table, key, null)
  }
}

export class SharedPluginStore implements KeyValueStore {
  #batch: Batch | undefined

  /** `fence`: the authority every write of this view carries (undefined from it: refused, not sent). */
  constructor (private readonly state: SharedState, private readonly plugin: string, private readonly fence?: () => WriteFence | undefined) {
    checkName('plugin', plugin)
  }

  db<V>(name: string): KeyValueDatabase<V> {
    checkName('database', name)
    return new SharedDatabase<V>(this, `${this.plugin}/${name}`)
  }

  /** The encoded value of `key`: this transaction's own write first, else the mirror's. */
  read (table: string, key: string): Buffer | undefined {
    const pending = this.#batch?.writes.get(this.state.etcdKey(table, key))
    if (pending !== undefined) return pending.value ?? undefined
    return this.state.table(table)?.get(key)
  }

  range (table: string, range?: KeyRange): Array<[string, Buffer]> {
    const pending = new Map<string, PendingValue>()
    for (const write of this.#batch?.writes.values() ?? []) if (write.table === table) pending.set(write.key, write.value)
    return (this.state.table(table) ?? EMPTY).range(range, pending)
  }

  write (table: string, key: string, value: PendingValue): Promise<boolean> {
    const write: Write = { table, key, etcdKey: this.state.etcdKey(table, key), value }
    const batch = this.#batch
    if (batch === undefined) return this.state.commit([write], this.fence).then(([changed]) => changed)
    batch.writes.set(write.etcdKey, write)
    return batch.resultOf(write.etcdKey)
  }

  /** A transaction started inside another joins it and resolves when it commits. */
  async transaction<T>(fn: () => T): Promise<T> {
    const outer = this.#batch
    if (outer !== undefined) {
      const result = fn()
      await outer.outcome
      return result
    }
    const batch = new Batch()
    this.#batch = batch
    let result: T
    try {
      result = fn()
      if (result instanceof Promise) throw new TypeError('a transaction of the shared state runs its callback synchronously: writes after an await would not be part of it')
    } catch (err) {
      batch.settle(toError(err))
      throw err
    } finally {
      this.#batch = undefined
    }
    const writes = [...batch.writes.values()]
    try {
      const changed = await this.state.commit(writes, this.fence)
      batch.settle(new Map(writes.map((write, i) => [write.etcdKey, changed[i]])))
    } catch (err) {
      batch.settle(toError(err))
      throw err
    }
    return result
  }
}
