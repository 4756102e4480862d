// Retention: delete faults, metrics, reboots, traces and heartbeats (and the idempotency marks) older than
// `retention_days` (on PostgreSQL whole days of metrics go as dropped partitions).
import type { TelemetryStorage } from './storage/contract.js'

export async function deleteExpired (storage: TelemetryStorage, retentionDays: number, now = Date.now()): Promise<number> {
  return await storage.deleteBefore(now - retentionDays * 86_400_000)
}
