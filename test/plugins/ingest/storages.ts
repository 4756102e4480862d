// The ingest storage on each backend for tests of the contract itself: a fresh LMDB store in a temp
// directory, or a PostgreSQL storage on a fresh database (undefined, or failed under CI, without PostgreSQL).
import type { Test } from 'tap'
import { Store } from '../../../kernel/store.js'
import { TelemetryStore } from '../../../plugins/ingest/store.js'
import type { TelemetryStorage } from '../../../plugins/ingest/storage/contract.js'
import { LmdbStorage } from '../../../plugins/ingest/storage/lmdb.js'
import { PostgresStorage } from '../../../plugins/ingest/storage/postgres.js'
import { requirePostgres } from '../../support/postgres.js'
import { tempDir } from '../../support/tmp.js'

export type OpenStorage = (t: Test) => Promise<TelemetryStorage | undefined>

/** Each backend's name and how to open a fresh storage on it, closed when the test ends. */
export const STORAGE_BACKENDS: Array<[string, OpenStorage]> = [
  ['lmdb', async t => {
    const root = Store.open(tempDir(t))
    t.teardown(async () => { await root.close() })
    const storage = new LmdbStorage(new TelemetryStore(root.forPlugin('ingest')))
    await storage.open()
    return storage
  }],
  ['postgres', async t => {
    const url = await requirePostgres(t)
    if (url === undefined) return undefined
    const storage = new PostgresStorage(url)
    t.teardown(async () => { await storage.close() })
    await storage.open()
    return storage
  }]
]
