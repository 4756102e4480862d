// Basic authentication against the users of [ingest].users (or the generated admin password).
// scrypt is slow on purpose: each check runs off the event loop, a verified header is remembered (by
// its SHA-256) for a minute, and each client address has a budget of checks that only successes give
// back, so a flood of wrong passwords is answered 429 before any scrypt runs.
import { createHash } from 'node:crypto'
import type { FastifyRequest } from 'fastify'
import type { ClientAddress } from '../client-address.js'
import type { Role } from '../config.js'
import { RateLimiter, TooManyRequests, type BucketSettings } from '../rate-limit.js'
import { verifyPassword } from './passwords.js'
import type { Authenticator, Principal } from './principal.js'

export interface BasicUser {
  name: string
  /** scrypt hash (passwords.ts). */
  password: string
  role: Role
}

export type CheckOutcome = 'valid' | 'invalid' | 'refused'

const CACHE_MS = 60_000
const CACHE_ENTRIES = 1024

export class BasicAuthenticator implements Authenticator {
  readonly mode = 'basic'
  readonly challenge = 'Basic realm="berth telemetry", charset="UTF-8"'
  readonly #users: Map<string, BasicUser>
  /**
   * Checked for unknown names too, so timing does not tell which names exist: a configured user's
   * hash (same cost parameters as every hash here), so no scrypt runs at start.
   */
  readonly #decoy: string
  readonly #verified = new Map<string, { principal: Principal, until: number }>()
  /** Password checks left per client address; a successful check is given back. */
  readonly #budget: RateLimiter
  readonly #clientOf: ClientAddress
  readonly #counted: (outcome: CheckOutcome) => void

  constructor (users: readonly BasicUser[], budget: BucketSettings, clientOf: ClientAddress, counted: (outcome: CheckOutcome) => void = () => {}) {
    this.#users = new Map(users.map(u => [u.name, u]))
    this.#decoy = users[0]?.password ?? ''
    this.#budget = new RateLimiter(budget)
    this.#clientOf = clientOf
    this.#counted = counted
  }

  /** Forget idle budgets (called every minute). */
  sweep (): void {
    this.#budget.sweep()
  }

  async authenticate (request: FastifyRequest): Promise<Principal | undefined> {
    const header = request.headers.authorization
    if (header === undefined || !/^basic /i.test(header)) return undefined
    const digest = createHash('sha256').update(header).digest('base64')
    const cached = this.#verified.get(digest)
    if (cached !== undefined && cached.until > Date.now()) return cached.principal
    const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8')
    const colon = decoded.indexOf(':')
    if (colon < 0) return undefined
    const client = this.#clientOf(request)
    const wait = this.#budget.take(client)
    if (wait > 0) {
      this.#counted('refused')
      throw new TooManyRequests(wait, `too many failed sign-ins from ${client}; retry in ${wait} s`)
    }
    const user = this.#users.get(decoded.slice(0, colon))
    const valid = await verifyPassword(decoded.slice(colon + 1), user?.password ?? this.#decoy)
    if (user === undefined || !valid) {
      this.#counted('invalid')
      return undefined
    }
    this.#counted('valid')
    this.#budget.giveBack(client)
    const principal = { name: user.name, role: user.role }
    if (this.#verified.size >= CACHE_ENTRIES) this.#verified.clear()
    this.#verified.set(digest, { principal, until: Date.now() + CACHE_MS })
    return principal
  }
}
