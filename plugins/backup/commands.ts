// `berth backup all|list|restore`: backups through the control API (an admin token for all and
// restore). `all` shows each step as the server reports it.
import { controlClient, formatTable, UsageError, type CliRegistry } from '../../kernel/index.js'
import type { Backups } from './runtime.js'
import type { RunResult } from './snapshots.js'

export function backupCommands (cli: CliRegistry): void {
  const backup = cli.program.command('backup').description('snapshots of service volumes to the [[backup.targets]], and restores')

  backup.command('all')
    .description('take a snapshot now: pre_hooks, volumes, every target, then pruning')
    .action(async () => {
      const client = await controlClient(cli)
      const { createInterface } = await import('node:readline')
      const lines = createInterface({ input: await client.stream('/api/v1/backups', 'POST') })
      let result: RunResult | undefined
      for await (const line of lines) {
        const event = JSON.parse(line) as { step?: string, detail?: string, result?: RunResult, error?: string }
        if (event.error !== undefined) throw new Error(event.error)
        if (event.result !== undefined) result = event.result
        else console.log(`  ${event.step ?? ''}  ${event.detail ?? ''}`)
      }
      if (result === undefined) throw new Error('the server ended the backup without a result')
      for (const t of result.targets) console.log(`  ${t.name}  ${t.ok ? `written${t.pruned !== undefined && t.pruned.length > 0 ? `, pruned ${t.pruned.join(' ')}` : ''}` : `FAILED: ${t.error ?? ''}`}`)
      console.log(`snapshot ${result.snapshot}: ${result.volumes} volumes, ${result.bytes} bytes, ${result.targets.filter(t => t.ok).length}/${result.targets.length} targets`)
      if (result.skipped.length > 0 || result.targets.some(t => !t.ok)) process.exitCode = 1
    })

  backup.command('list')
    .description('the snapshots on every target')
    .action(async () => {
      const client = await controlClient(cli)
      const { targets } = await client.json<{ targets: Awaited<ReturnType<Backups['list']>> }>('GET', '/api/v1/backups')
      const rows = targets.flatMap(t => t.error !== undefined
        ? [[t.target, '-', '-', `error: ${t.error}`]]
        : (t.snapshots ?? []).map(s => [t.target, s.snapshot, s.created_at, s.volumes.map(v => v.volume).join(' ')]))
      console.log(formatTable(['TARGET', 'SNAPSHOT', 'CREATED', 'VOLUMES'], rows))
    })

  backup.command('restore <name> [snapshot]')
    .description('put a service\'s volumes (or one volume) back from a snapshot (the newest holding it by default); the service is stopped meanwhile')
    .option('--target <name>', 'the target to restore from (default: the first configured)')
    .action(async (name: string, snapshot: string | undefined, options: { target?: string }) => {
      if (snapshot !== undefined && !/^\d{8}T\d{9}Z$/.test(snapshot)) throw new UsageError(`snapshot ${snapshot}: expected an id like 20261123T030000000Z (see berth backup list)`)
      const client = await controlClient(cli)
      const restored = await client.json<{ target: string, snapshot: string, volumes: string[] }>('POST', '/api/v1/backups/restore', { name, snapshot, target: options.target })
      console.log(`restored ${restored.volumes.join(', ')} from snapshot ${restored.snapshot} on ${restored.target}`)
    })
}
