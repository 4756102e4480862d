// What the campaign modules keep their data in: named tables of JSON values ordered by key, read and
// written asynchronously, with transactions that serialise writers of the same subject. The embedded
// LMDB store (lmdb-store.ts) is the default, PostgreSQL (postgres-store.ts) the shared one; every
// module sees only this contract.

/** A key: a string, or a tuple of strings and non-negative integers ordered element by element. */
export type TableKey = string | Array<string | number>

export interface RangeOptions {
  /** First key (inclusive unless `exclusiveStart`); with `reverse`, the highest key. A tuple's prefix will do. */
  start?: TableKey
  /** Key where the range stops (exclusive). */
  end?: TableKey
  reverse?: boolean
  exclusiveStart?: boolean
  limit?: number
}

export interface Table<V, K extends TableKey = string> {
  get(key: K): Promise<V | undefined>
  has(key: K): Promise<boolean>
  count(): Promise<number>
  /** Entries in key order (or reversed), read in batches: a long range is not held in memory at once. */
  range(options?: RangeOptions): AsyncIterable<{ key: K, value: V }>
  /** The whole range at once, in key order (the caller bounds it): the fast path for reading many entries. */
  list(options?: RangeOptions): Promise<Array<{ key: K, value: V }>>
  put(key: K, value: V): Promise<void>
  remove(key: K): Promise<void>
}

/** What a transaction holds: one subject, or several. */
export type Subjects = string | readonly string[]

/** The subjects of a transaction, each once, in one order (so two transactions take them in the same order). */
export const subjectList = (subject: Subjects): string[] => typeof subject === 'string' ? [subject] : [...new Set(subject)].sort()

/** A write another module adds to a transaction (a person given a role with the roster entry that gives it), with the subject it needs held. */
export interface Alongside {
  subject: string
  write(tx: Transaction): Promise<unknown>
}

/** The tables inside a transaction: their writes commit together, or none does. */
export interface Transaction {
  table<V, K extends TableKey = string>(name: string): Table<V, K>
}

export interface CampaignStore extends Transaction {
  /**
   * Run `fn` in one transaction and commit its writes together; if it throws, nothing is written and
   * the promise rejects with that error. Transactions naming the same `subject` (a donor, a
   * document) run one at a time. Inside, `get` and `has` see the transaction's own writes; `range` and
   * `count` see what was committed before it. A transaction may name several subjects (a roster and
   * the people it adds to): it then runs alone among the transactions of each of them.
   */
  transaction<T>(subject: Subjects, fn: (tx: Transaction) => Promise<T>): Promise<T>
  close(): Promise<void>
}

/** Everything an async iterable yields, in order (Array.fromAsync, which Node 20 lacks). */
export async function arrayFrom<T> (items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = []
  for await (const item of items) all.push(item)
  return all
}
