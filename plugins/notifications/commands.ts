// `berth notifications test`: one test alert to every configured webhook, through the control API
// (admin), and what each answered.
import { controlClient } from '../../kernel/index.js'
import type { CliRegistry } from '../../kernel/index.js'
import type { TestDelivery } from './runtime.js'

export function notificationCommands (cli: CliRegistry): void {
  const notifications = cli.program.command('notifications').description('alerts delivered to webhooks ([notifications])')
  notifications.command('test')
    .description('send one test alert to every configured webhook (one attempt each); exit 1 when one fails')
    .action(async () => {
      const client = await controlClient(cli)
      const { deliveries } = await client.json<{ deliveries: TestDelivery[] }>('POST', '/api/v1/notifications/test')
      for (const d of deliveries) console.log(`  ${d.webhook}  ${d.ok ? `delivered (HTTP ${d.status ?? ''})` : `FAILED: ${d.error ?? ''}`}`)
      if (deliveries.some(d => !d.ok)) process.exitCode = 1
    })
}
