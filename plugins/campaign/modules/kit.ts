// What every module receives (the language engine, the optional generative provider, the campaign
// store's tables, and the services modules provide to each other) and what they share: text bounds
// answered with 413, time-ordered record stores that keep at most a configured number of records, and
// pagination. The kit names no module: a module providing a service adds it to ModuleKit itself
// (`declare module '../../module-kit.js'` beside the service's class). Modules import all of this
// through the published module kit, module-kit.ts.
import { createHash, randomBytes } from 'node:crypto'
import { BadRequest, PayloadTooLarge } from '../../../kernel/index.js'
import { Type } from '../../../kernel/schema.js'
import type { LanguageEngine } from '../language/engine.js'
import type { Generator } from '../language/generator.js'
import type { AuditLog } from '../audit.js'
import type { PostStore } from '../records/posts.js'
import type { CampaignStore, RangeOptions, Table } from '../store/contract.js'

/** What the core gives every module; the modules' services (the knowledge base, people, events…) are added by the modules that provide them. */
export interface ModuleKit {
  /** The local engine, imported on first use. */
  language(): Promise<LanguageEngine>
  /** The generative provider, when `[campaign].generator_url` is set. */
  generator: Generator | undefined
  /** The post stream of the sentiment monitor. */
  posts: PostStore
  /** Every write to the campaign's data, who made it and the record before and after. */
  audit: AuditLog
  /** The campaign's data: each module names its own tables. */
  store: CampaignStore
  /** Most records a module's store keeps. */
  maxRecords: number
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

/** The key range of records made between two times (keys made by `timeKey`). */
const keysBetween = (from?: Date, to?: Date): RangeOptions => ({
  ...(from !== undefined ? { start: timePrefix(from) } : {}),
  ...(to !== undefined ? { end: `${timePrefix(to)}~` } : {})
})

/** Records keyed by `timeKey`, newest first in listings, the oldest removed beyond `max`. */
export class RecordStore<T> {
  readonly #store: CampaignStore
  readonly #name: string
  readonly #table: Table<T>
  readonly #max: number

  constructor (store: CampaignStore, name: string, max: number) {
    this.#store = store
    this.#name = name
    this.#table = store.table<T>(name)
    this.#max = max
  }

  async count (): Promise<number> {
    return await this.#table.count()
  }

  async get (key: string): Promise<T | undefined> {
    return await this.#table.get(key)
  }

  async has (key: string): Promise<boolean> {
    return await this.#table.has(key)
  }

  /** Store records in one transaction, then drop the oldest beyond the bound. */
  async putAll (entries: ReadonlyArray<readonly [string, T]>): Promise<void> {
    await this.#store.transaction(`records:${this.#name}`, async tx => {
      const table = tx.table<T>(this.#name)
      for (const [key, value] of entries) await table.put(key, value)
    })
    const excess = await this.#table.count() - this.#max
    if (excess <= 0) return
    const oldest: string[] = []
    for await (const { key } of this.#table.range({ limit: excess })) oldest.push(key)
    for (const key of oldest) await this.#table.remove(key)
  }

  async put (key: string, value: T): Promise<void> {
    await this.putAll([[key, value]])
  }

  /** Records between two times (keys made by `timeKey`), oldest first, read as they are used. */
  async * between (from?: Date, to?: Date): AsyncIterable<T> {
    for await (const { value } of this.#table.range(keysBetween(from, to))) yield value
  }

  /** The same records, all at once (faster when every one of them is needed). */
  async list (from?: Date, to?: Date): Promise<T[]> {
    return (await this.#table.list(keysBetween(from, to))).map(({ value }) => value)
  }

  /** One page, newest first, optionally filtered; `cursor` is the last key of the previous page. */
  async page (limit: number, cursor?: string, keep: (value: T) => boolean = () => true): Promise<Page<T & { id: string }>> {
    const items: Array<T & { id: string }> = []
    let last: string | null = null
    for await (const { key, value } of this.#table.range({ reverse: true, ...(cursor !== undefined ? { start: cursor, exclusiveStart: true } : {}) })) {
      if (!keep(value)) continue
      if (items.length === limit) return { items, next_cursor: last }
      items.push({ ...value, id: key })
      last = key
    }
    return { items, next_cursor: null }
  }
}
