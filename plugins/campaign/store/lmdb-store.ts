// The campaign store on the plugin's embedded LMDB databases (the default: one instance). A table is
// one database under the same name as before the contract existed, so existing data is read as is.
// A transaction holds a lock per subject in this process, buffers its writes (its own get/has see
// them) and commits them in one LMDB write transaction.
import type { Database } from 'lmdb'
import type { PluginStore } from '../../../kernel/index.js'
import { subjectList, type CampaignStore, type RangeOptions, type Subjects, type Table, type TableKey, type Transaction } from './contract.js'

type Db = Database<unknown, TableKey>
/** What the store needs of the plugin's LMDB store. */
export type LmdbDatabases = Pick<PluginStore, 'db' | 'transaction'>
const DELETED = Symbol('deleted')
type Writes = Map<string, { db: Db, key: TableKey, value: unknown }>

class LmdbTable<V, K extends TableKey> implements Table<V, K> {
  readonly #db: Db
  readonly #writes: Writes | undefined

  constructor (db: Db, writes?: Writes) {
    this.#db = db
    this.#writes = writes
  }

  async get (key: K): Promise<V | undefined> {
    const written = this.#writes?.get(writeId(this.#db, key))
    if (written !== undefined) return written.value === DELETED ? undefined : written.value as V
    return this.#db.get(key) as V | undefined
  }

  async has (key: K): Promise<boolean> {
    return await this.get(key) !== undefined
  }

  async count (): Promise<number> {
    return this.#db.getCount()
  }

  async * range (options: RangeOptions = {}): AsyncIterable<{ key: K, value: V }> {
    for (const entry of this.#db.getRange(options)) yield entry as { key: K, value: V }
  }

  async list (options: RangeOptions = {}): Promise<Array<{ key: K, value: V }>> {
    return [...this.#db.getRange(options)] as Array<{ key: K, value: V }>
  }

  async put (key: K, value: V): Promise<void> {
    if (this.#writes !== undefined) this.#writes.set(writeId(this.#db, key), { db: this.#db, key, value })
    else await this.#db.put(key, value)
  }

  async remove (key: K): Promise<void> {
    if (this.#writes !== undefined) this.#writes.set(writeId(this.#db, key), { db: this.#db, key, value: DELETED })
    else await this.#db.remove(key)
  }
}

const names = new WeakMap<Db, string>()
const writeId = (db: Db, key: TableKey): string => `${names.get(db) ?? ''}\0${JSON.stringify(key)}`

export class LmdbCampaignStore implements CampaignStore {
  readonly #store: LmdbDatabases
  readonly #dbs = new Map<string, Db>()
  /** The tail of each subject's queue of transactions. */
  readonly #queues = new Map<string, Promise<unknown>>()

  constructor (store: LmdbDatabases) {
    this.#store = store
  }

  table<V, K extends TableKey = string> (name: string): Table<V, K> {
    return new LmdbTable<V, K>(this.#db(name))
  }

  async transaction<T> (subject: Subjects, fn: (tx: Transaction) => Promise<T>): Promise<T> {
    const subjects = subjectList(subject)
    // After every transaction already queued on any of its subjects; each waits only on earlier ones, so none waits forever.
    const before = Promise.allSettled(subjects.map(name => this.#queues.get(name)))
    const run = before.then(async () => await this.#run(fn))
    const tail = run.catch(() => {})
    for (const name of subjects) this.#queues.set(name, tail)
    void tail.then(() => { for (const name of subjects) if (this.#queues.get(name) === tail) this.#queues.delete(name) })
    return await run
  }

  async #run<T> (fn: (tx: Transaction) => Promise<T>): Promise<T> {
    const writes: Writes = new Map()
    const result = await fn({ table: <V, K extends TableKey = string>(name: string) => new LmdbTable<V, K>(this.#db(name), writes) })
    if (writes.size > 0) {
      await this.#store.transaction(() => {
        for (const { db, key, value } of writes.values()) void (value === DELETED ? db.remove(key) : db.put(key, value))
      })
    }
    return result
  }

  /** The plugin's LMDB store is closed by the kernel. */
  async close (): Promise<void> {}

  #db (name: string): Db {
    let db = this.#dbs.get(name)
    if (db === undefined) {
      db = this.#store.db<unknown, TableKey>(name)
      names.set(db, name)
      this.#dbs.set(name, db)
    }
    return db
  }
}
