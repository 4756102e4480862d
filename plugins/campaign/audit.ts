// The audit log: every write to the campaign's data (who, which function, when, the record before and
// after), written in the same transaction as the write itself, so a change is never stored without
// its entry. AuditedStore wraps the campaign store every module uses; the caller is known from the
// server function being run (`actingAs`), and writes made outside one (timers) are the system's.
// Derived tables (search indexes, address indexes), the social-post feed and sign-in bookkeeping are
// not audited; secret-looking fields are redacted and large values cut to a preview.
import { AsyncLocalStorage } from 'node:async_hooks'
import { randomBytes } from 'node:crypto'
import { POST_BUCKET_TABLES } from './records/post-buckets.js'
import type { Role } from './roles.js'
import type { CampaignStore, RangeOptions, Subjects, Table, TableKey, Transaction } from './store/contract.js'

export interface Actor {
  /** The user's e-mail address (their subject id without one), the API token's name, or `system`. */
  by: string
  role: Role | 'system'
  /** The server function that wrote, or what the system was doing. */
  action: string
}

export interface AuditEntry {
  audit_id: string
  at: string
  by: string
  role: Role | 'system'
  function: string
  table: string
  /** The record's key (a tuple key as JSON). */
  key: string
  change: 'create' | 'update' | 'delete'
  before: unknown
  after: unknown
}

const AUDIT = 'audit'
/** [table, key, audit_id]: the entries of one record. */
const BY_RECORD = 'audit-by-record'
/** Tables whose writes are not audited: the log itself, derived indexes, the post feed and its buckets, sign-ins, and logs of their own (the send log, replies to texts), keys, the used public-form tokens and the public pages' view counts. */
export const UNAUDITED_TABLES: ReadonlySet<string> = new Set([AUDIT, BY_RECORD, 'people-by-email', 'people-by-phone', 'kb-passages', 'kb-state', 'posts', ...POST_BUCKET_TABLES, 'users', 'api-token-uses', 'send-log', 'sms-replies', 'sms-reply-sids', 'sms-replies-by-person', 'sending-secrets', 'public-page-secrets', 'public-form-tokens', 'public-page-views'])
/** Largest value kept whole in an entry (as JSON); a larger one is kept as a preview. */
const MAX_VALUE_CHARS = 8192
const SECRET_FIELD = /(^|_)(hash|secret|token|password|key)$/i
const SECRET_NAME_IN_JSON = /(hash|secret|token|password|key)"\s*:/i

const SYSTEM: Actor = { by: 'system', role: 'system', action: 'system' }
const actors = new AsyncLocalStorage<Actor>()

/** Run `fn` with its writes attributed to `actor`. */
export async function actingAs<T> (actor: Actor, fn: () => Promise<T>): Promise<T> {
  return await actors.run(actor, fn)
}

const keyText = (key: TableKey): string => typeof key === 'string' ? key : JSON.stringify(key)

/** A value as the log keeps it: secret-looking fields redacted, a large value cut to a preview. */
function kept (value: unknown): unknown {
  if (value === undefined) return null
  const plain = JSON.stringify(value)
  // The replacer is slow: only a value with a secret-looking field name is written again through it.
  const text = SECRET_NAME_IN_JSON.test(plain) ? JSON.stringify(value, (field, item: unknown) => SECRET_FIELD.test(field) && typeof item !== 'object' ? '[redacted]' : item) : plain
  return text.length <= MAX_VALUE_CHARS ? JSON.parse(text) as unknown : { truncated: true, chars: text.length, preview: text.slice(0, 500) }
}

let sequence = 0
/** Told apart from other instances writing the same log. */
const INSTANCE = randomBytes(2).toString('hex')
/** Audit ids sort by time, then by the order written in this process. */
function auditId (at: Date): string {
  sequence = (sequence + 1) % 0x1000000
  return `${at.toISOString().replace(/[-:.]/g, '')}-${sequence.toString(16).padStart(6, '0')}${INSTANCE}`
}

async function record (tx: Transaction, table: string, key: TableKey, before: unknown, after: unknown): Promise<void> {
  if (before === undefined && after === undefined) return
  const actor = actors.getStore() ?? SYSTEM
  const at = new Date()
  const entry: AuditEntry = {
    audit_id: auditId(at),
    at: at.toISOString(),
    by: actor.by,
    role: actor.role,
    function: actor.action,
    table,
    key: keyText(key),
    change: before === undefined ? 'create' : after === undefined ? 'delete' : 'update',
    before: kept(before),
    after: kept(after)
  }
  await tx.table<AuditEntry>(AUDIT).put(entry.audit_id, entry)
  await tx.table<null, string[]>(BY_RECORD).put([table, entry.key, entry.audit_id], null)
}

/** A table's reads, passed through; its writes are the subclass's. */
abstract class ReadThrough<V, K extends TableKey> implements Table<V, K> {
  protected readonly table: Table<V, K>
  constructor (table: Table<V, K>) { this.table = table }
  async get (key: K): Promise<V | undefined> { return await this.table.get(key) }
  async has (key: K): Promise<boolean> { return await this.table.has(key) }
  async count (): Promise<number> { return await this.table.count() }
  range (options?: RangeOptions): AsyncIterable<{ key: K, value: V }> { return this.table.range(options) }
  async list (options?: RangeOptions): Promise<Array<{ key: K, value: V }>> { return await this.table.list(options) }
  abstract put (key: K, value: V): Promise<void>
  abstract remove (key: K): Promise<void>
}

/** A table inside a transaction whose writes add their entries to the same transaction. */
class AuditedTable<V, K extends TableKey> extends ReadThrough<V, K> {
  readonly #tx: Transaction
  readonly #name: string

  constructor (tx: Transaction, name: string) {
    super(tx.table<V, K>(name))
    this.#tx = tx
    this.#name = name
  }

  async put (key: K, value: V): Promise<void> {
    const before = await this.table.get(key)
    await this.table.put(key, value)
    await record(this.#tx, this.#name, key, before, value)
  }

  async remove (key: K): Promise<void> {
    const before = await this.table.get(key)
    await this.table.remove(key)
    await record(this.#tx, this.#name, key, before, undefined)
  }
}

class AuditedTransaction implements Transaction {
  readonly #tx: Transaction
  constructor (tx: Transaction) { this.#tx = tx }
  table<V, K extends TableKey = string> (name: string): Table<V, K> {
    return UNAUDITED_TABLES.has(name) ? this.#tx.table<V, K>(name) : new AuditedTable<V, K>(this.#tx, name)
  }
}

/** A table outside a transaction: each write runs in one of its own with its entry. */
class StandaloneTable<V, K extends TableKey> extends ReadThrough<V, K> {
  readonly #store: CampaignStore
  readonly #name: string

  constructor (store: CampaignStore, name: string) {
    super(store.table<V, K>(name))
    this.#store = store
    this.#name = name
  }

  async put (key: K, value: V): Promise<void> {
    await this.#alone(key, async table => { await table.put(key, value) })
  }

  async remove (key: K): Promise<void> {
    await this.#alone(key, async table => { await table.remove(key) })
  }

  /** `write` in a transaction of its own, holding the record's key. */
  async #alone (key: K, write: (table: AuditedTable<V, K>) => Promise<void>): Promise<void> {
    await this.#store.transaction(`${this.#name}:${keyText(key)}`, async tx => { await write(new AuditedTable<V, K>(tx, this.#name)) })
  }
}

/** The campaign store with every write to an audited table logged. */
export class AuditedStore implements CampaignStore {
  readonly #store: CampaignStore
  constructor (store: CampaignStore) { this.#store = store }

  table<V, K extends TableKey = string> (name: string): Table<V, K> {
    return UNAUDITED_TABLES.has(name) ? this.#store.table<V, K>(name) : new StandaloneTable<V, K>(this.#store, name)
  }

  async transaction<T> (subject: Subjects, fn: (tx: Transaction) => Promise<T>): Promise<T> {
    return await this.#store.transaction(subject, async tx => await fn(new AuditedTransaction(tx)))
  }

  async close (): Promise<void> { await this.#store.close() }
}

export interface AuditQuery { table?: string, by?: string, from?: string, to?: string }

/** Reading the log: newest first, by record, or everything in a time range. */
export class AuditLog {
  readonly #entries: Table<AuditEntry>
  readonly #byRecord: Table<null, string[]>

  constructor (store: CampaignStore) {
    this.#entries = store.table<AuditEntry>(AUDIT)
    this.#byRecord = store.table<null, string[]>(BY_RECORD)
  }

  /** Entries matching `query`, newest first, `limit` at most, after the entry `cursor` names. */
  async page (query: AuditQuery, limit: number, cursor?: string): Promise<{ entries: AuditEntry[], next_cursor: string | null }> {
    const entries: AuditEntry[] = []
    for await (const entry of this.entries(query, cursor)) {
      if (entries.length === limit) return { entries, next_cursor: entries[entries.length - 1].audit_id }
      entries.push(entry)
    }
    return { entries, next_cursor: null }
  }

  /** Every entry matching `query`, newest first, read in batches (for exports). */
  async * entries (query: AuditQuery, cursor?: string): AsyncIterable<AuditEntry> {
    const start = cursor ?? (query.to === undefined ? undefined : `${new Date(query.to).toISOString().replace(/[-:.]/g, '')}-~`)
    const fromKey = query.from === undefined ? undefined : new Date(query.from).toISOString().replace(/[-:.]/g, '')
    for await (const { value } of this.#entries.range({ reverse: true, start, exclusiveStart: cursor !== undefined })) {
      if (fromKey !== undefined && value.audit_id < fromKey) return
      if (query.table !== undefined && value.table !== query.table) continue
      if (query.by !== undefined && value.by.toLowerCase() !== query.by.toLowerCase()) continue
      yield value
    }
  }

  /** The entries of the records `keys` of `table`, oldest first. */
  async historyOf (table: string, keys: readonly string[]): Promise<AuditEntry[]> {
    const ids: string[] = []
    for (const key of keys) {
      for await (const entry of this.#byRecord.range({ start: [table, key], end: [table, key, '\uffff'] })) ids.push(entry.key[2])
    }
    const entries = await Promise.all(ids.sort().map(async id => await this.#entries.get(id)))
    return entries.filter((entry): entry is AuditEntry => entry !== undefined)
  }
}
