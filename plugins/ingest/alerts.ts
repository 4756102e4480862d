// Alerts: the offline check marks devices not seen for `offline_after_seconds` and raises an alert; each
// alert is POSTed as JSON to every configured webhook, retried with exponential backoff, through the
// kernel's outbound client: a rule's destination (a user's) is checked on the address connected to,
// the configured webhooks (the operator's) are trusted; a refused destination or a redirect is not
// tried again; URLs are logged without query or credentials.
import type { Logger } from 'pino'
import { redactedUrl, type OutboundClient } from '../../kernel/runtime-api.js'
import type { TelemetryEvent } from './apply.js'
import type { Device, TelemetryStorage } from './storage/contract.js'

export interface DeliveryPolicy {
  attempts: number
  /** Delay before the second attempt; doubles each time. */
  firstDelayMs: number
  timeoutMs: number
}

export const DEFAULT_DELIVERY: DeliveryPolicy = { attempts: 5, firstDelayMs: 1000, timeoutMs: 5000 }

/** Mark newly offline devices (in one transaction) and return their alerts. */
export async function findOfflineDevices (storage: TelemetryStorage, offlineAfterMs: number, now = Date.now()): Promise<TelemetryEvent[]> {
  const silent = (device: Device): boolean => !device.offline && device.last_seen !== null && now - device.last_seen > offlineAfterMs
  const candidates = await storage.silentDevices(now - offlineAfterMs)
  if (candidates.length === 0) return []
  // Checked again holding the devices' turns: a chunk may have arrived since.
  const marked = await storage.markOffline(candidates, silent)
  return marked.map(device => ({ kind: 'device.offline', device: device.id, last_seen: device.last_seen, at: now }))
}

/** One POST to make: its URL, JSON body and extra headers, and what it is for the log. */
export interface Delivery {
  url: string
  body: string
  headers: Record<string, string>
  what: string
  /** An operator's configured webhook: sent without the address check users' destinations get. */
  trusted?: boolean
}

/** Posts alerts to webhooks; retries run on timers that stop() cancels. */
export class WebhookNotifier {
  readonly #urls: readonly string[]
  readonly #policy: DeliveryPolicy
  readonly #log: Logger
  readonly #outbound: OutboundClient
  readonly #timers = new Set<NodeJS.Timeout>()
  readonly #inFlight = new Set<AbortController>()
  #stopped = false

  constructor (urls: readonly string[], log: Logger, outbound: OutboundClient, policy: DeliveryPolicy = DEFAULT_DELIVERY) {
    this.#urls = urls
    this.#log = log
    this.#outbound = outbound
    this.#policy = policy
  }

  /** An alert event to every URL of `[ingest].alert_webhooks`. */
  notify (alert: TelemetryEvent): void {
    const body = JSON.stringify({ alert: alert.kind, ...alert })
    for (const url of this.#urls) this.send({ url, body, headers: {}, what: alert.kind, trusted: true })
  }

  /** One delivery, retried with backoff until it is answered 2xx or the attempts run out. */
  send (delivery: Delivery): void {
    void this.#attempt(delivery, 1)
  }

  stop (): void {
    this.#stopped = true
    for (const timer of this.#timers) clearTimeout(timer)
    this.#timers.clear()
    for (const controller of this.#inFlight) controller.abort()
  }

  async #attempt (delivery: Delivery, attempt: number): Promise<void> {
    if (this.#stopped) return
    const { what } = delivery
    const url = redactedUrl(delivery.url)
    const controller = new AbortController()
    this.#inFlight.add(controller)
    let failure: string | undefined
    // A refused destination and a redirect (never followed) would answer the same again.
    let final = false
    try {
      const { status } = await this.#outbound.send(delivery.url, {
        headers: { 'content-type': 'application/json', ...delivery.headers }, body: delivery.body, signal: controller.signal, timeoutMs: this.#policy.timeoutMs, trusted: delivery.trusted
      })
      if (status < 200 || status >= 300) failure = `HTTP ${status}`
      final = status >= 300 && status < 400
    } catch (err) {
      failure = (err as Error).message
      final = (err as Error).name === 'DestinationRefused'
    } finally {
      this.#inFlight.delete(controller)
    }
    if (failure === undefined || this.#stopped) return
    if (attempt >= this.#policy.attempts || final) {
      this.#log.error({ url, alert: what, attempts: attempt, failure }, 'alert webhook gave up')
      return
    }
    const delay = this.#policy.firstDelayMs * 2 ** (attempt - 1)
    this.#log.warn({ url, alert: what, attempt, failure, retryInMs: delay }, 'alert webhook failed; retrying')
    const timer = setTimeout(() => {
      this.#timers.delete(timer)
      void this.#attempt(delivery, attempt + 1)
    }, delay)
    this.#timers.add(timer)
  }
}
