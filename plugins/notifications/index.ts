// notifications: every operator.alert (a failed deploy or backup, a rollback, a certificate failure,
// a node offline) delivered to the configured webhook URLs as a JSON POST, signed with HMAC-SHA256
// when the webhook has a secret, retried with backoff; a Slack-compatible body (`{"text"}`) on request.
import type { Static } from '@sinclair/typebox'
import { definePlugin, type SectionSchema } from '../../kernel/index.js'
import { notificationCommands } from './commands.js'

const notificationsSection = ((Type) => Type.Object({
  retries: Type.Integer({ minimum: 0, maximum: 20, default: 5, description: 'Attempts after the first when a delivery fails (a connection error, a timeout, 408, 429 or 5xx).' }),
  retry_initial_ms: Type.Integer({ minimum: 1, default: 1000, description: 'Wait before the first retry; it doubles at each retry (±20 %).' }),
  retry_max_ms: Type.Integer({ minimum: 1, default: 60_000, description: 'Longest wait between two attempts (a Retry-After is honoured up to it).' }),
  timeout_ms: Type.Integer({ minimum: 1, default: 10_000, description: 'How long one attempt may take.' }),
  webhooks: Type.Array(Type.Object({
    name: Type.Optional(Type.String({ pattern: '^[a-zA-Z0-9_.-]+$', description: 'Shown in logs and metrics instead of the URL; default webhook-<position>.' })),
    url: Type.String({ minLength: 1, description: 'Where alerts are POSTed (http or https); may be a ${secrets.NAME} reference, like a Slack webhook URL.' }),
    secret: Type.String({ default: '', description: 'HMAC-SHA256 key of the X-Berth-Signature header; normally ${secrets.NAME}; empty: unsigned.' }),
    format: Type.Union([Type.Literal('json'), Type.Literal('slack')], { default: 'json', description: 'json: the alert as an object; slack: {"text": "..."} for Slack-compatible incoming webhooks.' }),
    kinds: Type.Array(Type.String({ minLength: 1 }), { default: [], description: 'Alert kinds delivered (backup.failed, node.offline, …); empty: every kind.' })
  }, { additionalProperties: false }), { default: [] })
}, { additionalProperties: false })) satisfies SectionSchema

export type NotificationsConfig = Static<ReturnType<typeof notificationsSection>>

export default definePlugin({
  name: 'notifications',
  version: '0.1.0',
  product: 'orchestration',
  description: 'Delivers every operator alert to webhook URLs: signed JSON or Slack-compatible, retried with backoff.',
  dependsOn: ['tokens', 'secrets'],
  config: notificationsSection,

  async setup (ctx) {
    const { setupNotifications } = await import('./runtime.js')
    setupNotifications(ctx)
  },

  commands: notificationCommands
})
