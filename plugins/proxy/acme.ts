// Ordering certificates over ACME with acme-client (RFC 8555, JWS and retries of bad nonces done by
// a maintained library): one account per cluster, kept in the control plane's state; HTTP-01
// challenges answered by the proxy's HTTP listener from the tokens held here while an order runs.
// acme-client is loaded with the first order, not when the server starts. Failures name their
// cause: the ACME server's problem (its type and detail), or why it could not be reached (refused,
// DNS, TLS trust, timeout), found by asking for its directory once an order failed. An order fails
// at once and the certificate manager retries it with backoff: acme-client's own retries (75 s of
// them on a refused connection, ending in an error that hides the cause) are off. An account the
// ACME server no longer knows (it was reset) is registered again, and the order with it.
import type { KeyValueDatabase } from '../../kernel/index.js'
import { readFileSync } from 'node:fs'
import { Agent, get } from 'node:https'
import type acme from 'acme-client'
import type { Logger } from 'pino'

type Acme = typeof acme
/** An answer of the ACME server, as acme-client's axios instance gives it. */
type AcmeResponse = Parameters<NonNullable<Parameters<Acme['axios']['interceptors']['response']['use']>[0]>>[0]
/** acme-client keeps its retry settings beside axios's defaults. */
type AcmeDefaults = Acme['axios']['defaults'] & { acmeSettings: { retryMaxAttempts: number } }

let loaded: Promise<Acme> | undefined
async function acmeClient (): Promise<Acme> {
  loaded ??= import('acme-client').then(module => {
    const client = module.default
    const defaults = client.axios.defaults as AcmeDefaults
    defaults.timeout = REQUEST_TIMEOUT_MS
    defaults.acmeSettings.retryMaxAttempts = 0
    client.axios.interceptors.response.use(problemAsError)
    return client
  })
  return await loaded
}

/** Longest wait for one answer of the ACME server. */
const REQUEST_TIMEOUT_MS = 30_000
/** Longest wait for the directory when finding out why an order failed. */
const REACH_TIMEOUT_MS = 10_000
const PROBLEM = 'urn:ietf:params:acme:error:'
const ACCOUNT_DOES_NOT_EXIST = `${PROBLEM}accountDoesNotExist`

/** An order failed for a reason already named (a problem the ACME server reported, an unreadable CA file). */
export class AcmeError extends Error {}

/** A problem document the ACME server answered with (RFC 8555, section 6.7). */
export class AcmeProblem extends AcmeError {
  readonly type: string

  constructor (type: string, detail: string) {
    const name = type.startsWith(PROBLEM) ? type.slice(PROBLEM.length) : type
    super(name === 'rateLimited'
      ? `the ACME server's rate limit is reached: ${detail}`
      : `the ACME server answered ${name}: ${detail === '' ? 'no detail' : detail}`)
    this.type = type
  }
}

/** Every problem document but badNonce (which acme-client retries itself) becomes an AcmeProblem, with its type. */
function problemAsError (response: AcmeResponse): AcmeResponse {
  const data = response.data as { type?: unknown, detail?: unknown } | null | undefined
  if (response.status < 400 || typeof data?.type !== 'string' || data.type === `${PROBLEM}badNonce`) return response
  throw new AcmeProblem(data.type, typeof data.detail === 'string' ? data.detail.replace(/\n/g, ' ') : '')
}

/** Why a connection failed, by its error code. */
const CONNECTION_FAILURES: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'refused the connection',
  ECONNRESET: 'closed the connection',
  ENOTFOUND: 'has a name that does not resolve (DNS)',
  EAI_AGAIN: 'has a name DNS could not resolve just now',
  ETIMEDOUT: `did not answer within ${REACH_TIMEOUT_MS / 1000} s`,
  EHOSTUNREACH: 'cannot be reached (no route to its host)',
  ENETUNREACH: 'cannot be reached (no route to its network)'
}

/** The phrase for a failed request to the ACME server: `<directory> <phrase> (<code>)`. */
function unreachable (code: string, message: string): string {
  const known = CONNECTION_FAILURES[code]
  if (known !== undefined) return known
  if (/CERT|SELF_SIGNED|UNABLE_TO_(VERIFY|GET_ISSUER)/.test(code)) return 'presented a certificate this server does not trust ([acme].ca_file names the CAs of a private ACME server)'
  return `could not be reached: ${message}`
}

export interface AcmeSettings {
  directory: string
  /** Contact e-mail; empty: none. */
  email: string
  /** PEM file of CAs to trust for the directory (a private ACME server); empty: the system's. */
  caFile: string
}

interface Account {
  directory: string
  key: string
  url?: string
}

export class AcmeIssuer {
  readonly #settings: AcmeSettings
  readonly #accounts: KeyValueDatabase<Account>
  readonly #log: Logger
  /** HTTP-01 tokens of orders in progress: token → key authorization (in the shared state, so that every master answers them). */
  readonly challenges: KeyValueDatabase<string>
  #client: acme.Client | undefined
  #agent: Agent | undefined

  constructor (settings: AcmeSettings, stores: { accounts: KeyValueDatabase<Account>, challenges: KeyValueDatabase<string> }, log: Logger) {
    this.#settings = settings
    this.#accounts = stores.accounts
    this.challenges = stores.challenges
    this.#log = log
  }

  get directory (): string {
    return this.#settings.directory
  }

  async #account (): Promise<acme.Client> {
    if (this.#client !== undefined) return this.#client
    const acme = await acmeClient()
    const { directory, caFile } = this.#settings
    // Read when first needed (and again after a failure): a missing file fails this order, which is retried, not the server's start.
    if (caFile !== '') {
      let ca: string
      try {
        ca = readFileSync(caFile, 'utf8')
      } catch (err) {
        throw new AcmeError(`[acme].ca_file ${caFile} cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`)
      }
      this.#agent = new Agent({ ca })
      acme.axios.defaults.httpsAgent = this.#agent
    }
    let account = this.#accounts.get(directory)
    if (account === undefined) {
      account = { directory, key: (await acme.crypto.createPrivateEcdsaKey('P-256')).toString() }
      await this.#accounts.put(directory, account)
    }
    this.#client = new acme.Client({ directoryUrl: directory, accountKey: account.key, ...(account.url !== undefined && { accountUrl: account.url }) })
    return this.#client
  }

  /** Order a certificate for `domain`; resolves with the PEM chain and its private key, rejects with the cause named. */
  async order (domain: string): Promise<{ cert: string, key: string }> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#order(domain)
      } catch (err) {
        // The next attempt starts afresh: the CA file read again, the directory asked again.
        this.#client = undefined
        if (attempt > 1 || !(err instanceof AcmeProblem) || err.type !== ACCOUNT_DOES_NOT_EXIST) throw await this.#explain(err as Error)
        this.#log.warn({ directory: this.directory, err: err.message }, 'the ACME server does not know this server\'s account (was it reset?): registering it again')
        const stored = this.#accounts.get(this.directory)
        if (stored !== undefined) await this.#accounts.put(stored.directory, { directory: stored.directory, key: stored.key })
      }
    }
  }

  async #order (domain: string): Promise<{ cert: string, key: string }> {
    const client = await this.#account()
    const acme = await acmeClient()
    const [key, csr] = await acme.crypto.createCsr({ commonName: domain, altNames: [domain] }, await acme.crypto.createPrivateEcdsaKey('P-256'))
    const cert = await client.auto({
      csr,
      email: this.#settings.email === '' ? undefined : this.#settings.email,
      termsOfServiceAgreed: true,
      challengePriority: ['http-01'],
      // The ACME server checks the challenge itself; a check from here would need this host to resolve the name.
      skipChallengeVerification: true,
      challengeCreateFn: async (_authz, challenge, keyAuthorization) => { await this.challenges.put(challenge.token, keyAuthorization) },
      challengeRemoveFn: async (_authz, challenge) => { await this.challenges.remove(challenge.token) }
    })
    const stored = this.#accounts.get(this.#settings.directory)
    if (stored !== undefined && stored.url === undefined) await this.#accounts.put(stored.directory, { ...stored, url: client.getAccountUrl() })
    return { cert, key: key.toString() }
  }

  /** The error of a failed order with its cause named: a failure the library could not describe is explained by asking for the directory. */
  async #explain (err: Error): Promise<Error> {
    if (err instanceof AcmeError) return err
    const directory = this.directory
    const cause = await new Promise<string | undefined>(resolve => {
      const asked = get(directory, { agent: this.#agent, timeout: REACH_TIMEOUT_MS }, response => {
        response.resume()
        const status = response.statusCode ?? 0
        resolve(status >= 200 && status < 300 ? undefined : `answered ${status} for its directory`)
      })
      asked.on('timeout', () => { asked.destroy(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' })) })
      asked.on('error', (failure: NodeJS.ErrnoException) => { resolve(`${unreachable(failure.code ?? '', failure.message)} (${failure.code ?? 'error'})`) })
    })
    if (cause !== undefined) return new AcmeError(`the ACME server at ${directory} ${cause}`)
    // acme-client ends a request that got no answer (refused, reset, timed out) in a TypeError of its own.
    return err instanceof TypeError ? new AcmeError(`a request to the ACME server at ${directory} got no answer (${err.message}); its directory answers again`) : err
  }
}
