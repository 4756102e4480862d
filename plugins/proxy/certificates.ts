// Certificates of routed domains: issued ones kept in the proxy's part of the control plane's
// state, self-signed fallbacks made in memory (node-forge signs them; the RSA key comes from Node's
// crypto) for a domain that has no issued certificate yet, and TLS secure contexts cached per
// domain for SNI.
import { generateKeyPair, randomBytes, X509Certificate } from 'node:crypto'
import { promisify } from 'node:util'
import { createSecureContext, type SecureContext } from 'node:tls'
import type { KeyValueDatabase } from '../../kernel/index.js'

export interface StoredCertificate {
  domain: string
  /** PEM chain, leaf first. */
  cert: string
  /** PEM private key. */
  key: string
  issuer: string
  not_before: number
  not_after: number
  obtained_at: number
}

const SELF_SIGNED_DAYS = 90

const rsaKeyPair = promisify(generateKeyPair)

/** A self-signed certificate for `domain`, valid from yesterday for 90 days (its key made off the event loop). */
export async function selfSigned (domain: string): Promise<{ cert: string, key: string }> {
  const { default: forge } = await import('node-forge') // loaded with the first self-signed certificate
  const { privateKey, publicKey } = await rsaKeyPair('rsa', { modulusLength: 2048, publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs8', format: 'pem' } })
  const cert = forge.pki.createCertificate()
  cert.publicKey = forge.pki.publicKeyFromPem(publicKey)
  cert.serialNumber = `01${randomBytes(15).toString('hex')}`
  cert.validity.notBefore = new Date(Date.now() - 86_400_000)
  cert.validity.notAfter = new Date(Date.now() + SELF_SIGNED_DAYS * 86_400_000)
  const name = [{ name: 'commonName', value: domain }, { name: 'organizationName', value: 'Berth self-signed' }]
  cert.setSubject(name)
  cert.setIssuer(name)
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectAltName', altNames: [{ type: 2, value: domain }] }
  ])
  cert.sign(forge.pki.privateKeyFromPem(privateKey), forge.md.sha256.create())
  return { cert: forge.pki.certificateToPem(cert), key: privateKey }
}

/** Issuer, validity of a PEM chain's leaf. */
export function describe (chain: string): { issuer: string, not_before: number, not_after: number, serial: string } {
  const leaf = new X509Certificate(chain)
  const issuer = /CN=([^\n,]+)/.exec(leaf.issuer)?.[1] ?? leaf.issuer
  return { issuer, not_before: Date.parse(leaf.validFrom), not_after: Date.parse(leaf.validTo), serial: leaf.serialNumber }
}

export class Certificates {
  readonly #db: KeyValueDatabase<StoredCertificate>
  /** Contexts of issued certificates, with the PEM they were made of (another master may renew it). */
  readonly #contexts = new Map<string, { cert: string, context: SecureContext }>()
  readonly #fallbacks = new Map<string, Promise<SecureContext>>()
  /** Self-signed pairs handed to worker threads, one per name (every thread serves the same). */
  readonly #fallbackPairs = new Map<string, Promise<{ cert: string, key: string }>>()

  constructor (db: KeyValueDatabase<StoredCertificate>) {
    this.#db = db
  }

  get (domain: string): StoredCertificate | undefined {
    return this.#db.get(domain)
  }

  /** Keep a newly issued certificate; TLS serves it from the next handshake. */
  async put (record: StoredCertificate): Promise<void> {
    await this.#db.put(record.domain, record)
  }

  /** The secure context for a routed domain: its issued certificate, else a self-signed one. */
  async contextFor (domain: string): Promise<SecureContext> {
    const stored = this.#db.get(domain)
    if (stored !== undefined) {
      const cached = this.#contexts.get(domain)
      if (cached?.cert === stored.cert) return cached.context
      const context = createSecureContext({ cert: stored.cert, key: stored.key })
      this.#contexts.set(domain, { cert: stored.cert, context })
      return context
    }
    return await fallbackContext(this.#fallbacks, domain)
  }

  /** The PEM pair a worker thread serves for `name`: its issued certificate, else a self-signed one. */
  async pair (name: string): Promise<{ cert: string, key: string }> {
    const stored = this.#db.get(name)
    if (stored !== undefined) return { cert: stored.cert, key: stored.key }
    let pair = this.#fallbackPairs.get(name)
    if (pair === undefined) {
      pair = selfSigned(name)
      this.#fallbackPairs.set(name, pair)
    }
    return await pair
  }
}

/** A self-signed context per name, made once (concurrent handshakes share the making). */
export async function fallbackContext (cache: Map<string, Promise<SecureContext>>, name: string): Promise<SecureContext> {
  let context = cache.get(name)
  if (context === undefined) {
    context = selfSigned(name).then(pair => createSecureContext(pair))
    cache.set(name, context)
  }
  return await context
}
