// What a backup run tells operators. Per target: the last complete snapshot written to it (when, its
// bytes, how long the run took; kept in LMDB so the gauges survive a restart) and the failures, as
// Prometheus metrics. A run that failed, or wrote snapshots without some services, is logged at
// error, and each target that did not get a complete snapshot raises an operator.alert
// `backup.failed` whose subject is the target.
import { messageOf, type PluginContext } from '../../kernel/index.js'
import type { BackupConfig } from './index.js'
import type { RunResult } from './snapshots.js'
import { controlState } from '../cluster/index.js'

/** The last complete snapshot a target received. */
interface LastSuccess {
  /** ms since the epoch, when the run ended. */
  at: number
  bytes: number
  seconds: number
  snapshot: string
}

/** Why a target did not get a complete snapshot: the copy to it failed, services were skipped, or the run failed before any copy. */
type FailureReason = 'target' | 'skipped' | 'run'

export interface Outcomes {
  /** A run that returned: each target's result counted, logged and alerted on. */
  finished(result: RunResult, durationMs: number): Promise<void>
  /** A run that threw before reaching the targets (every configured target missed it). */
  failed(err: unknown, targets: readonly string[]): void
}

export function runOutcomes (ctx: PluginContext<BackupConfig>): Outcomes {
  const lastSuccess = controlState(ctx).db<LastSuccess>('last-success')
  const at = ctx.metrics.gauge({ name: 'berth_backup_last_success_timestamp_seconds', help: 'When the last complete snapshot was written to the target (seconds since the epoch).', labelNames: ['target'] })
  const bytes = ctx.metrics.gauge({ name: 'berth_backup_last_success_bytes', help: 'Bytes of the last complete snapshot written to the target (volume archives and state files).', labelNames: ['target'] })
  const seconds = ctx.metrics.gauge({ name: 'berth_backup_last_success_duration_seconds', help: 'How long the run that wrote the last complete snapshot to the target took.', labelNames: ['target'] })
  const failures = ctx.metrics.counter({ name: 'berth_backup_failures_total', help: 'Runs that did not write a complete snapshot to the target, by reason: target (the copy failed), skipped (services left out), run (it failed before any copy).', labelNames: ['target', 'reason'] })
  const show = (target: string, success: LastSuccess): void => {
    at.labels(target).set(success.at / 1000)
    bytes.labels(target).set(success.bytes)
    seconds.labels(target).set(success.seconds)
  }
  for (const { key, value } of lastSuccess.getRange()) show(key, value)

  const failure = (target: string, reason: FailureReason, message: string, details: Record<string, string>): void => {
    failures.labels(target, reason).inc()
    ctx.events.emit('operator.alert', { kind: 'backup.failed', subject: target, message, at: Date.now(), details: { reason, ...details } })
  }

  return {
    async finished (result, durationMs) {
      const skipped = result.skipped.map(s => `${s.service} (${s.reason})`).join(', ')
      for (const target of result.targets) {
        if (!target.ok) {
          failure(target.name, 'target', `backup to target ${target.name} failed: ${target.error ?? 'unknown error'}`, { snapshot: result.snapshot, error: target.error ?? '' })
        } else if (result.skipped.length > 0) {
          failure(target.name, 'skipped', `snapshot ${result.snapshot} on target ${target.name} lacks ${result.skipped.map(s => s.service).join(', ')}: ${skipped}`, { snapshot: result.snapshot, skipped })
        } else {
          const success: LastSuccess = { at: Date.now(), bytes: result.total_bytes, seconds: durationMs / 1000, snapshot: result.snapshot }
          show(target.name, success)
          await lastSuccess.put(target.name, success)
        }
      }
      const facts = { snapshot: result.snapshot, volumes: result.volumes, bytes: result.total_bytes, duration_ms: durationMs, skipped: result.skipped, targets: result.targets }
      if (result.skipped.length > 0 || result.targets.some(t => !t.ok)) ctx.log.error(facts, 'backup finished with failures: not every target holds a complete snapshot')
      else ctx.log.info(facts, 'backup finished')
    },

    failed (err, targets) {
      ctx.log.error({ err }, 'backup failed')
      for (const target of targets) failure(target, 'run', `backup run failed before reaching target ${target}: ${messageOf(err)}`, { error: messageOf(err) })
    }
  }
}
