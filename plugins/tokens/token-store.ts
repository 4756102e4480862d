// Control API tokens: random secrets kept only as SHA-256 hashes in the control plane's state (LMDB,
// or etcd), checked in constant time, and the bootstrap admin token written 0600 to the state
// directory on first boot.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ADMIN_TOKEN_FILE, type KeyValueDatabase } from '../../kernel/index.js'
import type { Role } from './roles.js'

/** What is stored per token: never the token itself. */
export interface TokenRecord {
  id: string
  name: string
  role: Role
  /** Hex SHA-256 of the whole token. */
  hash: string
  created_at: string
  /** The admin token of `admin.token`; replaced when that file is deleted and the server restarts. */
  bootstrap?: boolean
  /** The projects a viewer's or deployer's token is limited to; absent: every project. */
  projects?: string[]
}

/** A token as listed: everything but the hash. */
export type TokenInfo = Omit<TokenRecord, 'hash'>

/** `berth_<12 hex id>_<43 base64url secret>`: the id finds the record, the hash proves the secret. */
const TOKEN_PATTERN = /^berth_([0-9a-f]{12})_[A-Za-z0-9_-]{43}$/
const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/
/** Compared against when the id is unknown, so a miss costs what a hit costs. */
const NO_HASH = Buffer.alloc(32)

function sha256 (token: string): Buffer {
  return createHash('sha256').update(token).digest()
}

function newToken (): { id: string, token: string } {
  const id = randomBytes(6).toString('hex')
  return { id, token: `berth_${id}_${randomBytes(32).toString('base64url')}` }
}

export function validTokenName (name: string): boolean {
  return NAME_PATTERN.test(name)
}

export class TokenStore {
  readonly #db: KeyValueDatabase<TokenRecord>

  constructor (db: KeyValueDatabase<TokenRecord>) {
    this.#db = db
  }

  /** The record of a presented token, or undefined when it is malformed, unknown or revoked. */
  verify (token: string): TokenRecord | undefined {
    const id = TOKEN_PATTERN.exec(token)?.[1]
    const record = id === undefined ? undefined : this.#db.get(id)
    const expected = record === undefined ? NO_HASH : Buffer.from(record.hash, 'hex')
    const matches = timingSafeEqual(sha256(token), expected)
    return matches && record !== undefined ? record : undefined
  }

  /** Create a token; the returned secret is shown once and never stored. */
  async create (name: string, role: Role, options: { bootstrap?: boolean, projects?: readonly string[] } = {}): Promise<{ info: TokenInfo, token: string }> {
    const { id, token } = newToken()
    const record: TokenRecord = { id, name, role, hash: sha256(token).toString('hex'), created_at: new Date().toISOString() }
    if (options.bootstrap === true) record.bootstrap = true
    if (options.projects !== undefined) record.projects = [...new Set(options.projects)].sort()
    await this.#db.put(id, record)
    const { hash: _hash, ...info } = record
    return { info, token }
  }

  list (): TokenInfo[] {
    return [...this.#db.getRange()].map(({ value: { hash: _hash, ...info } }) => info)
  }

  get (id: string): TokenRecord | undefined {
    return this.#db.get(id)
  }

  async revoke (id: string): Promise<void> {
    await this.#db.remove(id)
  }

  /**
   * Make sure `<stateDir>/admin.token` holds a valid admin token: keep the one there, or (first boot,
   * or after the file was deleted to rotate it) create a new one named `name` and revoke the previous
   * bootstrap token of that name.
   */
  async ensureAdminToken (stateDir: string, name = 'admin'): Promise<string> {
    const file = join(stateDir, ADMIN_TOKEN_FILE)
    if (existsSync(file)) {
      chmodSync(file, 0o600)
      const token = readFileSync(file, 'utf8').trim()
      const record = this.verify(token)
      if (record?.role === 'admin') return file
      if (TOKEN_PATTERN.test(token)) throw new Error(`${file} holds a token this server does not know; delete the file and restart to create a new admin token`)
      throw new Error(`${file} does not hold a Berth token; delete it and restart to create a new admin token`)
    }
    const previous = [...this.#db.getRange()].filter(({ value }) => value.bootstrap === true && value.name === name).map(({ key }) => key)
    const { token } = await this.create(name, 'admin', { bootstrap: true })
    for (const id of previous) await this.#db.remove(id)
    writeFileSync(file, `${token}\n`, { mode: 0o600, flag: 'wx' })
    return file
  }
}
