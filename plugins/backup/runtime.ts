// The backup plugin at work: its targets (S3 credentials resolved from the secret store at each run),
// one run at a time (scheduled or asked for) and what it tells operators (outcomes.ts), the
// schedule's state in health, and the routes.
// Imported by setup only.
import { resolve } from 'node:path'
import { Conflict, NotFound, type PluginContext } from '../../kernel/index.js'
import { cronProblem } from '../../kernel/runtime-api.js'
import type { BackupConfig } from './index.js'
import { backupRoutes } from './routes.js'
import { runOutcomes } from './outcomes.js'
import { restore, takeSnapshot, type Progress, type RestoreRequest, type RunResult } from './snapshots.js'
import { LocalTarget, readManifest, S3Target, type Target } from './targets.js'
import type { Manifest } from './snapshots.js'
import { leaderRoutes } from '../cluster/index.js'

export interface Backups {
  run(progress: Progress): Promise<RunResult>
  list(): Promise<Array<{ target: string, snapshots?: Array<{ snapshot: string, created_at: string, volumes: Array<{ volume: string, service: string, bytes: number }> }>, error?: string }>>
  restore(request: RestoreRequest & { target?: string }): Promise<{ target: string, snapshot: string, volumes: string[] }>
  idle(): Promise<void>
}

/** Why the schedule is off, or undefined when it runs. */
function scheduleOff (config: BackupConfig): string | undefined {
  if (!config.enabled) return 'disabled ([backup].enabled is false or the section is absent)'
  if (config.targets.length === 0) return 'no [[backup.targets]]'
  if (config.schedule === '') return 'no [backup].schedule'
  const problem = cronProblem(config.schedule)
  return problem === undefined ? undefined : `[backup].schedule ${JSON.stringify(config.schedule)}: ${problem}`
}

export function setupBackups (ctx: PluginContext<BackupConfig>): Backups {
  const config = ctx.config
  const reconciler = ctx.use('reconciler').reconciler
  const secrets = ctx.use('secrets')
  const staging = resolve(ctx.stateDir, config.staging_dir)
  const outcomes = runOutcomes(ctx)
  const targetNames = config.targets.map((t, i) => t.name ?? `${t.type}-${i + 1}`)
  const targets = (): Target[] => config.targets.map((t, i) => {
    const name = targetNames[i]
    if (t.type === 'local') return new LocalTarget(name, resolve(ctx.cwd, t.path))
    const keys = secrets.resolve({ access_key: t.access_key, secret_key: t.secret_key }, `backup target ${name}`)
    return new S3Target(name, { ...t, access_key: keys.access_key, secret_key: keys.secret_key })
  })
  let running: Promise<unknown> | undefined
  const exclusive = async <T>(fn: () => Promise<T>): Promise<T> => {
    if (running !== undefined) throw new Conflict('a backup or restore is already running; try again when it ends')
    const work = ctx.track(fn())
    running = work
    try {
      return await work
    } finally {
      running = undefined
    }
  }
  const target = (name: string | undefined): Target => {
    const all = targets()
    if (all.length === 0) throw new NotFound('no [[backup.targets]] are configured')
    const found = name === undefined ? all[0] : all.find(t => t.name === name)
    if (found === undefined) throw new NotFound(`no backup target named ${name}; configured: ${all.map(t => t.name).join(', ')}`)
    return found
  }

  const backups: Backups = {
    run: async progress => await exclusive(async () => {
      if (config.targets.length === 0) throw new NotFound('no [[backup.targets]] are configured')
      const started = Date.now()
      let result: RunResult
      try {
        result = await takeSnapshot(reconciler, targets(), { staging, retentionDays: config.retention_days, progress, state: ctx.allState })
      } catch (err) {
        outcomes.failed(err, targetNames)
        throw err
      }
      await outcomes.finished(result, Date.now() - started)
      return result
    }),
    list: async () => await Promise.all(targets().map(async t => {
      try {
        const ids = await t.list()
        const snapshots = await Promise.all(ids.map(async id => {
          const manifest = await readManifest<Manifest>(t, id, staging)
          return { snapshot: id, created_at: manifest.created_at, volumes: manifest.volumes.map(v => ({ volume: v.volume, service: v.service, bytes: v.bytes })) }
        }))
        return { target: t.name, snapshots }
      } catch (err) {
        return { target: t.name, error: (err as Error).message }
      }
    })),
    restore: async request => await exclusive(async () => {
      const from = target(request.target)
      return { target: from.name, ...await restore(reconciler, from, request, staging) }
    }),
    idle: async () => { await running?.catch(() => undefined) }
  }

  const cluster = ctx.useOptional('cluster')
  const off = scheduleOff(config)
  if (off === undefined) {
    ctx.schedule.cron('run', config.schedule, async () => {
      // Among masters the leader backs up (the volumes of its engine).
      if (cluster?.isLeader() === false) return
      // A failed run was logged, counted and alerted on by the run itself.
      await backups.run(() => {}).catch((err: Error) => {
        if (err instanceof Conflict) ctx.log.info('scheduled backup skipped: another backup or restore is running')
      })
    })
    ctx.report({ schedule: config.schedule, targets: config.targets.length })
  } else {
    ctx.log.info(`backup schedule off: ${off}`)
    ctx.report({ schedule: `off: ${off}`, targets: config.targets.length })
  }
  ctx.http('control', leaderRoutes(cluster, backupRoutes(backups, ctx.use('tokens'))), { prefix: '/api/v1/backups' })
  return backups
}
