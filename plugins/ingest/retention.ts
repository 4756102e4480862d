// Retention: delete faults, metrics, reboots and traces (and the idempotency marks) older than
// `retention_days`, one device at a time, in one transaction.
import { markTime } from './chunk-marks.js'
import type { TelemetryStore } from './store.js'

export async function deleteExpired (store: TelemetryStore, retentionDays: number, now = Date.now()): Promise<number> {
  const cutoff = now - retentionDays * 86_400_000
  return await store.transaction(() => {
    let removed = 0
    for (const device of store.devices.getKeys()) {
      for (const db of store.series) {
        for (const key of db.getKeys({ start: [device], end: [device, cutoff] })) {
          db.remove(key)
          removed++
        }
      }
    }
    for (const { key, value } of store.seen.getRange()) {
      if (markTime(value) < cutoff) store.seen.remove(key)
    }
    return removed
  })
}
