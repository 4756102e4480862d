// What every module receives (the language engine, the optional generative provider, the
// knowledge base, its own LMDB databases) and what they share: text bounds answered with 413, time-
// ordered record stores that keep at most a configured number of records, and pagination.
import { createHash, randomBytes } from 'node:crypto'
import type { Database } from 'lmdb'
import { BadRequest, PayloadTooLarge } from '../../../kernel/index.js'
import { Type } from '../../../kernel/schema.js'
import type { LanguageEngine } from '../language/engine.js'
import type { Generator } from '../language/generator.js'
import type { AdminSources } from './admin/admin.js'
import type { Fundraising } from './fundraising/fundraising.js'
import type { KnowledgeBase } from './knowledge-base/knowledge-base.js'
import type { PostStore } from '../records/posts.js'

export interface ModuleKit {
  /** The local engine, imported on first use. */
  language(): Promise<LanguageEngine>
  /** The generative provider, when `[campaign].generator_url` is set. */
  generator: Generator | undefined
  kb: KnowledgeBase
  /** The post stream of the sentiment monitor. */
  posts: PostStore
  /** Donors and donations with the contribution limit (read by compliance). */
  fundraising: Fundraising
  /** A database of the campaign plugin (each module names its own). */
  db<V>(name: string): Database<V, string>
  /** Most records a module's store keeps. */
  maxRecords: number
  /** What the admin panel reports: users, uptime, live counts, the issuer, the feedback per module. */
  admin: AdminSources
}

/** Longest text one call analyses (an article, a transcript, a bill), in characters. */
export const MAX_TEXT_CHARS = 100_000

/** A text argument: at least one character; a longer one than `max` is answered with 413 by `checkText`. */
export const TextArg = (description: string): ReturnType<typeof Type.String> => Type.String({ minLength: 1, description })

/** A calendar day argument, YYYY-MM-DD (checked as a real day with `instant`). */
export const DayArg = (description: string): ReturnType<typeof Type.String> => Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description })

/** 413 naming the field when `text` is longer than `max` characters. */
export function checkText (field: string, text: string, max = MAX_TEXT_CHARS): void {
  if (text.length > max) throw new PayloadTooLarge(`${field} is ${text.length.toLocaleString('en-US')} characters; at most ${max.toLocaleString('en-US')} are analysed at once`)
}

/** `YYYY-MM-DDTHH:MM:SS(.sss)Z` or a date; refused with the field named otherwise. */
export function instant (field: string, text: string): Date {
  const at = new Date(text)
  if (!/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?$/.test(text) || Number.isNaN(at.getTime())) {
    throw new BadRequest(`invalid arguments: /${field}: expected an ISO 8601 date or UTC time, got ${JSON.stringify(text)}`)
  }
  return at
}

/** A `DayArg` value that is a real calendar day (not "2026-02-30"), or 400 naming the field. */
export function calendarDay (field: string, day: string): string {
  const at = instant(field, day)
  if (at.toISOString().slice(0, 10) !== day) throw new BadRequest(`invalid arguments: /${field}: ${JSON.stringify(day)} is not a calendar day`)
  return day
}

/** The `from` and `to` arguments of a function (ISO 8601 times schemas), as the schema fields. */
export const TimeRangeArgs = {
  from: Type.Optional(Type.String({ maxLength: 40, description: 'ISO 8601 start (inclusive)' })),
  to: Type.Optional(Type.String({ maxLength: 40, description: 'ISO 8601 end (inclusive)' }))
}

/** `from` and `to` as times (400 naming the field that is not one, or `to` before `from`). */
export function timeRange (args: { from?: string, to?: string }): { from?: Date, to?: Date } {
  const from = args.from === undefined ? undefined : instant('from', args.from)
  const to = args.to === undefined ? undefined : instant('to', args.to)
  if (from !== undefined && to !== undefined && to < from) throw new BadRequest('invalid arguments: /to: comes before from')
  return { from, to }
}

/** A record key that sorts by time: the compact UTC time, then `suffix` (random when not given). */
export function timeKey (at: Date, suffix = randomBytes(4).toString('hex')): string {
  return `${at.toISOString().replace(/[-:.]/g, '')}-${suffix}`
}

/** A stable id for a result that is not stored (for record-feedback): 16 hex digits of SHA-256 over its parts. */
export function contentId (...parts: readonly string[]): string {
  const hash = createHash('sha256')
  for (const part of parts) hash.update(part).update('\0')
  return hash.digest('hex').slice(0, 16)
}

/** The time part of a key made by `timeKey`, for range bounds. */
export const timePrefix = (at: Date): string => at.toISOString().replace(/[-:.]/g, '')

export const PageArgs = {
  limit: Type.Integer({ minimum: 1, maximum: 200, default: 50 }),
  cursor: Type.Optional(Type.String({ maxLength: 64, description: 'next_cursor of the previous page' }))
}

export interface Page<T> { items: T[], next_cursor: string | null }

/** Records keyed by `timeKey`, newest first in listings, the oldest removed beyond `max`. */
export class RecordStore<T> {
  readonly #db: Database<T, string>
  readonly #max: number

  constructor (db: Database<T, string>, max: number) {
    this.#db = db
    this.#max = max
  }

  get count (): number {
    return this.#db.getCount()
  }

  get (key: string): T | undefined {
    return this.#db.get(key)
  }

  has (key: string): boolean {
    return this.#db.doesExist(key)
  }

  /** Store records in one transaction, then drop the oldest beyond the bound. */
  async putAll (entries: ReadonlyArray<readonly [string, T]>): Promise<void> {
    await this.#db.transaction(() => {
      for (const [key, value] of entries) void this.#db.put(key, value)
      const excess = this.#db.getCount() - this.#max
      if (excess > 0) for (const key of this.#db.getKeys({ limit: excess })) void this.#db.remove(key)
    })
  }

  async put (key: string, value: T): Promise<void> {
    await this.putAll([[key, value]])
  }

  /** Records between two times (keys made by `timeKey`), oldest first. */
  * between (from?: Date, to?: Date): Iterable<T> {
    const range = this.#db.getRange({
      ...(from !== undefined ? { start: timePrefix(from) } : {}),
      ...(to !== undefined ? { end: `${timePrefix(to)}~` } : {})
    })
    for (const { value } of range) yield value
  }

  /** One page, newest first, optionally filtered; `cursor` is the last key of the previous page. */
  page (limit: number, cursor?: string, keep: (value: T) => boolean = () => true): Page<T & { id: string }> {
    const items: Array<T & { id: string }> = []
    let last: string | null = null
    for (const { key, value } of this.#db.getRange({ reverse: true, ...(cursor !== undefined ? { start: cursor, exclusiveStart: true } : {}) })) {
      if (!keep(value)) continue
      if (items.length === limit) return { items, next_cursor: last }
      items.push({ ...value, id: key })
      last = key
    }
    return { items, next_cursor: null }
  }
}
