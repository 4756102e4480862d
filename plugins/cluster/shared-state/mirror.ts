// The in-memory copy of one database of the shared store, which every read is served from: encoded
// values in key order (UTF-8 byte order, as LMDB sorts string keys), each with the etcd revision that
// wrote it, so a change is applied once whichever brings it first, etcd's answer to this master's
// write or the watch.
import type { KeyRange } from '../../../kernel/index.js'

/** A pending write of a transaction: the encoded value, or null for a removal. */
export type PendingValue = Buffer | null

/** Surrogates (code points above U+FFFF) rank after U+E000–U+FFFF, as their UTF-8 bytes do. */
const unitRank = (unit: number): number => unit >= 0xE000 ? unit - 0x800 : unit >= 0xD800 ? unit + 0x2000 : unit

/** Order of strings by their UTF-8 bytes (JavaScript's own order, by UTF-16 units, differs above U+D7FF). */
export function compareKeys (a: string, b: string): number {
  const length = Math.min(a.length, b.length)
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i)
    const y = b.charCodeAt(i)
    if (x !== y) return unitRank(x) - unitRank(y)
  }
  return a.length - b.length
}

/** Whether `key` lies within `range` (LMDB's bounds: start inclusive, end exclusive, swapped when reversed). */
function within (key: string, { start, end, reverse = false }: KeyRange): boolean {
  const sign = reverse ? -1 : 1
  return (start === undefined || sign * compareKeys(key, start) >= 0) && (end === undefined || sign * compareKeys(key, end) < 0)
}

interface Entry { value: Buffer, revision: number }

export class MirrorTable {
  /** Keys in order. */
  readonly #keys: string[] = []
  readonly #entries = new Map<string, Entry>()
  /** Removals this master made that the watch has not shown yet: key → revision. */
  readonly #removed = new Map<string, number>()

  get (key: string): Buffer | undefined {
    return this.#entries.get(key)?.value
  }

  /** The revision of the latest change of `key` known here (0: none). */
  #revision (key: string): number {
    return this.#entries.get(key)?.revision ?? this.#removed.get(key) ?? 0
  }

  /** Index of the first key not below `key` (`after`: above it). */
  #bound (key: string, after: boolean): number {
    let low = 0
    let high = this.#keys.length
    while (low < high) {
      const middle = (low + high) >>> 1
      const order = compareKeys(this.#keys[middle], key)
      if (order < 0 || (after && order === 0)) low = middle + 1
      else high = middle
    }
    return low
  }

  /** Set `key` as of `revision`, unless a change as recent is known. */
  put (key: string, value: Buffer, revision: number): void {
    if (this.#revision(key) >= revision) return
    this.#removed.delete(key)
    if (!this.#entries.has(key)) this.#keys.splice(this.#bound(key, false), 0, key)
    this.#entries.set(key, { value, revision })
  }

  /**
   * Remove `key` as of `revision`, unless a change as recent is known. `remember`: the watch has not
   * shown it yet, so older changes it brings later must not bring the key back.
   */
  remove (key: string, revision: number, remember: boolean): void {
    if (this.#revision(key) >= revision) return
    if (this.#entries.delete(key)) this.#keys.splice(this.#bound(key, false), 1)
    if (remember) this.#removed.set(key, revision)
  }

  /** The watch has shown every change up to `revision`: forget removals it has shown. */
  watchedUpTo (revision: number): void {
    for (const [key, removedAt] of this.#removed) if (removedAt <= revision) this.#removed.delete(key)
  }

  /** Entries of `range` in order; `pending` (a transaction's writes, by key) laid over them. */
  range (range: KeyRange = {}, pending?: ReadonlyMap<string, PendingValue>): Array<[string, Buffer]> {
    if (pending === undefined || pending.size === 0) return this.#stored(range)
    const merged = new Map(this.#stored({ ...range, limit: undefined }))
    for (const [key, value] of pending) {
      if (!within(key, range)) continue
      if (value === null) merged.delete(key)
      else merged.set(key, value)
    }
    const sign = range.reverse === true ? -1 : 1
    return [...merged].sort(([a], [b]) => sign * compareKeys(a, b)).slice(0, range.limit)
  }

  #stored ({ start, end, reverse = false, limit = Infinity }: KeyRange): Array<[string, Buffer]> {
    const found: Array<[string, Buffer]> = []
    const take = (index: number): void => { found.push([this.#keys[index], (this.#entries.get(this.#keys[index]) as Entry).value]) }
    if (reverse) {
      const low = end === undefined ? 0 : this.#bound(end, true)
      for (let i = (start === undefined ? this.#keys.length : this.#bound(start, true)) - 1; i >= low && found.length < limit; i--) take(i)
    } else {
      const high = end === undefined ? this.#keys.length : this.#bound(end, false)
      for (let i = start === undefined ? 0 : this.#bound(start, false); i < high && found.length < limit; i++) take(i)
    }
    return found
  }
}
