// `berth webhooks add|list|rm|history`: webhook registrations through the control API.
import { controlClient, formatTable, UsageError, type CliRegistry } from '../../kernel/index.js'
import type { RegistrationInfo } from './registrations.js'
import type { Invocation } from './runner.js'

export function webhookCommands (cli: CliRegistry): void {
  const webhooks = cli.program.command('webhooks').description('git push webhooks that redeploy a service or, with __infra__, pull and deploy the working directory')

  webhooks.command('add')
    .description('register a webhook; give the git host the receiver URL and the same secret')
    .requiredOption('--repo <owner/repo>', 'the repository that pushes')
    .requiredOption('--service <name>', 'the service to redeploy, or __infra__')
    .option('--branch <branch>', 'the branch whose pushes count', 'main')
    .option('--secret <secret>', 'the shared secret (default: WEBHOOK_SECRET)')
    .action(async (options: { repo: string, service: string, branch: string, secret?: string }) => {
      const secret = options.secret ?? process.env.WEBHOOK_SECRET
      if (secret === undefined || secret === '') throw new UsageError('no secret: pass --secret or set WEBHOOK_SECRET')
      const client = await controlClient(cli)
      const added = await client.json<RegistrationInfo>('POST', '/api/v1/webhooks', { repo: options.repo, service_name: options.service, branch: options.branch, secret })
      console.log(`webhook ${added.id} added: pushes to ${added.repo} ${added.branch} → ${added.service_name}`)
      console.log(`receiver: ${new URL('/api/v1/webhooks/', client.url).href}<git|github|gitea|gitlab>`)
    })

  webhooks.command('list')
    .description('list webhooks (never their secrets)')
    .action(async () => {
      const client = await controlClient(cli)
      const { webhooks: list } = await client.json<{ webhooks: RegistrationInfo[] }>('GET', '/api/v1/webhooks')
      console.log(formatTable(['ID', 'REPO', 'BRANCH', 'SERVICE', 'CREATED'], list.map(w => [w.id, w.repo, w.branch, w.service_name, w.created_at])))
    })

  webhooks.command('rm <id>')
    .description('remove a webhook')
    .action(async (id: string) => {
      const client = await controlClient(cli)
      await client.json('DELETE', `/api/v1/webhooks/${encodeURIComponent(id)}`)
      console.log(`webhook ${id} removed`)
    })

  webhooks.command('history <id>')
    .description('the last 10 invocations of a webhook (kept in memory by the server)')
    .action(async (id: string) => {
      const client = await controlClient(cli)
      const { invocations } = await client.json<{ invocations: Invocation[] }>('GET', `/api/v1/webhooks/${encodeURIComponent(id)}/history`)
      console.log(formatTable(['AT', 'SHA', 'OUTCOME', 'DURATION', 'DETAIL'], invocations.map(i => [i.at, i.sha.slice(0, 12), i.outcome, `${i.duration_ms} ms`, i.detail])))
    })
}
