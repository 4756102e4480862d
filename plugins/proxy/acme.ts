// Ordering certificates over ACME with acme-client (RFC 8555, JWS and retries of bad nonces done by a
// maintained library): one account per server, kept in LMDB; HTTP-01 challenges answered by the
// proxy's HTTP listener from the tokens held here while an order runs. acme-client is loaded with
// the first order, not when the server starts.
import { readFileSync } from 'node:fs'
import { Agent } from 'node:https'
import type acme from 'acme-client'
import type { Database } from 'lmdb'

type Acme = typeof acme
let loaded: Promise<Acme> | undefined
async function acmeClient (): Promise<Acme> {
  loaded ??= import('acme-client').then(module => module.default)
  return await loaded
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
  readonly #accounts: Database<Account, string>
  /** HTTP-01 tokens of orders in progress: token → key authorization. */
  readonly challenges = new Map<string, string>()
  #client: acme.Client | undefined

  constructor (settings: AcmeSettings, accounts: Database<Account, string>) {
    this.#settings = settings
    this.#accounts = accounts
  }

  get directory (): string {
    return this.#settings.directory
  }

  async #account (): Promise<acme.Client> {
    if (this.#client !== undefined) return this.#client
    const acme = await acmeClient()
    const { directory, caFile } = this.#settings
    // Read when first needed: a missing file fails this order, which is retried, not the server's start.
    if (caFile !== '') acme.axios.defaults.httpsAgent = new Agent({ ca: readFileSync(caFile, 'utf8') })
    let account = this.#accounts.get(directory)
    if (account === undefined) {
      account = { directory, key: (await acme.crypto.createPrivateEcdsaKey('P-256')).toString() }
      await this.#accounts.put(directory, account)
    }
    this.#client = new acme.Client({ directoryUrl: directory, accountKey: account.key, ...(account.url !== undefined && { accountUrl: account.url }) })
    return this.#client
  }

  /** Order a certificate for `domain`; resolves with the PEM chain and its private key. */
  async order (domain: string): Promise<{ cert: string, key: string }> {
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
      challengeCreateFn: async (_authz, challenge, keyAuthorization) => { this.challenges.set(challenge.token, keyAuthorization) },
      challengeRemoveFn: async (_authz, challenge) => { this.challenges.delete(challenge.token) }
    })
    const stored = this.#accounts.get(this.#settings.directory)
    if (stored !== undefined && stored.url === undefined) await this.#accounts.put(stored.directory, { ...stored, url: client.getAccountUrl() })
    return { cert, key: key.toString() }
  }
}
