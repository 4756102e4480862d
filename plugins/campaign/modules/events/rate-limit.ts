// A per-client-address limit on the public pages' posts: at most `perMinute` in any sliding minute,
// counted in this process's memory (each instance counts its own). At most `maxAddresses` addresses
// are followed; when more arrive, the one seen longest ago is forgotten.
export class RateLimit {
  readonly #perMinute: number
  readonly #maxAddresses: number
  readonly #now: () => number
  /** The times of each address's recent posts, oldest first; the Map's order is the order last seen. */
  readonly #hits = new Map<string, number[]>()

  constructor (perMinute: number, maxAddresses = 10_000, now: () => number = Date.now) {
    this.#perMinute = perMinute
    this.#maxAddresses = maxAddresses
    this.#now = now
  }

  /** Count a post from `address`: 0 when allowed, else the seconds until it would be. */
  take (address: string): number {
    const now = this.#now()
    const recent = (this.#hits.get(address) ?? []).filter(at => at > now - 60_000)
    this.#hits.delete(address)
    if (recent.length >= this.#perMinute) {
      this.#hits.set(address, recent)
      return Math.max(1, Math.ceil((recent[0] + 60_000 - now) / 1000))
    }
    recent.push(now)
    this.#hits.set(address, recent)
    while (this.#hits.size > this.#maxAddresses) this.#hits.delete(this.#hits.keys().next().value as string)
    return 0
  }
}
