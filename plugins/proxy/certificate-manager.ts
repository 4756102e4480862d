// Automatic HTTPS: every routed domain gets a certificate over ACME without a restart, is renewed
// ahead of expiry (a third of its lifetime left, or renew_before_days), and a failed order is retried
// with exponential backoff. One name is never ordered twice at once. Until an issued certificate
// exists, the domain is served with a self-signed one, and its state says so. The first failure of a
// domain's orders since its last success raises an operator alert (`certificate.failed`).
import type { Logger } from 'pino'
import type { OperatorAlert } from '../../kernel/index.js'
import type { Counter } from 'prom-client'
import type { AcmeIssuer } from './acme.js'
import { describe, type Certificates } from './certificates.js'

export type CertificateStatus = 'valid' | 'renewing' | 'pending' | 'failed' | 'self-signed'

export interface CertificateState {
  status: CertificateStatus
  /** Of the issued certificate, when there is one. */
  issuer?: string
  not_after?: string
  /** Of the last failed order. */
  error?: string
  attempts?: number
  next_attempt_at?: string
}

interface OrderState {
  attempts: number
  error?: string
  nextAttemptAt: number
  running: boolean
}

export interface ManagerSettings {
  /** Days before expiry to renew; 0: when a third of the lifetime is left. */
  renewBeforeDays: number
  /** First retry delay; doubled per failure, at most six hours. */
  retryBaseMs: number
}

const MAX_RETRY_MS = 6 * 3_600_000

export class CertificateManager {
  readonly #certificates: Certificates
  readonly #issuer: AcmeIssuer | undefined
  readonly #settings: ManagerSettings
  readonly #log: Logger
  readonly #orders = new Map<string, OrderState>()
  readonly #outcomes: Counter<'outcome'>
  readonly #track: (work: Promise<void>) => void
  #domains: string[] = []

  readonly #changed: () => void
  readonly #alert: (alert: OperatorAlert) => void
  readonly #leading: () => boolean

  /**
   * `changed` is called after each order, when the list of failing domains may have changed; `alert`
   * raises an operator alert; `leading`: whether this master orders (among masters, the leader only).
   */
  constructor (deps: { certificates: Certificates, issuer?: AcmeIssuer, settings: ManagerSettings, log: Logger, outcomes: Counter<'outcome'>, track: (work: Promise<void>) => void, changed: () => void, alert: (alert: OperatorAlert) => void, leading?: () => boolean }) {
    this.#certificates = deps.certificates
    this.#issuer = deps.issuer
    this.#settings = deps.settings
    this.#log = deps.log
    this.#outcomes = deps.outcomes
    this.#track = deps.track
    this.#changed = deps.changed
    this.#alert = deps.alert
    this.#leading = deps.leading ?? (() => true)
  }

  /** The routed domains whose last order failed, with the error, for the health report. */
  failing (): Array<{ domain: string, error: string }> {
    return this.#domains.flatMap(domain => {
      const error = this.#orders.get(domain)?.error
      return error === undefined ? [] : [{ domain, error }]
    })
  }

  /** Whether `domain` has an issued certificate that has not expired (HTTP is then redirected to HTTPS). */
  hasCertificate (domain: string): boolean {
    const stored = this.#certificates.get(domain)
    return stored !== undefined && stored.not_after > Date.now()
  }

  /** Follow the routed domains: order what is missing or due, now. */
  follow (domains: readonly string[]): void {
    this.#domains = [...domains]
    this.check()
  }

  /** Start the orders that are due (missing, renewal time, or retry time reached). */
  check (now = Date.now()): void {
    if (this.#issuer === undefined || !this.#leading()) return
    for (const domain of this.#domains) {
      const order = this.#orders.get(domain)
      if (order?.running === true || (order !== undefined && order.nextAttemptAt > now)) continue
      if (this.#due(domain, now)) this.#track(this.#order(domain))
    }
  }

  #due (domain: string, now: number): boolean {
    const stored = this.#certificates.get(domain)
    if (stored === undefined) return true
    const renewAt = this.#settings.renewBeforeDays > 0
      ? stored.not_after - this.#settings.renewBeforeDays * 86_400_000
      : stored.not_after - (stored.not_after - stored.not_before) / 3
    return now >= renewAt
  }

  async #order (domain: string): Promise<void> {
    const issuer = this.#issuer as AcmeIssuer
    const order = this.#orders.get(domain) ?? { attempts: 0, nextAttemptAt: 0, running: false }
    order.running = true
    this.#orders.set(domain, order)
    const current = this.#certificates.get(domain)
    const renewal = current !== undefined
    this.#log.info({ domain, directory: issuer.directory, renewal }, renewal ? 'renewing certificate' : 'ordering certificate')
    try {
      const { cert, key } = await issuer.order(domain)
      const { issuer: by, not_before: notBefore, not_after: notAfter } = describe(cert)
      await this.#certificates.put({ domain, cert, key, issuer: by, not_before: notBefore, not_after: notAfter, obtained_at: Date.now() })
      this.#orders.delete(domain)
      this.#outcomes.labels(renewal ? 'renewed' : 'issued').inc()
      this.#log.info({ domain, issuer: by, not_after: new Date(notAfter).toISOString() }, 'certificate obtained')
    } catch (err) {
      order.attempts++
      order.error = (err as Error).message.split('\n')[0]
      order.nextAttemptAt = Date.now() + Math.min(this.#settings.retryBaseMs * 2 ** (order.attempts - 1), MAX_RETRY_MS)
      this.#outcomes.labels('failed').inc()
      this.#log.warn({ domain, attempts: order.attempts, next_attempt_at: new Date(order.nextAttemptAt).toISOString(), err: order.error }, 'certificate order failed; it will be retried')
      if (order.attempts === 1) {
        this.#alert({
          kind: 'certificate.failed',
          subject: domain,
          message: current === undefined
            ? `no certificate for ${domain}: ${order.error}; it is served with a self-signed one until an order succeeds (retried with backoff)`
            : `the certificate of ${domain} was not renewed: ${order.error}; the current one is served until ${new Date(current.not_after).toISOString()} (retried with backoff)`,
          at: Date.now(),
          details: { directory: issuer.directory, error: order.error, renewal }
        })
      }
    } finally {
      order.running = false
      this.#changed()
    }
  }

  /** What `berth status` and the routes show of a domain's certificate. */
  state (domain: string): CertificateState {
    const stored = this.#certificates.get(domain)
    const order = this.#orders.get(domain)
    const issued = stored === undefined ? {} : { issuer: stored.issuer, not_after: new Date(stored.not_after).toISOString() }
    const failure = order?.error === undefined ? {} : { error: order.error, attempts: order.attempts, next_attempt_at: new Date(order.nextAttemptAt).toISOString() }
    if (this.#issuer === undefined) return stored === undefined ? { status: 'self-signed' } : { status: 'valid', ...issued }
    if (stored !== undefined && stored.not_after > Date.now()) return { status: order === undefined ? 'valid' : 'renewing', ...issued, ...failure }
    if (order?.error !== undefined && !order.running) return { status: 'failed', ...failure }
    return { status: 'pending', ...failure }
  }
}
