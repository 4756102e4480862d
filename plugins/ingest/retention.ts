// Retention: delete faults, metrics, reboots and traces (and the idempotency marks) older than
// `retention_days`, one device at a time, in one transaction.
import { markTime } from './chunk-marks.js'
import type { TelemetryStore } from './store.js'

export async function deleteExpired (store: TelemetryStore, retentionDays: number, now = Date.now()): Promise<number> {
  const cutoff = now - retentionDays * 86_400_000
  return await store.transaction(() => {
    let removed = 0
    for (const device of store.devices.getKeys()) removed += store.removeSeries(device, cutoff)
    for (const { key, value } of store.seen.getRange()) {
      if (markTime(value) < cutoff) store.seen.remove(key)
    }
    return removed
  })
}
