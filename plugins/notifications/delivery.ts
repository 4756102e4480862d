// Delivering one alert to one webhook: the body (the alert as JSON, or Slack's {"text"}), its
// HMAC-SHA256 signature, and the POST, retried with exponential backoff and jitter on a connection
// error, a timeout, 408, 429 or 5xx (Retry-After honoured up to the longest wait), through the
// kernel's outbound client (the operator's configured webhooks are trusted destinations; its limits
// and policy hold: redirects are not followed, answers are bounded). Every attempt sends the same
// bytes, so the signature and the delivery id stay the same.
import { createHmac } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import type { OperatorAlert } from '../../kernel/index.js'
import type { OutboundClient } from '../../kernel/runtime-api.js'

export type Format = 'json' | 'slack'

export interface RetryPolicy {
  retries: number
  initialMs: number
  maxMs: number
  timeoutMs: number
}

export interface Target {
  url: URL
  /** Empty: the delivery is not signed. */
  secret: string
  format: Format
}

export interface Outcome {
  ok: boolean
  attempts: number
  /** The last answer's status, when there was one. */
  status?: number
  /** Why it failed. */
  error?: string
}

/** What a receiver gets: the alert with its time in ISO 8601, the sending host, and an id that stays the same across retries. */
export function alertBody (format: Format, alert: OperatorAlert, id: string, host: string): string {
  if (format === 'slack') return JSON.stringify({ text: `[berth@${host}] ${alert.kind} ${alert.subject}: ${alert.message}` })
  return JSON.stringify({ id, kind: alert.kind, subject: alert.subject, message: alert.message, at: new Date(alert.at).toISOString(), host, details: alert.details ?? {} })
}

/** The X-Berth-Signature header's value: `sha256=` and the hex HMAC-SHA256 of the body bytes under the secret. */
export function signatureOf (secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`
}

/** How long a Retry-After header asks to wait (seconds or an HTTP date), if it says. */
function retryAfterMs (header: string | null, now: number): number | undefined {
  if (header === null) return undefined
  const seconds = Number(header)
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000
  const at = Date.parse(header)
  return Number.isNaN(at) ? undefined : Math.max(0, at - now)
}

/** The cause node's fetch gives (ECONNREFUSED, a timeout), never the URL. */
function reasonOf (err: unknown): string {
  if (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')) return 'no answer in time'
  const cause = (err as { cause?: { code?: unknown, message?: unknown } }).cause
  if (typeof cause?.code === 'string') return cause.code
  return err instanceof Error ? err.message : String(err)
}

/**
 * POST `body` to the target until it answers 2xx, the failure is permanent (another 4xx, a
 * redirect), the attempts are spent, or `stopping` aborts. `onRetry` hears of each failed attempt
 * that will be tried again. Never throws.
 */
export async function deliver (outbound: OutboundClient, target: Target, body: string, headers: Record<string, string>, policy: RetryPolicy, stopping: AbortSignal, onRetry: (attempt: number, reason: string, waitMs: number) => void): Promise<Outcome> {
  const signed: Record<string, string> = target.secret === '' ? {} : { 'x-berth-signature': signatureOf(target.secret, body) }
  let last: Outcome = { ok: false, attempts: 0 }
  for (let attempt = 1; attempt <= policy.retries + 1; attempt++) {
    if (stopping.aborted) return { ...last, error: `${last.error ?? 'not sent'}; the server is stopping` }
    let wait: number | undefined
    try {
      const response = await outbound.send(target.url.href, {
        headers: { 'content-type': 'application/json', ...headers, ...signed },
        body,
        signal: stopping,
        timeoutMs: policy.timeoutMs,
        trusted: true
      })
      if (response.status >= 200 && response.status < 300) return { ok: true, attempts: attempt, status: response.status }
      last = { ok: false, attempts: attempt, status: response.status, error: `HTTP ${response.status}` }
      if (response.status !== 408 && response.status !== 429 && response.status < 500) return last
      wait = retryAfterMs(response.headers.get('retry-after'), Date.now())
    } catch (err) {
      last = { ok: false, attempts: attempt, error: stopping.aborted ? 'the server is stopping' : reasonOf(err) }
      if (stopping.aborted) return last
    }
    if (attempt > policy.retries) break
    const backoff = Math.min(policy.maxMs, policy.initialMs * 2 ** (attempt - 1)) * (0.8 + Math.random() * 0.4)
    const ms = Math.round(Math.min(policy.maxMs, wait ?? backoff))
    onRetry(attempt, last.error ?? '', ms)
    await sleep(ms, undefined, { signal: stopping }).catch(() => undefined)
  }
  return last
}
