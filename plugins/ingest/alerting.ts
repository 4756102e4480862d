// The alert rules at work: condition rules (metric, crash rate) evaluated on a schedule, connectivity
// rules on each device.offline / device.online event this node publishes; each firing, resolution or
// connectivity change recorded in the history (trimmed to the latest HISTORY_KEPT at each
// evaluation) and delivered to the rule's destinations outside its cooldown: JSON signed with HMAC-SHA256 (`X-Berth-Signature:
// sha256=<hex of HMAC(secret, "<X-Berth-Timestamp>.<body>")>`), or Slack-compatible `{"text": …}`.
// Connectivity changes of many devices at once (a fleet going offline) are one notification per rule
// and kind, naming the devices (at most NAMED_DEVICES) with their count, as Memfault and Grafana group them.
import { createHmac, randomUUID } from 'node:crypto'
import type { Logger } from 'pino'
import type { TelemetryEvent } from './apply.js'
import { connectivityStep, coversDevice, crashRateHolds, metricHolds, NEW_STATE, step, type AlertRecord, type AlertRule, type Destination, type RuleState } from './alert-rules.js'
import type { Delivery, WebhookNotifier } from './alerts.js'
import type { TelemetryStorage } from './storage/contract.js'

const HOUR_MS = 3_600_000
/** Alert records kept; older ones are removed as new ones come. */
export const HISTORY_KEPT = 1000

/** Connectivity records wait this long to go out together: a fleet going offline at once is one notification per rule. */
const GROUP_MS = 1000
/** Devices a grouped notification names; its `count` says how many in all. */
export const NAMED_DEVICES = 100
/** Devices its summary names before "and N more". */
const SUMMARY_DEVICES = 5

/** What a destination receives: one record, or (connectivity) the records of several devices as one. */
export type Notification = AlertRecord & { devices?: string[], count?: number }

/** One notification for the connectivity records of one rule and kind, newest last. */
export function groupedNotification (records: readonly AlertRecord[]): Notification {
  const devices = records.map(r => r.device ?? '')
  const last = records[records.length - 1]
  if (records.length === 1) return { ...last, devices, count: 1 }
  const named = devices.slice(0, SUMMARY_DEVICES).join(', ')
  const more = devices.length > SUMMARY_DEVICES ? ` and ${devices.length - SUMMARY_DEVICES} more` : ''
  const what = last.kind === 'offline' ? 'went offline' : 'are back online'
  return { ...last, device: null, devices: devices.slice(0, NAMED_DEVICES), count: devices.length, summary: `${devices.length} devices ${what}: ${named}${more}` }
}

/** The delivery of `record` to `destination`. */
export function deliveryOf (destination: Destination, record: Notification, now = Date.now()): Delivery {
  if (destination.format === 'slack') {
    const icon = record.kind === 'firing' || record.kind === 'offline' ? ':rotating_light:' : ':white_check_mark:'
    return { url: destination.url, body: JSON.stringify({ text: `${icon} *${record.rule_name}* ${record.kind}: ${record.summary}` }), headers: {}, what: `rule ${record.rule}` }
  }
  const body = JSON.stringify({ alert: 'rule', ...record })
  const headers: Record<string, string> = {}
  if (destination.secret !== null) {
    const timestamp = String(Math.floor(now / 1000))
    headers['x-berth-timestamp'] = timestamp
    headers['x-berth-signature'] = `sha256=${createHmac('sha256', destination.secret).update(`${timestamp}.${body}`).digest('hex')}`
  }
  return { url: destination.url, body, headers, what: `rule ${record.rule}` }
}

export class Alerting {
  readonly #storage: TelemetryStorage
  readonly #notifier: WebhookNotifier
  readonly #log: Logger
  /** Connectivity records to notify, by rule and kind, until the group is sent. */
  readonly #waiting = new Map<string, { rule: AlertRule, records: AlertRecord[] }>()
  #timer: NodeJS.Timeout | undefined

  constructor (storage: TelemetryStorage, notifier: WebhookNotifier, log: Logger) {
    this.#storage = storage
    this.#notifier = notifier
    this.#log = log
  }

  /** Evaluate every enabled metric and crash-rate rule now; returns the records made. */
  async evaluate (now = Date.now()): Promise<AlertRecord[]> {
    const records: AlertRecord[] = []
    for (const rule of await this.#storage.documents<AlertRule>('alert-rule')) {
      if (!rule.enabled || rule.condition.kind === 'connectivity') continue
      const { holds, summary } = await this.#check(rule, now)
      const forMs = rule.condition.kind === 'metric' ? rule.condition.for_minutes * 60_000 : 0
      const stepped: { outcome?: ReturnType<typeof step> } = {}
      await this.#storage.changeDocument<RuleState>('alert-state', rule.id, current => {
        stepped.outcome = step(current ?? NEW_STATE, holds, now, forMs, rule.cooldown_minutes * 60_000)
        return stepped.outcome.state
      })
      const { outcome } = stepped
      if (outcome !== undefined && outcome.transition !== null) records.push(await this.#record(rule, outcome.transition, summary, null, outcome.notify, now))
    }
    await this.#trimHistory()
    return records
  }

  /** Remove the records beyond the latest HISTORY_KEPT: once an evaluation, not at each record (a fleet going offline at once makes thousands). */
  async #trimHistory (): Promise<void> {
    const history = await this.#storage.documents<AlertRecord>('alert')
    for (const old of history.slice(0, Math.max(0, history.length - HISTORY_KEPT))) await this.#storage.changeDocument<AlertRecord>('alert', old.id, () => null)
  }

  /** A connectivity event published by this node: recorded by each rule that covers the device. */
  async onEvent (event: TelemetryEvent, now = Date.now()): Promise<AlertRecord[]> {
    if (event.kind !== 'device.offline' && event.kind !== 'device.online') return []
    const records: AlertRecord[] = []
    const rules = (await this.#storage.documents<AlertRule>('alert-rule')).filter(r => r.enabled && r.condition.kind === 'connectivity')
    if (rules.length === 0) return records
    const device = await this.#storage.device(event.device)
    for (const rule of rules) {
      if (rule.condition.kind !== 'connectivity' || !coversDevice(rule.condition, device)) continue
      const stepped = { notify: false }
      await this.#storage.changeDocument<RuleState>('alert-state', `${rule.id}/${event.device}`, current => {
        const next = connectivityStep(current ?? NEW_STATE, now, rule.cooldown_minutes * 60_000)
        stepped.notify = next.notify
        return next.state
      })
      const { notify } = stepped
      const summary = event.kind === 'device.offline'
        ? `device ${event.device} went offline (last seen ${event.last_seen === null ? 'never' : new Date(event.last_seen).toISOString()})`
        : `device ${event.device} is back online`
      records.push(await this.#record(rule, event.kind === 'device.offline' ? 'offline' : 'online', summary, event.device, notify, now))
    }
    return records
  }

  /** Hold a connectivity record for its rule's next grouped notification. */
  #await (rule: AlertRule, record: AlertRecord): void {
    const key = `${rule.id}/${record.kind}`
    const group = this.#waiting.get(key) ?? { rule, records: [] }
    group.records.push(record)
    this.#waiting.set(key, group)
    this.#timer ??= setTimeout(() => { this.flush() }, GROUP_MS)
  }

  /** Send every grouped notification waiting, now: one per rule and kind. */
  flush (): void {
    clearTimeout(this.#timer)
    this.#timer = undefined
    const groups = [...this.#waiting.values()]
    this.#waiting.clear()
    for (const { rule, records } of groups) {
      const notification = groupedNotification(records)
      for (const destination of rule.destinations) this.#notifier.send(deliveryOf(destination, notification))
    }
  }

  async #check (rule: AlertRule, now: number): Promise<{ holds: boolean, summary: string }> {
    const condition = rule.condition
    if (condition.kind === 'crash_rate') {
      return crashRateHolds(condition, await this.#storage.faultCount(now - HOUR_MS, condition.issue))
    }
    if (condition.kind !== 'metric') return { holds: false, summary: '' }
    // Each device's latest value of the key within the last hour: devices that did not report it are not counted.
    return metricHolds(condition, await this.#storage.latestMetrics(condition.key, now - HOUR_MS, now + 1, condition.group))
  }

  async #record (rule: AlertRule, kind: AlertRecord['kind'], summary: string, device: string | null, notify: boolean, now: number): Promise<AlertRecord> {
    const record: AlertRecord = {
      id: `${String(now).padStart(15, '0')}-${randomUUID().slice(0, 8)}`, rule: rule.id, rule_name: rule.name, kind, at: now, summary, device,
      notified: notify && rule.destinations.length > 0
    }
    await this.#storage.changeDocument<AlertRecord>('alert', record.id, () => record)
    if (record.notified && device !== null) this.#await(rule, record)
    else if (record.notified) for (const destination of rule.destinations) this.#notifier.send(deliveryOf(destination, record, now))
    this.#log.info({ rule: rule.id, kind, device, notified: record.notified }, `alert: ${rule.name} ${kind}`)
    return record
  }
}
