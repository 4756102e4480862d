// A device's timeline: its reboots, faults, trace lines, heartbeats, OTA events and alerts in one
// ordered list (by time, then in that order for the same moment, then sequence: for OTA events and
// alerts their place in their list), paged by an opaque cursor. Each series is read from the cursor's
// time forward, at most a page of each, and the pages merged; OTA events come from the device's OTA
// log (its newest 100), alerts from the alert history (its latest 1,000).
import { withCoredumpSummary } from './coredump.js'
import { codeAddress } from './crash-issues.js'
import { decodeFault } from './fault-status.js'
import { decodeKeyCursor, encodeCursor, parseLimit, parseTime, type RangeQuery } from './series-query.js'
import type { AlertRecord } from './alert-rules.js'
import { otaEvents, otaSummary } from './ota-log.js'
import type { SeriesKind, StoredFault, TelemetryStorage } from './storage/contract.js'

const KINDS = ['reboot', 'fault', 'trace', 'heartbeat', 'ota', 'alert'] as const
type EntryKind = typeof KINDS[number]
type SeriesEntryKind = Exclude<EntryKind, 'ota' | 'alert'>
const SERIES: Record<SeriesEntryKind, SeriesKind> = { reboot: 'reboots', fault: 'faults', trace: 'traces', heartbeat: 'heartbeats' }

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
  /** An entry of a list kept whole (OTA events, alerts): `sequence` is its place in the list. */
  const listed = (kind: 'ota' | 'alert', at: number, sequence: number, summary: string, record: object): void => {
    const position: Position = [at, KINDS.indexOf(kind), sequence]
    if (at < start || at > to || (cursor !== undefined && !after(position, cursor))) return
    found.push({ position, entry: { at, kind, sequence, summary, record } })
  }
  for (const [sequence, event] of (await otaEvents(storage, device)).entries()) listed('ota', event.at, sequence, otaSummary(event), event)
  const alerts = (await storage.documents<AlertRecord>('alert')).filter(a => a.device === device)
  for (const [sequence, alert] of alerts.entries()) listed('alert', alert.at, sequence, `alert ${alert.rule_name}: ${alert.summary}`, alert)
  for (const kind of Object.keys(SERIES) as SeriesEntryKind[]) {
    const index = KINDS.indexOf(kind)
    let taken = 0
    for await (const { value } of storage.series(SERIES[kind], [device, start], to + 1)) {
      const position: Position = [value.received_at, index, value.sequence]
      if (cursor !== undefined && !after(position, cursor)) continue
      // A fault's coredump summed up, as the fault list gives it.
      const record = kind === 'fault' ? withCoredumpSummary(value as StoredFault) : value
      found.push({ position, entry: { at: value.received_at, kind, sequence: value.sequence, summary: summaryOf(kind, value), record } })
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
    return `fault: ${decodeFault(f).kind} at ${codeAddress(f.pc)}${f.symbol !== null && !f.symbol.startsWith('unsymbolicated') ? ` in ${f.symbol}` : ''}`
  }
  if (kind === 'heartbeat') {
    const h = record as { uptime_ms: number, boot_count: number }
    return `heartbeat: up ${uptime(h.uptime_ms)} (boot ${h.boot_count})`
  }
  return (record as { text: string }).text.trimEnd()
}

/** A duration as days, hours, minutes and seconds, the largest two that are not zero (`2h 5m`, `40s`). */
function uptime (ms: number): string {
  const parts = [[86_400_000, 'd'], [3_600_000, 'h'], [60_000, 'm'], [1000, 's']] as const
  let rest = Math.max(0, ms)
  const shown: string[] = []
  for (const [unit, name] of parts) {
    const n = Math.floor(rest / unit)
    rest -= n * unit
    if (n > 0 || shown.length > 0) shown.push(`${n}${name}`)
  }
  return shown.length === 0 ? '0s' : shown.slice(0, 2).join(' ')
}
