// Okapi BM25 ranking over passages, in memory: k1 = 1.2, b = 0.75, and the non-negative idf
// ln(1 + (N − n + 0.5) / (n + 0.5)). Text is lower-cased, split on anything but letters and digits,
// and common English stop words are dropped.
const K1 = 1.2
const B = 0.75

const STOP_WORDS = new Set(('a an and are as at be but by for from has have he her his how i in is it its of on or our she ' +
  'that the their them they this to was we were what when where which who why will with you your').split(' '))

export function tokenize (text: string): string[] {
  return text.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter(token => token !== '' && !STOP_WORDS.has(token))
}

interface Entry { length: number, frequencies: Map<string, number> }

export class Bm25Index {
  readonly #entries = new Map<string, Entry>()
  readonly #documentFrequency = new Map<string, number>()
  #totalLength = 0

  get size (): number {
    return this.#entries.size
  }

  /** Index `text` under `id`, replacing what was there. */
  add (id: string, text: string): void {
    this.remove(id)
    const tokens = tokenize(text)
    const frequencies = new Map<string, number>()
    for (const token of tokens) frequencies.set(token, (frequencies.get(token) ?? 0) + 1)
    for (const token of frequencies.keys()) this.#documentFrequency.set(token, (this.#documentFrequency.get(token) ?? 0) + 1)
    this.#entries.set(id, { length: tokens.length, frequencies })
    this.#totalLength += tokens.length
  }

  remove (id: string): void {
    const entry = this.#entries.get(id)
    if (entry === undefined) return
    for (const token of entry.frequencies.keys()) {
      const n = (this.#documentFrequency.get(token) ?? 1) - 1
      if (n === 0) this.#documentFrequency.delete(token)
      else this.#documentFrequency.set(token, n)
    }
    this.#totalLength -= entry.length
    this.#entries.delete(id)
  }

  /** The best `limit` entries for `query` among those `keep` accepts, highest score first; entries sharing no term are left out. */
  search (query: string, limit: number, keep: (id: string) => boolean = () => true): Array<{ id: string, score: number }> {
    const terms = [...new Set(tokenize(query))]
    const count = this.#entries.size
    if (terms.length === 0 || count === 0) return []
    const averageLength = this.#totalLength / count
    const idf = new Map(terms.map(term => {
      const n = this.#documentFrequency.get(term) ?? 0
      return [term, Math.log(1 + (count - n + 0.5) / (n + 0.5))]
    }))
    const scored: Array<{ id: string, score: number }> = []
    for (const [id, entry] of this.#entries) {
      let score = 0
      for (const term of terms) {
        const f = entry.frequencies.get(term) ?? 0
        if (f > 0) score += (idf.get(term) as number) * (f * (K1 + 1)) / (f + K1 * (1 - B + B * entry.length / averageLength))
      }
      if (score > 0 && keep(id)) scored.push({ id, score })
    }
    return scored.sort((a, b) => b.score - a.score || a.id.localeCompare(b.id)).slice(0, limit)
  }
}
