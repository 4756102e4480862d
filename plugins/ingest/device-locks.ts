// Per-device write order: every read-modify-write of a device's records (ingest, registration,
// deletion, the offline check) runs while it holds the device's turn, so two writers never build on
// the same stale copy, and an ingest request sees the commits of the one before it. A holder takes
// the turns of all its devices at once (in one synchronous step, so two holders never wait on each
// other), and each device's holders run in arrival order.
export class DeviceLocks {
  readonly #tails = new Map<string, Promise<void>>()

  async run<T> (devices: Iterable<string>, fn: () => Promise<T>): Promise<T> {
    let release!: () => void
    const mine = new Promise<void>(resolve => { release = resolve })
    const ids = [...new Set(devices)]
    const before = ids.map(id => this.#tails.get(id))
    for (const id of ids) this.#tails.set(id, mine)
    try {
      await Promise.all(before)
      return await fn()
    } finally {
      release()
      for (const id of ids) if (this.#tails.get(id) === mine) this.#tails.delete(id)
    }
  }
}
