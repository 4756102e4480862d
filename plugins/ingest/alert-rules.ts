// Alert rules: a condition on a metric across a group (`battery_mv < 3300` on at least 5% of the
// devices that reported it, held for 10 minutes), on a crash rate (an issue's faults, or all faults,
// per hour), or on connectivity (a device going offline and coming back); each with a cooldown, so a
// flapping condition notifies once per cooldown, and destinations (signed JSON webhooks, or
// Slack-compatible ones). This module decides; alerting.ts evaluates on a schedule and delivers.
import type { Device } from './storage/contract.js'

export const COMPARISONS = ['<', '<=', '>', '>='] as const
export type Comparison = typeof COMPARISONS[number]

export type RuleCondition =
  | { kind: 'metric', key: string, op: Comparison, value: number, group: string | null, min_percent: number, for_minutes: number }
  | { kind: 'crash_rate', issue: string | null, per_hour: number }
  | { kind: 'connectivity', group: string | null }

export interface Destination {
  url: string
  /** `json`: the alert as JSON, signed when a secret is set; `slack`: `{"text": …}` for a Slack-compatible incoming webhook. */
  format: 'json' | 'slack'
  /** HMAC-SHA256 key of the signature header; never listed. */
  secret: string | null
}

export interface AlertRule {
  id: string
  name: string
  condition: RuleCondition
  cooldown_minutes: number
  enabled: boolean
  destinations: Destination[]
  created_at: number
  created_by: string
  updated_at: number
}

/** Where a rule stands (per device for connectivity rules). */
export interface RuleState {
  firing: boolean
  /** When the condition started to hold, not yet for long enough. */
  pending_since: number | null
  /** When a notification last went out. */
  last_sent: number | null
}

export interface AlertRecord {
  id: string
  rule: string
  rule_name: string
  /** `firing` / `resolved` for conditions; `offline` / `online` for connectivity. */
  kind: 'firing' | 'resolved' | 'offline' | 'online'
  at: number
  summary: string
  device: string | null
  /** False when the cooldown held the notification back (or the rule has no destination). */
  notified: boolean
}

export const NEW_STATE: RuleState = { firing: false, pending_since: null, last_sent: null }

const compare = (op: Comparison, a: number, b: number): boolean => op === '<' ? a < b : op === '<=' ? a <= b : op === '>' ? a > b : a >= b

/** Whether a metric rule's condition holds over the latest values (one per device that reported the key), and a line saying so. */
export function metricHolds (condition: Extract<RuleCondition, { kind: 'metric' }>, latest: ReadonlyMap<string, number>): { holds: boolean, summary: string } {
  const matching = [...latest.values()].filter(v => compare(condition.op, v, condition.value)).length
  const percent = latest.size === 0 ? 0 : matching / latest.size * 100
  const scope = condition.group === null ? 'the fleet' : `group ${condition.group}`
  return {
    holds: latest.size > 0 && percent >= condition.min_percent,
    summary: `${condition.key} ${condition.op} ${condition.value} on ${matching} of ${latest.size} devices of ${scope} (${percent.toFixed(1)}%, the rule: ≥ ${condition.min_percent}% for ${condition.for_minutes} min)`
  }
}

/** Whether a crash-rate rule holds over the faults of the last hour. */
export function crashRateHolds (condition: Extract<RuleCondition, { kind: 'crash_rate' }>, faultsInHour: number): { holds: boolean, summary: string } {
  return {
    holds: faultsInHour >= condition.per_hour,
    summary: `${faultsInHour} faults${condition.issue === null ? '' : ` of issue ${condition.issue}`} in the last hour (the rule: ≥ ${condition.per_hour})`
  }
}

/**
 * The next state of a condition rule given whether its condition holds now: it fires once it has
 * held for `forMs`, resolves when it stops holding; a firing notifies unless one went out within the cooldown.
 */
export function step (state: RuleState, holds: boolean, now: number, forMs: number, cooldownMs: number): { state: RuleState, transition: 'firing' | 'resolved' | null, notify: boolean } {
  if (!holds) {
    return { state: { ...state, firing: false, pending_since: null }, transition: state.firing ? 'resolved' : null, notify: false }
  }
  if (state.firing) return { state, transition: null, notify: false }
  const since = state.pending_since ?? now
  if (now - since < forMs) return { state: { ...state, pending_since: since }, transition: null, notify: false }
  const notify = state.last_sent === null || now - state.last_sent >= cooldownMs
  return { state: { firing: true, pending_since: since, last_sent: notify ? now : state.last_sent }, transition: 'firing', notify }
}

/** A connectivity event of `device` against a rule's state for it: recorded always, notified outside the cooldown. */
export function connectivityStep (state: RuleState, now: number, cooldownMs: number): { state: RuleState, notify: boolean } {
  const notify = state.last_sent === null || now - state.last_sent >= cooldownMs
  return { state: { ...state, last_sent: notify ? now : state.last_sent }, notify }
}

/** Whether a connectivity rule covers a device. */
export function coversDevice (condition: Extract<RuleCondition, { kind: 'connectivity' }>, device: Device | undefined): boolean {
  return condition.group === null || device?.group === condition.group
}

/** A rule as listed: each destination's secret replaced by whether there is one. */
export function listedRule (rule: AlertRule): Omit<AlertRule, 'destinations'> & { destinations: Array<Omit<Destination, 'secret'> & { signed: boolean }> } {
  return { ...rule, destinations: rule.destinations.map(({ secret, ...d }) => ({ ...d, signed: secret !== null })) }
}
