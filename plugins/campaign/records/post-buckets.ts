// Counts over the post stream kept as posts are written, so that a sentiment summary reads buckets
// instead of posts: per hour and source the posts of each label and the sum of their polarities (in
// thousandths, exact in any order), and per hour and per day and source, for each term of three
// characters or more, the posts of each label holding it. A term held by one post of the whole stream
// is kept out of the buckets (it can never be held by two posts of any range, so no summary ranks it)
// until a second post holds it; a register of terms says which are in. The buckets change in the
// transaction that writes or evicts the posts, and are built from the posts when a store has none.
import { createHash } from 'node:crypto'
import type { Table, Transaction } from '../store/contract.js'
import type { Bucket } from './hourly.js'
import type { Post } from './posts.js'

export type Label = Post['label']
export const LABELS: readonly Label[] = ['positive', 'negative', 'neutral']

/** Posts by label, and the sum of their polarities in thousandths (the engine gives polarity to three decimals). */
export interface Mood { count: number, positive: number, negative: number, neutral: number, polarity: number }

/** The tables the buckets live in, beside `posts`. */
export const POST_HOURS = 'post-hours'
export const POST_HOUR_TERMS = 'post-hour-terms'
export const POST_DAY_TERMS = 'post-day-terms'
export const POST_TERMS = 'post-terms'
export const POST_BUCKETS_STATE = 'post-buckets'
export const POST_BUCKET_TABLES = [POST_HOURS, POST_HOUR_TERMS, POST_DAY_TERMS, POST_TERMS, POST_BUCKETS_STATE] as const
/** The buckets' layout: a store whose buckets were built for another one builds them again. */
export const BUCKETS_VERSION = 1
const STATE_KEY = 'state'

/** Terms shorter than this are never ranked, so never counted. */
export const MIN_TERM_CHARS = 3

/** Stored per hour: each source's mood. */
interface HourMoods { sources: Array<{ source: string } & Mood> }
/** A term with the posts of each label holding it. */
type TermCounts = [term: string, positive: number, negative: number, neutral: number]
/** Stored per hour and per day: each source's terms. */
interface PeriodTerms { sources: Array<{ source: string, terms: TermCounts[] }> }
/** A term of the register: how many posts of the stream hold it; until it is in the buckets (`listed`), where its one post is. */
interface TermEntry { posts: number, listed?: true, first?: { hour: string, source: string, label: Label } }
export interface BucketsState { version: number }

export const emptyMood = (): Mood => ({ count: 0, positive: 0, negative: 0, neutral: 0, polarity: 0 })
/** A polarity in thousandths; one that is not a number (stored as JSON's null) counts as 0, as adding it to a sum did. */
const thousandths = (polarity: number | null): number => Number.isFinite(polarity) ? Math.round((polarity as number) * 1000) : 0

function addMood (to: Mood, from: Mood, sign = 1): void {
  to.count += sign * from.count
  to.positive += sign * from.positive
  to.negative += sign * from.negative
  to.neutral += sign * from.neutral
  to.polarity += sign * from.polarity
}

/** The mood of one post. */
function moodOf (post: Post): Mood {
  const mood = emptyMood()
  mood.count = 1
  mood[post.label] = 1
  mood.polarity = thousandths(post.polarity)
  return mood
}

/** The hour of an ISO time, `YYYY-MM-DDTHH` (UTC), as bucket keys hold it. */
export const hourOf = (iso: string): string => iso.slice(0, 13)
const dayOf = (hour: string): string => hour.slice(0, 10)
const HOUR_MS = 3_600_000
const DAY_MS = 86_400_000
const hourKeyAt = (ms: number): string => hourOf(new Date(ms).toISOString())
const dayKeyAt = (ms: number): string => dayOf(hourKeyAt(ms))
/** The start of a bucket (hour or day) holding `hour`, as an ISO time. */
export const slotOf = (hour: string, bucket: Bucket): string => bucket === 'hour' ? `${hour}:00:00.000Z` : `${dayOf(hour)}T00:00:00.000Z`
const termsOf = (post: Post): string[] => post.terms.filter(term => term.length >= MIN_TERM_CHARS)
/** The register's key of a term: the term, or a digest of a long one (keys are bounded). */
const registerKey = (term: string): string => term.length <= 200 ? term : `#${createHash('sha256').update(term).digest('hex')}`

/** What a summary counts: everything, per series slot, per source, and per label the posts holding each term. */
export class Tally {
  readonly bucket: Bucket
  readonly all = emptyMood()
  readonly slots = new Map<string, Mood>()
  readonly sources = new Map<string, Mood>()
  readonly terms: Record<Label, Map<string, number>> = { positive: new Map(), negative: new Map(), neutral: new Map() }

  constructor (bucket: Bucket) {
    this.bucket = bucket
  }

  /** The mood of `source`'s posts in `hour`. */
  addMood (hour: string, source: string, mood: Mood): void {
    addMood(this.all, mood)
    const slot = slotOf(hour, this.bucket)
    addMood(mapped(this.slots, slot, emptyMood), mood)
    addMood(mapped(this.sources, source, emptyMood), mood)
  }

  addTerm (term: string, label: Label, posts: number): void {
    if (posts !== 0) this.terms[label].set(term, (this.terms[label].get(term) ?? 0) + posts)
  }

  addPost (post: Post): void {
    this.addMood(hourOf(post.posted_at), post.source, moodOf(post))
    for (const term of termsOf(post)) this.addTerm(term, post.label, 1)
  }
}

function mapped<K, V> (map: Map<K, V>, key: K, make: () => V): V {
  let value = map.get(key)
  if (value === undefined) {
    value = make()
    map.set(key, value)
  }
  return value
}

const COUNT_AT = { positive: 1, negative: 2, neutral: 3 } as const
const addCounts = (counts: TermCounts, label: Label, n: number): void => { counts[COUNT_AT[label]] += n }

/**
 * The changes one transaction makes to the buckets: posts added and removed, applied to the register
 * as they come, and to the buckets at `write`. `empty` says the tables are known to be empty (a build),
 * so nothing is read from them.
 */
export class BucketChanges {
  readonly #tx: Transaction
  readonly #empty: boolean
  readonly #moods = new Map<string, Map<string, Mood>>()
  readonly #hourTerms = new Map<string, Map<string, Map<string, TermCounts>>>()
  readonly #dayTerms = new Map<string, Map<string, Map<string, TermCounts>>>()
  /** The register's entries read or changed (null: none). */
  readonly #register = new Map<string, TermEntry | null>()

  constructor (tx: Transaction, { empty = false }: { empty?: boolean } = {}) {
    this.#tx = tx
    this.#empty = empty
  }

  /** A post written (`sign` 1) or removed (-1). */
  async post (post: Post, sign: 1 | -1): Promise<void> {
    const hour = hourOf(post.posted_at)
    addMood(mapped(mapped(this.#moods, hour, () => new Map()), post.source, emptyMood), moodOf(post), sign)
    for (const term of termsOf(post)) {
      const key = registerKey(term)
      const entry = await this.#entry(key)
      if (sign === 1) {
        if (entry === null) this.#register.set(key, { posts: 1, first: { hour, source: post.source, label: post.label } })
        else {
          if (entry.listed !== true && entry.first !== undefined) this.#count(entry.first.hour, entry.first.source, term, entry.first.label, 1)
          this.#register.set(key, { posts: entry.posts + 1, listed: true })
          this.#count(hour, post.source, term, post.label, 1)
        }
      } else if (entry !== null) {
        if (entry.listed === true) this.#count(hour, post.source, term, post.label, -1)
        this.#register.set(key, entry.posts <= 1 ? null : { ...entry, posts: entry.posts - 1 })
      }
    }
  }

  /** Write every change: the register's entries, and each bucket read, changed and written back (or removed once empty). */
  async write (): Promise<void> {
    const register = this.#tx.table<TermEntry>(POST_TERMS)
    for (const [key, entry] of this.#register) {
      if (entry === null) await register.remove(key)
      else await register.put(key, entry)
    }
    const hours = this.#tx.table<HourMoods>(POST_HOURS)
    for (const [hour, bySource] of this.#moods) {
      const moods = new Map((await this.#read(hours, hour))?.sources.map(({ source, ...mood }) => [source, mood]))
      for (const [source, change] of bySource) addMood(mapped(moods, source, emptyMood), change)
      const sources = [...moods].filter(([, mood]) => mood.count !== 0).sort(([a], [b]) => compare(a, b)).map(([source, mood]) => ({ source, ...mood }))
      if (sources.length === 0) await hours.remove(hour)
      else await hours.put(hour, { sources })
    }
    await this.#writeTerms(this.#tx.table<PeriodTerms>(POST_HOUR_TERMS), this.#hourTerms)
    await this.#writeTerms(this.#tx.table<PeriodTerms>(POST_DAY_TERMS), this.#dayTerms)
  }

  async #entry (key: string): Promise<TermEntry | null> {
    const known = this.#register.get(key)
    if (known !== undefined) return known
    const entry = this.#empty ? null : await this.#tx.table<TermEntry>(POST_TERMS).get(key) ?? null
    this.#register.set(key, entry)
    return entry
  }

  /** `n` more (or fewer) posts of `label` by `source` in `hour` holding `term`, in the hour's and the day's buckets. */
  #count (hour: string, source: string, term: string, label: Label, n: number): void {
    for (const [periods, period] of [[this.#hourTerms, hour], [this.#dayTerms, dayOf(hour)]] as const) {
      addCounts(mapped(mapped(mapped(periods, period, () => new Map()), source, () => new Map()), term, (): TermCounts => [term, 0, 0, 0]), label, n)
    }
  }

  async #read<V> (table: Table<V>, key: string): Promise<V | undefined> {
    return this.#empty ? undefined : await table.get(key)
  }

  async #writeTerms (table: Table<PeriodTerms>, changes: Map<string, Map<string, Map<string, TermCounts>>>): Promise<void> {
    for (const [period, bySource] of changes) {
      const stored = new Map((await this.#read(table, period))?.sources.map(({ source, terms }) => [source, new Map(terms.map(counts => [counts[0], counts]))]))
      for (const [source, terms] of bySource) {
        const kept = mapped(stored, source, () => new Map<string, TermCounts>())
        for (const [term, change] of terms) {
          const counts = mapped(kept, term, (): TermCounts => [term, 0, 0, 0])
          for (const label of LABELS) addCounts(counts, label, change[COUNT_AT[label]])
          if (counts[1] === 0 && counts[2] === 0 && counts[3] === 0) kept.delete(term)
        }
      }
      const sources = [...stored].filter(([, terms]) => terms.size > 0).sort(([a], [b]) => compare(a, b))
        .map(([source, terms]) => ({ source, terms: [...terms.values()].sort((a, b) => compare(a[0], b[0])) }))
      if (sources.length === 0) await table.remove(period)
      else await table.put(period, { sources })
    }
  }
}

const compare = (a: string, b: string): number => a < b ? -1 : a > b ? 1 : 0

/** Whether the store's buckets are built, for this layout. */
export async function bucketsReady (tx: Transaction): Promise<boolean> {
  return (await tx.table<BucketsState>(POST_BUCKETS_STATE).get(STATE_KEY))?.version === BUCKETS_VERSION
}

/** Empty the bucket tables, count every post of `posts` into them and mark them built (inside the transaction holding the post stream). */
export async function buildBuckets (tx: Transaction, posts: AsyncIterable<Post>): Promise<void> {
  for (const name of POST_BUCKET_TABLES) {
    const table = tx.table<unknown>(name)
    for await (const { key } of table.range()) await table.remove(key)
  }
  const changes = new BucketChanges(tx, { empty: true })
  for await (const post of posts) await changes.post(post, 1)
  await changes.write()
  await tx.table<BucketsState>(POST_BUCKETS_STATE).put(STATE_KEY, { version: BUCKETS_VERSION })
}

/** What a range of the stream is read from: whole hours from the buckets, the posts of the hours it starts or ends inside. */
export interface RangePlan {
  /** Posts to read one by one: [from, to] inclusive, in milliseconds. */
  posts: Array<{ from: number, to: number }>
  /** Hours whose moods are read, [start, end) as hour keys (undefined: open). */
  hours?: { start?: string, end?: string }
  /** Days and hours whose terms are read. */
  dayTerms?: { start?: string, end?: string }
  hourTerms: Array<{ start?: string, end?: string }>
}

/** How a summary reads the range from `from` to `to` (inclusive, milliseconds; undefined: open). */
export function planRange (from: number | undefined, to: number | undefined): RangePlan {
  const start = from === undefined ? -Infinity : Math.ceil(from / HOUR_MS) * HOUR_MS
  const end = to === undefined ? Infinity : Math.floor((to + 1) / HOUR_MS) * HOUR_MS
  if (start >= end) return { posts: [{ from: from as number, to: to as number }], hourTerms: [] }
  const key = (ms: number, of: (ms: number) => string): string | undefined => Number.isFinite(ms) ? of(ms) : undefined
  const posts = [
    ...(from !== undefined && from < start ? [{ from, to: start - 1 }] : []),
    ...(to !== undefined && end <= to ? [{ from: end, to }] : [])
  ]
  const hours = { start: key(start, hourKeyAt), end: key(end, hourKeyAt) }
  const firstDay = from === undefined ? -Infinity : Math.ceil(from / DAY_MS) * DAY_MS
  const lastDay = to === undefined ? Infinity : Math.floor((to + 1) / DAY_MS) * DAY_MS
  if (firstDay >= lastDay) return { posts, hours, hourTerms: [hours] }
  const hourTerms = [
    ...(start < firstDay ? [{ start: hours.start, end: key(firstDay, hourKeyAt) }] : []),
    ...(lastDay < end ? [{ start: key(lastDay, hourKeyAt), end: hours.end }] : [])
  ]
  return { posts, hours, dayTerms: { start: key(firstDay, dayKeyAt), end: key(lastDay, dayKeyAt) }, hourTerms }
}

/** Add the buckets a plan reads to `tally` (one source, or all). */
export async function tallyBuckets (tx: Transaction, plan: RangePlan, tally: Tally, source: string | undefined): Promise<void> {
  const bounds = (range: { start?: string, end?: string }): { start?: string, end?: string } =>
    ({ ...(range.start !== undefined ? { start: range.start } : {}), ...(range.end !== undefined ? { end: range.end } : {}) })
  const wanted = (entry: { source: string }): boolean => source === undefined || entry.source === source
  if (plan.hours !== undefined) {
    for (const { key, value } of await tx.table<HourMoods>(POST_HOURS).list(bounds(plan.hours))) {
      for (const { source: from, ...mood } of value.sources) if (wanted({ source: from })) tally.addMood(key, from, mood)
    }
  }
  const terms = [
    ...(plan.dayTerms !== undefined ? [{ table: POST_DAY_TERMS, range: plan.dayTerms }] : []),
    ...plan.hourTerms.map(range => ({ table: POST_HOUR_TERMS, range }))
  ]
  for (const { table, range } of terms) {
    for (const { value } of await tx.table<PeriodTerms>(table).list(bounds(range))) {
      for (const entry of value.sources) {
        if (!wanted(entry)) continue
        for (const [term, positive, negative, neutral] of entry.terms) {
          tally.addTerm(term, 'positive', positive)
          tally.addTerm(term, 'negative', negative)
          tally.addTerm(term, 'neutral', neutral)
        }
      }
    }
  }
}
