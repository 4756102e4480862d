// A device's timeline: its reboots, faults, trace lines and alerts in one ordered list (by time, then
// reboots, faults, traces, alerts of the same moment, then sequence: an alert's place among the
// device's alerts), paged by an opaque cursor. Each series is read from the cursor's time forward, at
// most a page of each, and the pages merged; alerts come from the alert history (its latest 1,000).
import { decodeFault } from './fault-status.js'
import { decodeKeyCursor, encodeCursor, parseLimit, parseTime, type RangeQuery } from './series-query.js'
import type { AlertRecord } from './alert-rules.js'
import type { SeriesKind, TelemetryStorage } from './storage/contract.js'

const KINDS = ['reboot', 'fault', 'trace', 'alert'] as const
type EntryKind = typeof KINDS[number]
const SERIES: Record<Exclude<EntryKind, 'alert'>, SeriesKind> = { reboot: 'reboots', fault: 'faults', trace: 'traces' }

export interface TimelineEntry {
  at: number
  kind: EntryKind
  sequence: number
  /** One line to show. */
  summary: string
  /** The record as the series' own route gives it. */
  record: object
}

type Position = [at: number, kind: number, sequence: number]

const hex = (n: number): string => `0x${(n >>> 0).toString(16).padStart(8, '0')}`
const after = (a: Position, b: Position): boolean => a[0] !== b[0] ? a[0] > b[0] : a[1] !== b[1] ? a[1] > b[1] : a[2] > b[2]

/** A timeline cursor: the last entry's [at, kind, sequence]. */
const positionCursor = (key: unknown[]): boolean => key.length === 3 && key.every(n => Number.isSafeInteger(n) && (n as number) >= 0) && (key[1] as number) < KINDS.length

/** One page of `device`'s timeline within [from, to]. */
export async function timeline (storage: TelemetryStorage, device: string, query: RangeQuery): Promise<{ entries: TimelineEntry[], next_cursor: string | null }> {
  const from = parseTime('from', query.from, 0)
  const to = parseTime('to', query.to, Number.MAX_SAFE_INTEGER)
  const limit = parseLimit(query.limit)
  const cursor = query.cursor !== undefined && query.cursor !== '' ? decodeKeyCursor<Position>(query.cursor, positionCursor, 'this device\'s timeline') : undefined
  const start = Math.max(from, cursor?.[0] ?? 0)
  const found: Array<{ position: Position, entry: TimelineEntry }> = []
  const alerts = (await storage.documents<AlertRecord>('alert')).filter(a => a.device === device)
  for (const [sequence, alert] of alerts.entries()) {
    const position: Position = [alert.at, KINDS.indexOf('alert'), sequence]
    if (alert.at < start || alert.at > to || (cursor !== undefined && !after(position, cursor))) continue
    found.push({ position, entry: { at: alert.at, kind: 'alert', sequence, summary: `alert ${alert.rule_name}: ${alert.summary}`, record: alert } })
  }
  for (const [index, kind] of (['reboot', 'fault', 'trace'] as const).entries()) {
    let taken = 0
    for await (const { value } of storage.series(SERIES[kind], [device, start], to + 1)) {
      const position: Position = [value.received_at, index, value.sequence]
      if (cursor !== undefined && !after(position, cursor)) continue
      found.push({ position, entry: { at: value.received_at, kind, sequence: value.sequence, summary: summaryOf(kind, value), record: value } })
      if (++taken > limit) break
    }
  }
  found.sort((a, b) => after(a.position, b.position) ? 1 : after(b.position, a.position) ? -1 : 0)
  const page = found.slice(0, limit)
  const last = page[page.length - 1]?.position
  return { entries: page.map(f => f.entry), next_cursor: found.length > limit && last !== undefined ? encodeCursor(last) : null }
}

function summaryOf (kind: EntryKind, record: object): string {
  if (kind === 'reboot') {
    const r = record as { reason: string, boot_count: number }
    return `reboot: ${r.reason} (boot ${r.boot_count})`
  }
  if (kind === 'fault') {
    const f = record as { pc: number, symbol: string | null, cfsr: number, hfsr: number, mmfar: number, bfar: number }
    return `fault: ${decodeFault(f).kind} at ${hex(f.pc)}${f.symbol !== null && !f.symbol.startsWith('unsymbolicated') ? ` in ${f.symbol}` : ''}`
  }
  return (record as { text: string }).text.trimEnd()
}
