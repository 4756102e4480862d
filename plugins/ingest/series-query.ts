// Paginated reads: time ranges of one device's series ([device, from] .. [device, to], an opaque
// cursor), and lists in key order (devices, groups, OTA targets; the cursor is the last key); at most
// `limit` items per page, with an optional filter applied while reading.
import { BadRequest } from '../../kernel/index.js'
import { MAX_SERIES_CURSOR } from './keys.js'
import type { SeriesKey, SeriesKind, SeriesRecord, TelemetryStorage } from './storage/contract.js'

export const MAX_PAGE = 1000
export const DEFAULT_PAGE = 100

/** A page of a list: `limit` items after `cursor`. */
export interface ListQuery {
  limit?: string
  cursor?: string
}

export interface RangeQuery extends ListQuery {
  from?: string
  to?: string
}

export interface Page<T> {
  items: T[]
  /** Pass as `cursor` to get the next page; null on the last page. */
  next_cursor: string | null
}

/** Milliseconds since the epoch from an ISO 8601 date or a number of milliseconds. */
export function parseTime (name: string, value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback
  const ms = /^\d+$/.test(value) ? Number(value) : Date.parse(value)
  if (!Number.isFinite(ms)) throw new BadRequest(`${name} must be an ISO 8601 time or milliseconds since the epoch, got "${value}"`)
  return ms
}

export function parseLimit (value: string | undefined): number {
  if (value === undefined || value === '') return DEFAULT_PAGE
  const limit = Number(value)
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) throw new BadRequest(`limit must be an integer from 1 to ${MAX_PAGE}, got "${value}"`)
  return limit
}

/**
 * One page of a list in key order (`list(after)` gives the items after a key, `keyOf` an item's key):
 * at most `limit` of the items `keep` accepts, after `cursor`, the last key of the previous page (a
 * key of the form `cursorKey` says, such as "a device id").
 */
export async function keyPage<T> (list: (after?: string) => AsyncIterable<T>, keyOf: (item: T) => string, query: ListQuery, cursorKey: { pattern: RegExp, name: string }, keep: (item: T) => boolean = () => true): Promise<Page<T>> {
  const limit = parseLimit(query.limit)
  const { cursor } = query
  if (cursor !== undefined && !cursorKey.pattern.test(cursor)) throw new BadRequest(`cursor is not one this server issued (${cursorKey.name} from next_cursor)`)
  const items: T[] = []
  let last: string | undefined
  for await (const value of list(cursor)) {
    if (!keep(value)) continue
    if (items.length === limit) return { items, next_cursor: last ?? null }
    items.push(value)
    last = keyOf(value)
  }
  return { items, next_cursor: null }
}

/** A cursor: a key as base64url JSON, opaque to clients. */
export const encodeCursor = (key: unknown[]): string => Buffer.from(JSON.stringify(key)).toString('base64url')

/** A cursor back as the key it encodes, or 400 when it is not one `valid` accepts (`what`: the list it came from). */
export function decodeKeyCursor<T> (cursor: string, valid: (key: unknown[]) => boolean, what: string): T {
  let parsed: unknown
  try {
    parsed = cursor.length <= 256 ? JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) : undefined
  } catch {
    parsed = undefined
  }
  if (Array.isArray(parsed) && valid(parsed)) return parsed as T
  throw new BadRequest(`cursor is not one this server issued (next_cursor of ${what})`)
}

/** A cursor of `device`'s series back as its key: [device, received_at, sequence] or, for metrics, [..., entry index]. */
function decodeCursor (cursor: string, device: string): SeriesKey {
  if (cursor.length > MAX_SERIES_CURSOR) throw new BadRequest(`cursor must be at most ${MAX_SERIES_CURSOR} characters (one this server issued)`)
  let key: unknown
  try {
    key = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'))
  } catch {
    key = undefined
  }
  if (Array.isArray(key) && (key.length === 3 || key.length === 4) && key[0] === device && key.slice(1).every(k => Number.isSafeInteger(k) && k >= 0)) return key as SeriesKey
  throw new BadRequest('cursor is not one this server issued for this device')
}

export async function readSeries<K extends SeriesKind> (storage: TelemetryStorage, kind: K, device: string, query: RangeQuery, keep: (item: SeriesRecord[K]) => boolean = () => true): Promise<Page<SeriesRecord[K]>> {
  const from = parseTime('from', query.from, 0)
  const to = parseTime('to', query.to, Number.MAX_SAFE_INTEGER)
  const limit = parseLimit(query.limit)
  const after = query.cursor !== undefined && query.cursor !== '' ? decodeCursor(query.cursor, device) : undefined
  const items: Array<SeriesRecord[K]> = []
  let last: SeriesKey | undefined
  for await (const { key, value } of storage.series(kind, after ?? [device, from], to + 1, after !== undefined)) {
    if (!keep(value)) continue
    if (items.length === limit) return { items, next_cursor: Buffer.from(JSON.stringify(last)).toString('base64url') }
    items.push(value)
    last = key
  }
  return { items, next_cursor: null }
}

export const MAX_POINTS = 1000

export interface MetricPoint {
  /** Start of the bucket, ms since the epoch. */
  t: number
  min: number
  max: number
  avg: number
  count: number
}

/**
 * One metric key of a device over [from, to], in at most `points` buckets of equal width (the range
 * downsampled for a chart): each bucket's min, max, average and count of samples. Empty buckets are
 * left out. Without `to` the range ends now; without `from`, at the first sample.
 */
export async function metricPoints (storage: TelemetryStorage, device: string, query: Record<string, string | undefined>): Promise<{ key: string, from: number, to: number, bucket_ms: number, points: MetricPoint[] }> {
  const key = query.key
  if (key === undefined || key === '') throw new BadRequest('key is required (the metric\'s name)')
  const to = parseTime('to', query.to, Date.now())
  let first: number | undefined
  for await (const { value } of storage.series('metrics', [device, 0], to + 1)) {
    first = value.received_at
    break
  }
  const from = parseTime('from', query.from, first ?? to)
  if (from > to) throw new BadRequest('from must not be after to')
  const wanted = query.points === undefined || query.points === '' ? 200 : Number(query.points)
  if (!Number.isInteger(wanted) || wanted < 1 || wanted > MAX_POINTS) throw new BadRequest(`points must be an integer from 1 to ${MAX_POINTS}, got "${query.points ?? ''}"`)
  const bucketMs = Math.max(1, Math.ceil((to - from + 1) / wanted))
  const buckets = new Map<number, MetricPoint>()
  for await (const { value } of storage.series('metrics', [device, from], to + 1)) {
    if (value.key !== key) continue
    const start = from + Math.floor((value.received_at - from) / bucketMs) * bucketMs
    const bucket = buckets.get(start)
    if (bucket === undefined) {
      buckets.set(start, { t: start, min: value.value, max: value.value, avg: value.value, count: 1 })
    } else {
      bucket.min = Math.min(bucket.min, value.value)
      bucket.max = Math.max(bucket.max, value.value)
      bucket.avg += (value.value - bucket.avg) / ++bucket.count
    }
  }
  return { key, from, to, bucket_ms: bucketMs, points: [...buckets.values()] }
}
