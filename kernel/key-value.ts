// The part of a database handle the control plane's plugins use: what an LMDB database of the plugin
// store offers, and what the shared store on etcd (plugins/cluster/shared-state/) offers too, so a plugin typed on
// these interfaces runs on either. Keys are strings, in the byte order of their UTF-8 encoding.

/** Bounds of a range as LMDB takes them: `start` inclusive, `end` exclusive; reversed, `start` is the upper bound. */
export interface KeyRange {
  start?: string
  end?: string
  reverse?: boolean
  limit?: number
}

export interface KeyValueDatabase<V> {
  /** The value of `key` now (never waits). */
  get(key: string): V | undefined
  /** Entries of `range` in key order (never waits). */
  getRange(range?: KeyRange): Iterable<{ key: string, value: V }>
  getKeys(range?: KeyRange): Iterable<string>
  /** Keys within the bounds of `range`; its limit is ignored, as LMDB ignores it. */
  getKeysCount(range?: KeyRange): number
  /** Resolves once durable; inside `transaction(fn)`, once the transaction is. */
  put(key: string, value: V): Promise<boolean>
  remove(key: string): Promise<boolean>
}

export interface KeyValueStore {
  /** The database `name` (created on first write). */
  db<V>(name: string): KeyValueDatabase<V>
  /**
   * Run `fn` (synchronously) and apply every put and remove it made, all or none; resolves with its
   * result once they are durable. Reads inside `fn` see its own writes.
   */
  transaction<T>(fn: () => T): Promise<T>
}
