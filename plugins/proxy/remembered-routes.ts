// The last routing table the container engine gave, kept in the proxy's own store: written whenever it
// changes, read when a server starts while the engine does not answer, so that the containers still
// running go on being served until the engine answers again.
import type { KeyValueDatabase } from '../../kernel/index.js'
import type { RouteRecord } from './route-table.js'

export interface RememberedTable {
  /** When this table was built (ms since the epoch): it has not changed since. */
  at: number
  routes: RouteRecord[]
}

const KEY = 'last'

export class RememberedRoutes {
  readonly #db: KeyValueDatabase<RememberedTable>
  /** The JSON of the routes last written, to write only a change. */
  #written: string | undefined
  #at = 0

  constructor (db: KeyValueDatabase<RememberedTable>) {
    this.#db = db
    const stored = db.get(KEY)
    if (stored === undefined) return
    this.#written = JSON.stringify(stored.routes)
    this.#at = stored.at
  }

  /** When the table kept was built (ms since the epoch; 0: none is kept). */
  since (): number {
    return this.#at
  }

  /** The table kept, if any was. */
  recall (): RememberedTable | undefined {
    return this.#db.get(KEY)
  }

  /** Keep `routes` as the last table, unless it is the one kept already. */
  async keep (routes: RouteRecord[]): Promise<void> {
    const json = JSON.stringify(routes)
    if (json === this.#written) return
    this.#written = json
    this.#at = Date.now()
    await this.#db.put(KEY, { at: this.#at, routes })
  }
}
