// State: one LMDB environment in the state directory; each plugin opens its own named databases and
// reaches no others. A write whose promise has resolved is committed and survives `kill -9`. A plugin's
// backup is an LMDB file holding only that plugin's databases (and entries it adds, such as the files
// its records name), restored in one transaction. While the disk fails or the store is over its
// limit, plugins' writes are refused with a StorageFault (507) and reads go on (storage-fault.ts).
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { open, type Database, type Key, type RootDatabase } from 'lmdb'
import { BadRequest, StartupError, messageOf } from './errors.js'
import { isStorageFault, StorageMonitor } from './storage-fault.js'

export const STORE_FILE = 'berth.mdb'

export type Encoding = 'msgpack' | 'json' | 'string' | 'binary' | 'ordered-binary'

export interface DatabaseOptions {
  /** Several values per key, kept sorted (lmdb dupSort). */
  dupSort?: boolean
  /** Value encoding; msgpack (the default) keeps structure, 'binary' stores Buffers as they are. */
  encoding?: Encoding
}

/** What a backup holds: whose data, when, and each database with its entry count. */
export interface BackupSummary {
  plugin: string
  created_at: string
  databases: Array<{ name: string, entries: number }>
}

/** The store as one plugin sees it. */
export interface PluginStore {
  /** Open (creating if needed) the plugin's database `name`. The handle cannot open or copy other databases. */
  db<V = unknown, K extends Key = Key>(name: string, options?: DatabaseOptions): Database<V, K>
  /**
   * Run `fn` in one write transaction across databases; resolves with its result after the commit.
   * If `fn` throws, none of its writes are committed and the promise rejects with that error.
   */
  transaction<T>(fn: () => T): Promise<T>
  /**
   * Copy a consistent snapshot of this plugin's databases, and nothing else, to the file `path` (0600).
   * `extra` adds entries to the copy alone (see BackupExtra); a restore puts them back like the rest.
   */
  backup(path: string, extra?: BackupExtra): Promise<BackupSummary>
}

/**
 * Entries a backup holds beyond the snapshot, by database name: raw values in a binary database of the
 * plugin's (or one of that name it does not have), such as the bytes of files its records name. They
 * are read after the snapshot, one at a time.
 */
export type BackupExtra = Readonly<Record<string, Iterable<readonly [Key, Buffer]>>>

interface DatabaseRecord {
  dupSort: boolean
  encoding: Encoding
}

/** Kernel-owned databases; a plugin name cannot start with `~`. */
const REGISTRY_DB = '~kernel/databases'
const BACKUP_META_DB = '~backup'
const BACKUP_META_KEY = 'meta'
const BACKUP_FORMAT = 1
const COPY_BATCH = 10_000
/** A copy's write transaction also ends once its values reach this many bytes. */
const COPY_BATCH_BYTES = 64 << 20
/** Handle members that reach beyond one database: refused on plugin handles. */
const ENVIRONMENT_MEMBERS = ['openDB', 'open', 'backup', 'close', 'env'] as const
/** Writes of a plugin handle, refused while the store's breaker is open: those returning a promise, and those that throw. */
const ASYNC_WRITES = ['put', 'remove', 'ifNoExists'] as const
const SYNC_WRITES = ['putSync', 'removeSync', 'clearSync'] as const
const PROBE_DB = '~kernel/probe'

/** Create the state directory (0700) or explain in one line why it cannot be used. */
export function prepareStateDir (dir: string): void {
  try {
    if (existsSync(dir)) {
      if (!statSync(dir).isDirectory()) throw new Error('not a directory')
    } else {
      mkdirSync(dir, { recursive: true, mode: 0o700 })
    }
  } catch (err) {
    throw new StartupError(`state directory ${dir} cannot be used: ${messageOf(err)}`)
  }
}

function openEnvironment (path: string): RootDatabase {
  const root = open({ path, maxDbs: 512, compression: false })
  for (const file of [path, `${path}-lock`]) {
    if (existsSync(file)) chmodSync(file, 0o600)
  }
  return root
}

/**
 * Values as raw bytes, so a copy keeps every value exactly as its plugin encoded it. Keys keep the
 * plugin's own (ordered-binary) encoding: lmdb sets a database's key comparison from the key encoding
 * of its first handle in a process, so every handle on a database must agree on it.
 */
const rawOptions = (record: DatabaseRecord): { dupSort: boolean, encoding: 'binary' } =>
  ({ dupSort: record.dupSort, encoding: 'binary' })

/** LMDB's magic number in the first meta page: opening anything else could crash the process. */
const LMDB_MAGIC = 0xBEEFC0DE
const MAGIC_OFFSET = 24

function hasLmdbMagic (path: string): boolean {
  const header = Buffer.alloc(MAGIC_OFFSET + 4)
  const fd = openSync(path, 'r')
  try {
    return readSync(fd, header, 0, header.length, 0) === header.length && header.readUInt32LE(MAGIC_OFFSET) === LMDB_MAGIC
  } finally {
    closeSync(fd)
  }
}

/** Copies of the entries of a range, one by one: lmdb may reuse a binary value's buffer for the next entry. */
function * copiedEntries (range: Iterable<{ key: Key, value: Buffer }>): Generator<readonly [Key, Buffer]> {
  for (const { key, value } of range) yield [key, Buffer.from(value)]
}

/** Put `entries` into `db` of the environment `target`, in transactions of COPY_BATCH entries or COPY_BATCH_BYTES at most; resolves with the count. */
async function writeEntries (target: RootDatabase, db: Database<Buffer, Key>, entries: Iterable<readonly [Key, Buffer]>): Promise<number> {
  let batch: Array<readonly [Key, Buffer]> = []
  let bytes = 0
  let count = 0
  const flush = async (): Promise<void> => {
    const pending = batch
    batch = []
    bytes = 0
    await target.transaction(() => { for (const [key, value] of pending) void db.put(key, value) })
  }
  for (const entry of entries) {
    batch.push(entry)
    bytes += entry[1].length
    count++
    if (batch.length >= COPY_BATCH || bytes >= COPY_BATCH_BYTES) await flush()
  }
  await flush()
  return count
}

export interface StoreOptions {
  /** Refuse writes once the store holds this many bytes; 0: no limit (LMDB's map grows as needed). */
  limitBytes?: number
}

export class Store {
  readonly #root: RootDatabase
  readonly #registry: Database<DatabaseRecord, string>
  readonly path: string
  /** The breaker of plugins' writes: open while the disk fails or the store is over its limit. */
  readonly monitor: StorageMonitor

  private constructor (root: RootDatabase, path: string, options: StoreOptions) {
    this.#root = root
    this.path = path
    this.#registry = root.openDB<DatabaseRecord, string>({ name: REGISTRY_DB })
    const probe = root.openDB<number, string>({ name: PROBE_DB })
    this.monitor = new StorageMonitor(path, {
      probe: async () => { await probe.put('probe', Date.now()) },
      size: () => { const { lastPageNumber, pageSize } = root.getStats() as { lastPageNumber: number, pageSize: number }; return (lastPageNumber + 1) * pageSize },
      limitBytes: options.limitBytes ?? 0
    })
  }

  /** Open the environment in `stateDir`; its files are readable by the owner only. */
  static open (stateDir: string, options: StoreOptions = {}): Store {
    prepareStateDir(stateDir)
    const path = join(stateDir, STORE_FILE)
    try {
      return new Store(openEnvironment(path), path, options)
    } catch (err) {
      throw new StartupError(`state directory ${stateDir} cannot be used: ${messageOf(err)}`)
    }
  }

  /** The view of one plugin: database names are prefixed with the plugin's name. */
  forPlugin (plugin: string): PluginStore {
    return {
      db: <V, K extends Key>(name: string, options: DatabaseOptions = {}) => this.#openPluginDb<V, K>(plugin, name, options),
      // A child transaction: lmdb's plain transaction() commits the writes a callback made before
      // it threw, together with the rest of the batch; a child transaction is aborted instead.
      transaction: async <T>(fn: () => T) => {
        if (this.monitor.refusing) throw this.monitor.refusal()
        try {
          return await this.#root.childTransaction(fn)
        } catch (err) {
          if (isStorageFault(err)) this.monitor.failed(err)
          throw err
        }
      },
      backup: async (path: string, extra?: BackupExtra) => await this.backupPlugin(plugin, path, extra)
    }
  }

  /** Make a plugin handle's writes refuse at once while the breaker is open (reads are untouched). */
  #guardWrites (db: Database<unknown, Key>): void {
    const monitor = this.monitor
    const handle = db as unknown as Record<string, (...args: unknown[]) => unknown>
    for (const method of ASYNC_WRITES) {
      const write = handle[method]
      Object.defineProperty(db, method, {
        value: function (this: unknown, ...args: unknown[]) { return monitor.refusing ? Promise.reject(monitor.refusal()) : write.apply(this, args) }
      })
    }
    for (const method of SYNC_WRITES) {
      const write = handle[method]
      Object.defineProperty(db, method, {
        value: function (this: unknown, ...args: unknown[]) {
          if (monitor.refusing) throw monitor.refusal()
          return write.apply(this, args)
        }
      })
    }
  }

  #openPluginDb<V, K extends Key> (plugin: string, name: string, options: DatabaseOptions): Database<V, K> {
    const fullName = `${plugin}/${name}`
    const record: DatabaseRecord = { dupSort: options.dupSort === true, encoding: options.encoding ?? 'msgpack' }
    const known = this.#registry.get(fullName)
    if (known?.dupSort !== record.dupSort || known.encoding !== record.encoding) void this.#registry.put(fullName, record)
    const db = this.#root.openDB<V, K>({ name: fullName, ...options })
    this.#guardWrites(db as unknown as Database<unknown, Key>)
    for (const member of ENVIRONMENT_MEMBERS) {
      Object.defineProperty(db, member, {
        get () { throw new Error(`plugin "${plugin}": a database handle cannot use ${member}; the store reaches only the plugin's own databases`) }
      })
    }
    return db
  }

  /** The plugin's databases (short names) as recorded when it opened them. */
  #databasesOf (plugin: string): Array<[string, DatabaseRecord]> {
    const prefix = `${plugin}/`
    return [...this.#registry.getRange({ start: prefix, end: `${plugin}0` })]
      .filter(({ key }) => key.startsWith(prefix))
      .map(({ key, value }) => [key.slice(prefix.length), value])
  }

  /** Plugins that have opened databases, by name. */
  pluginsWithData (): string[] {
    const names = new Set<string>()
    for (const key of this.#registry.getKeys()) if (!key.startsWith('~')) names.add(key.slice(0, key.indexOf('/')))
    return [...names].sort()
  }

  /** Write the plugin's databases, as one read snapshot, to a new LMDB file at `path`, then the `extra` entries. */
  async backupPlugin (plugin: string, path: string, extra: BackupExtra = {}): Promise<BackupSummary> {
    rmSync(path, { force: true })
    const target = openEnvironment(path)
    const snapshot = this.#root.useReadTransaction()
    const summary: BackupSummary = { plugin, created_at: new Date().toISOString(), databases: [] }
    try {
      const records = new Map(this.#databasesOf(plugin))
      const copy = async (name: string, record: DatabaseRecord, entries: Iterable<readonly [Key, Buffer]>): Promise<number> =>
        await writeEntries(target, target.openDB<Buffer, Key>({ name, ...rawOptions(record) }), entries)
      for (const [name, record] of records) {
        const source = this.#root.openDB<Buffer, Key>({ name: `${plugin}/${name}`, ...rawOptions(record) })
        summary.databases.push({ name, entries: await copy(name, record, copiedEntries(source.getRange({ transaction: snapshot }))) })
      }
      for (const [name, entries] of Object.entries(extra)) {
        const record = records.get(name) ?? { dupSort: false, encoding: 'binary' }
        if (record.encoding !== 'binary' || record.dupSort) throw new Error(`plugin "${plugin}": extra backup entries go into a binary database; ${name} is not one`)
        records.set(name, record)
        const added = await copy(name, record, entries)
        const counted = summary.databases.find(database => database.name === name)
        if (counted !== undefined) counted.entries += added
        else summary.databases.push({ name, entries: added })
      }
      const meta = target.openDB<unknown, string>({ name: BACKUP_META_DB })
      await meta.put(BACKUP_META_KEY, { format: BACKUP_FORMAT, ...summary, records: Object.fromEntries(records) })
    } finally {
      snapshot.done()
      await target.close()
    }
    rmSync(`${path}-lock`, { force: true })
    chmodSync(path, 0o600)
    return summary
  }

  /**
   * Replace every database of `plugin` with the contents of a backup of the same plugin, in one
   * transaction: databases the backup lacks are emptied. Run it while that plugin is not running.
   */
  async restorePlugin (plugin: string, path: string): Promise<BackupSummary> {
    if (!existsSync(path)) throw new BadRequest(`${path} does not exist`)
    if (!hasLmdbMagic(path)) throw new BadRequest(`${path} is not a Berth backup: not an LMDB file`)
    let source: RootDatabase
    try {
      source = open({ path, maxDbs: 512, compression: false, readOnly: true })
    } catch (err) {
      throw new BadRequest(`${path} is not a Berth backup: ${messageOf(err)}`)
    }
    try {
      const meta = source.openDB<{ format?: number, plugin?: string, created_at?: string, records?: Record<string, DatabaseRecord> } | undefined, string>({ name: BACKUP_META_DB })?.get(BACKUP_META_KEY)
      if (meta?.format !== BACKUP_FORMAT || meta.records === undefined) throw new BadRequest(`${path} is not a Berth backup`)
      if (meta.plugin !== plugin) throw new BadRequest(`${path} holds the data of plugin "${meta.plugin ?? '?'}", not "${plugin}"`)
      // Read first, then write in one transaction: an iterator of one environment must not run
      // inside a write transaction of another.
      const contents = Object.entries(meta.records).map(([name, record]) => ({
        name,
        record,
        entries: [...copiedEntries(source.openDB<Buffer, Key>({ name, ...rawOptions(record) }).getRange())]
      }))
      this.#root.transactionSync(() => {
        for (const [name, record] of this.#databasesOf(plugin)) {
          if (!(name in (meta.records ?? {}))) this.#root.openDB({ name: `${plugin}/${name}`, ...rawOptions(record) }).clearSync()
        }
        for (const { name, record, entries } of contents) {
          this.#registry.putSync(`${plugin}/${name}`, record)
          const target = this.#root.openDB<Buffer, Key>({ name: `${plugin}/${name}`, ...rawOptions(record) })
          target.clearSync()
          for (const [key, value] of entries) target.putSync(key, value)
        }
      })
      const databases = contents.map(({ name, entries }) => ({ name, entries: entries.length }))
      return { plugin, created_at: meta.created_at ?? '', databases }
    } finally {
      await source.close()
      rmSync(`${path}-lock`, { force: true })
    }
  }

  async close (): Promise<void> {
    this.monitor.stop()
    await this.#root.close()
  }
}

/** One plugin's databases in `stateDir`, opened outside a server (a command copying them elsewhere); close() when done. */
export function openPluginState (stateDir: string, plugin: string): { store: PluginStore, close: () => Promise<void> } {
  const root = Store.open(stateDir)
  return { store: root.forPlugin(plugin), close: async () => { await root.close() } }
}
