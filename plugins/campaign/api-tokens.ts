// API tokens for external clients of the server functions: an admin creates one for a role and sees
// its secret once; it is kept as a SHA-256 hash (compared in constant time) under its id, sent as
// `Authorization: Bearer bct_<id>_<secret>`, and revoked by id. A request carrying one acts as the
// token's role (no session cookie, nobody's identity-provider tokens); tokens are managed only by
// admins signed in themselves, never with a token.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import type { Role } from './roles.js'
import type { SessionRecord } from './sessions.js'
import type { Table } from './store/contract.js'

export interface ApiTokenRecord {
  id: string
  name: string
  role: Role
  /** SHA-256 of the secret, hex. */
  hash: string
  created_at: string
  created_by: string
  last_used_at?: string
}

/** A token as listings show it: never its hash. */
export type ApiTokenView = Omit<ApiTokenRecord, 'hash'>

const PREFIX = 'bct_'
const TOKEN = /^bct_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/
/** The subject of a request made with a token: `api-token:<id>`. */
export const TOKEN_SUBJECT = 'api-token:'
/** A token's last use is written at most this often (not at every call). */
const USE_RECORDED_MS = 60_000

function digest (secret: string): Buffer {
  return createHash('sha256').update(secret).digest()
}

function view ({ hash: _hash, ...rest }: ApiTokenRecord): ApiTokenView {
  return rest
}

export class ApiTokens {
  readonly #table: Table<ApiTokenRecord>
  /** When each token was last used, apart from its record: bookkeeping, like sign-ins, kept out of the audit log. */
  readonly #uses: Table<string>

  constructor (table: Table<ApiTokenRecord>, uses: Table<string>) {
    this.#table = table
    this.#uses = uses
  }

  /** A new token for `role`; its secret is in `token` and nowhere else. */
  async create (name: string, role: Role, by: string): Promise<ApiTokenView & { token: string }> {
    const id = randomBytes(8).toString('hex')
    const secret = randomBytes(32).toString('base64url')
    const record: ApiTokenRecord = { id, name, role, hash: digest(secret).toString('hex'), created_at: new Date().toISOString(), created_by: by }
    await this.#table.put(id, record)
    return { ...view(record), token: `${PREFIX}${id}_${secret}` }
  }

  async list (): Promise<ApiTokenView[]> {
    const uses = new Map((await this.#uses.list()).map(({ key, value }) => [key, value]))
    return (await this.#table.list()).map(({ value }) => view({ ...value, last_used_at: uses.get(value.id) ?? value.last_used_at })).sort((a, b) => a.created_at.localeCompare(b.created_at))
  }

  /** Revoke a token; false when there is none of that id. */
  async revoke (id: string): Promise<boolean> {
    if (!await this.#table.has(id)) return false
    await this.#table.remove(id)
    await this.#uses.remove(id)
    return true
  }

  /** The session a bearer token stands for, or undefined when it is not a live token. */
  async session (bearer: string): Promise<SessionRecord | undefined> {
    const match = TOKEN.exec(bearer)
    if (match === null) return undefined
    const record = await this.#table.get(match[1])
    if (record === undefined || !timingSafeEqual(digest(match[2]), Buffer.from(record.hash, 'hex'))) return undefined
    const now = Date.now()
    const lastUsed = await this.#uses.get(record.id) ?? record.last_used_at
    if (lastUsed === undefined || now - Date.parse(lastUsed) > USE_RECORDED_MS) await this.#uses.put(record.id, new Date(now).toISOString())
    return { sub: `${TOKEN_SUBJECT}${record.id}`, email: '', name: `API token ${record.name}`, role: record.role, access_token: '', refresh_token: '', id_token: '' }
  }
}
