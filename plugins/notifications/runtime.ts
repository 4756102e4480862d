// The notifications plugin at work: the webhooks of [notifications] (URL and secret resolved from the
// secret store at each delivery, so a changed secret applies to the next alert), every
// operator.alert delivered to those whose kinds it matches, the metrics, and the test route. Logs
// name a webhook and its host, never its URL's path or query, nor its secret. Imported by setup only.
import { randomUUID } from 'node:crypto'
import { hostname } from 'node:os'
import { messageOf, NotFound, StartupError, type OperatorAlert, type PluginContext } from '../../kernel/index.js'
import { secretReferences } from '../secrets/api.js'
import { alertBody, deliver, type Outcome, type RetryPolicy, type Target } from './delivery.js'
import type { NotificationsConfig } from './index.js'

type WebhookConfig = NotificationsConfig['webhooks'][number]
interface Webhook extends WebhookConfig { name: string }

/** What the test route answers for each webhook. */
export interface TestDelivery extends Outcome { webhook: string }

/** The webhook's URL; the error never quotes it (its path may be a credential, as Slack's is). */
function parseUrl (webhook: string, text: string): URL {
  const url = URL.canParse(text) ? new URL(text) : undefined
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) throw new Error(`[notifications] webhook ${webhook}: url is not an http or https URL`)
  return url
}

export function setupNotifications (ctx: PluginContext<NotificationsConfig>): void {
  const secrets = ctx.use('secrets')
  const tokens = ctx.use('tokens')
  const config = ctx.config
  const webhooks: Webhook[] = config.webhooks.map((w, i) => ({ ...w, name: w.name ?? `webhook-${i + 1}` }))
  const names = webhooks.map(w => w.name)
  const twice = names.find((name, i) => names.indexOf(name) !== i)
  if (twice !== undefined) throw new StartupError(`[notifications] two webhooks are named ${twice}`)
  for (const w of webhooks) {
    // A URL kept in the secret store is checked when it is read.
    if (secretReferences(w.url).length === 0) {
      try {
        parseUrl(w.name, w.url)
      } catch (err) {
        throw new StartupError(messageOf(err))
      }
    }
  }
  const policy: RetryPolicy = { retries: config.retries, initialMs: config.retry_initial_ms, maxMs: config.retry_max_ms, timeoutMs: config.timeout_ms }
  const host = hostname()
  const deliveries = ctx.metrics.counter({ name: 'berth_notifications_deliveries_total', help: 'Alerts delivered to a webhook, or given up on after every attempt.', labelNames: ['webhook', 'outcome'] })
  const attempts = ctx.metrics.counter({ name: 'berth_notifications_attempts_total', help: 'POSTs made to a webhook, retries included.', labelNames: ['webhook'] })

  const targetOf = (w: Webhook): Target => {
    const resolved = secrets.resolve({ url: w.url, secret: w.secret }, `notification webhook ${w.name}`)
    return { url: parseUrl(w.name, resolved.url), secret: resolved.secret, format: w.format }
  }

  /** Deliver one alert to one webhook; the outcome is counted and logged (an alert given up on at error). */
  const send = async (w: Webhook, alert: OperatorAlert, retryPolicy: RetryPolicy): Promise<Outcome> => {
    const facts = { webhook: w.name, kind: alert.kind, subject: alert.subject }
    let target: Target
    try {
      target = targetOf(w)
    } catch (err) {
      deliveries.labels(w.name, 'failed').inc()
      ctx.log.error({ ...facts, error: messageOf(err) }, 'notification not delivered: the webhook cannot be read')
      return { ok: false, attempts: 0, error: messageOf(err) }
    }
    const id = randomUUID()
    const headers = { 'user-agent': 'berth-notifications', 'x-berth-event': alert.kind, 'x-berth-delivery': id }
    const where = { ...facts, host: target.url.host }
    const outcome = await deliver(ctx.outbound, target, alertBody(w.format, alert, id, host), headers, retryPolicy, ctx.stopping, (attempt, reason, waitMs) => {
      ctx.log.warn({ ...where, attempt, error: reason, retry_in_ms: waitMs }, 'notification attempt failed; retrying')
    })
    attempts.labels(w.name).inc(outcome.attempts)
    deliveries.labels(w.name, outcome.ok ? 'delivered' : 'failed').inc()
    if (outcome.ok) ctx.log.info({ ...where, attempts: outcome.attempts }, 'notification delivered')
    else ctx.log.error({ ...where, attempts: outcome.attempts, error: outcome.error }, 'notification not delivered')
    return outcome
  }

  ctx.events.on('operator.alert', alert => {
    for (const w of webhooks) {
      if (w.kinds.length === 0 || w.kinds.includes(alert.kind)) void ctx.track(send(w, alert, policy))
    }
  })

  ctx.http('control', async app => {
    // One attempt to every webhook, whatever its kinds: is each one reachable, and does it accept what Berth sends?
    app.post('/test', { onRequest: tokens.requireRole('admin') }, async () => {
      if (webhooks.length === 0) throw new NotFound('no [[notifications.webhooks]] are configured')
      const alert: OperatorAlert = { kind: 'notifications.test', subject: 'notifications', message: 'a test alert from Berth: this webhook receives its alerts', at: Date.now() }
      const results = await Promise.all(webhooks.map(async (w): Promise<TestDelivery> => ({ webhook: w.name, ...await send(w, alert, { ...policy, retries: 0 }) })))
      return { deliveries: results }
    })
  }, { prefix: '/api/v1/notifications' })
  ctx.report({ webhooks: webhooks.length })
}
