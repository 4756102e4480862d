// webhooks: git-push receivers that redeploy a service (its image force-pulled) or, for __infra__,
// pull the server's working directory and deploy what changed. Registrations persist in LMDB;
// the last 10 invocations of each are kept in memory.
import { definePlugin } from '../../kernel/index.js'
import { webhookCommands } from './commands.js'
import type { Runner } from './runner.js'

export interface WebhookService {
  runner: Runner
}

declare module '../../kernel/index.js' {
  interface Services { webhooks: WebhookService }
}

export default definePlugin({
  name: 'webhooks',
  version: '0.1.0',
  product: 'orchestration',
  description: 'Git push webhooks (git, GitHub, Gitea, GitLab) that redeploy services or the infrastructure repository.',
  dependsOn: ['tokens', 'reconciler'],
  optionalDependsOn: ['cluster'],

  async setup (ctx) {
    const { setupWebhooks } = await import('./runtime.js')
    return setupWebhooks(ctx, ctx.use('reconciler'))
  },

  /** Pushes being handled finish before the server stops. */
  async stop (_ctx, service) {
    await service.runner.idle()
  },

  commands: webhookCommands
})
