// HTTP basic authentication against bcrypt hashes (`htpasswd -nbB` entries). bcrypt is slow by
// design, so credentials that passed are remembered for a while (by a keyed hash of the header,
// never the password itself) and an unknown user is checked against a hash too, so that timing does
// not tell which users exist. A rate limit in the same middleware bounds what guessing costs.
import { createHmac, randomBytes } from 'node:crypto'
import bcrypt from 'bcryptjs'

/** How long credentials that passed are taken without bcrypt again. */
const REMEMBER_MS = 5 * 60_000
/** Credentials remembered at most (the oldest are forgotten first). */
const REMEMBERED = 1000
/** Checked for unknown users (the hash of no password anyone has), so they cost what known ones do; made when first needed. */
let decoy: string | undefined

export class BasicAuth {
  readonly #users: Map<string, string>
  readonly #key = randomBytes(32)
  readonly #passed = new Map<string, number>()

  /** `entries`: `user:bcrypt-hash`. */
  constructor (entries: readonly string[]) {
    this.#users = new Map(entries.map(entry => {
      const colon = entry.indexOf(':')
      return [entry.slice(0, colon), entry.slice(colon + 1)]
    }))
  }

  /** Whether an Authorization header value names a user with their password. */
  async admits (authorization: string | undefined): Promise<boolean> {
    const match = /^basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(authorization ?? '')
    if (match === null) return false
    const remembered = createHmac('sha256', this.#key).update(match[1]).digest('base64')
    const until = this.#passed.get(remembered)
    const now = Date.now()
    if (until !== undefined && until > now) return true
    const decoded = Buffer.from(match[1], 'base64').toString('utf8')
    const colon = decoded.indexOf(':')
    if (colon < 0) return false
    const hash = this.#users.get(decoded.slice(0, colon))
    const passed = await bcrypt.compare(decoded.slice(colon + 1), hash ?? (decoy ??= bcrypt.hashSync(randomBytes(16).toString('hex'), 10)))
    if (!passed || hash === undefined) return false
    this.#passed.delete(remembered)
    this.#passed.set(remembered, now + REMEMBER_MS)
    if (this.#passed.size > REMEMBERED) this.#passed.delete(this.#passed.keys().next().value as string)
    return true
  }
}
