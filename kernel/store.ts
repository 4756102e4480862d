// State: one LMDB environment in the state directory; each plugin opens its own named databases.
// A write whose promise has resolved is committed and survives `kill -9` of the process.
import { chmodSync, existsSync, mkdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { open, type Database, type Key, type RootDatabase } from 'lmdb'
import { StartupError, messageOf } from './errors.js'

export const STORE_FILE = 'berth.mdb'

export interface DatabaseOptions {
  /** Several values per key, kept sorted (lmdb dupSort). */
  dupSort?: boolean
  /** Value encoding; msgpack (the default) keeps structure, 'binary' stores Buffers as they are. */
  encoding?: 'msgpack' | 'json' | 'string' | 'binary' | 'ordered-binary'
}

/** The store as one plugin sees it. */
export interface PluginStore {
  /** Open (creating if needed) the plugin's database `name`. */
  db<V = unknown, K extends Key = Key>(name: string, options?: DatabaseOptions): Database<V, K>
  /**
   * Run `fn` in one write transaction across databases; resolves with its result after the commit.
   * If `fn` throws, none of its writes are committed and the promise rejects with that error.
   */
  transaction<T>(fn: () => T): Promise<T>
  /** Copy a consistent snapshot of the whole environment to `path` while writes continue. */
  backup(path: string): Promise<void>
}

/** Create the state directory (0700) or explain in one line why it cannot be used. */
export function prepareStateDir (dir: string): void {
  try {
    if (existsSync(dir)) {
      if (!statSync(dir).isDirectory()) throw new Error('not a directory')
    } else {
      mkdirSync(dir, { recursive: true, mode: 0o700 })
    }
  } catch (err) {
    throw new StartupError(`state directory ${dir} cannot be used: ${messageOf(err)}`)
  }
}

export class Store {
  readonly #root: RootDatabase
  readonly path: string

  private constructor (root: RootDatabase, path: string) {
    this.#root = root
    this.path = path
  }

  /** Open the environment in `stateDir`; its files are readable by the owner only. */
  static open (stateDir: string): Store {
    prepareStateDir(stateDir)
    const path = join(stateDir, STORE_FILE)
    let root: RootDatabase
    try {
      root = open({ path, maxDbs: 512, compression: false })
    } catch (err) {
      throw new StartupError(`state directory ${stateDir} cannot be used: ${messageOf(err)}`)
    }
    for (const file of [path, `${path}-lock`]) {
      if (existsSync(file)) chmodSync(file, 0o600)
    }
    return new Store(root, path)
  }

  /** The view of one plugin: database names are prefixed with the plugin's name. */
  forPlugin (plugin: string): PluginStore {
    return {
      db: <V, K extends Key>(name: string, options: DatabaseOptions = {}) =>
        this.#root.openDB<V, K>({ name: `${plugin}/${name}`, ...options }),
      // A child transaction: lmdb's plain transaction() commits the writes a callback made before
      // it threw, together with the rest of the batch; a child transaction is aborted instead.
      transaction: async <T>(fn: () => T) => await this.#root.childTransaction(fn),
      backup: async (path: string) => { await this.#root.backup(path, false) }
    }
  }

  async close (): Promise<void> {
    await this.#root.close()
  }
}
