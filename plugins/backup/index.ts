// backup: scheduled and on-demand snapshots of service volumes (each service's pre_hook first), to
// local directories and S3 buckets (rclone), pruned after retention_days, and restores from them.
import type { Static } from '@sinclair/typebox'
import { definePlugin, type SectionSchema } from '../../kernel/index.js'
import { backupCommands } from './commands.js'
import type { Backups } from './runtime.js'

const backupSection = ((Type) => Type.Object({
  enabled: Type.Boolean({ default: false, description: 'Run backups on the schedule (berth backup all works either way).' }),
  schedule: Type.String({ default: '', description: 'Six-field cron expression with seconds (0 0 3 * * * = 03:00:00 daily).' }),
  retention_days: Type.Integer({ minimum: 1, default: 7, description: 'Snapshots older than this are removed from every target after a run.' }),
  staging_dir: Type.String({ default: 'backup-staging', description: 'Where a snapshot is assembled before it is copied to the targets, relative to the state directory.' }),
  targets: Type.Array(Type.Union([
    Type.Object({
      type: Type.Literal('local'),
      name: Type.Optional(Type.String({ pattern: '^[a-zA-Z0-9_.-]+$' })),
      path: Type.String({ minLength: 1, description: 'Directory snapshots are written to.' })
    }, { additionalProperties: false }),
    Type.Object({
      type: Type.Literal('s3'),
      name: Type.Optional(Type.String({ pattern: '^[a-zA-Z0-9_.-]+$' })),
      endpoint: Type.String({ pattern: '^https?://', description: 'S3 endpoint URL.' }),
      bucket: Type.String({ minLength: 1 }),
      region: Type.String({ default: 'us-east-1' }),
      prefix: Type.String({ default: '', description: 'Folder inside the bucket.' }),
      access_key: Type.String({ description: 'Normally ${secrets.NAME}.' }),
      secret_key: Type.String({ description: 'Normally ${secrets.NAME}.' })
    }, { additionalProperties: false })
  ]), { default: [] })
}, { additionalProperties: false })) satisfies SectionSchema

export type BackupConfig = Static<ReturnType<typeof backupSection>>

declare module '../../kernel/index.js' {
  interface Services { backup: Backups }
}

export default definePlugin({
  name: 'backup',
  version: '0.1.0',
  product: 'orchestration',
  description: 'Volume snapshots to local directories and S3 (rclone), on a schedule or on demand, and restores.',
  dependsOn: ['tokens', 'secrets', 'reconciler'],
  optionalDependsOn: ['cluster'],
  // Snapshots hold every plugin's databases beside the volumes.
  copiesAllState: true,
  config: backupSection,

  async setup (ctx) {
    const { setupBackups } = await import('./runtime.js')
    return setupBackups(ctx)
  },

  /** A run in progress finishes before the server stops. */
  async stop (_ctx, service) {
    await service.idle()
  },

  commands: backupCommands
})
