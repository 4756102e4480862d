// databases: `berth db create <engine> <name>` deploys a database (postgres, redis) as a service of
// its own: a generated password kept as a secret, a volume, a health check, a backup pre_hook, and
// a connection string back.
import type { Static } from '@sinclair/typebox'
import { definePlugin, type SectionSchema } from '../../kernel/index.js'
import { databaseCommands } from './commands.js'

const databasesSection = ((Type) => Type.Object({
  postgres_image: Type.String({ default: 'postgres:16', description: 'Image of `db create postgres` (the official image\'s conventions: POSTGRES_USER, POSTGRES_PASSWORD, POSTGRES_DB, data in /var/lib/postgresql/data).' }),
  redis_image: Type.String({ default: 'redis:7', description: 'Image of `db create redis` (redis-server and redis-cli on the PATH, a shell).' })
}, { additionalProperties: false })) satisfies SectionSchema

export type DatabasesConfig = Static<ReturnType<typeof databasesSection>>

export default definePlugin({
  name: 'databases',
  version: '0.1.0',
  product: 'orchestration',
  description: 'berth db create: databases deployed as services with a secret password, a volume, a health check and a backup hook.',
  dependsOn: ['tokens', 'secrets', 'reconciler'],
  optionalDependsOn: ['cluster'],
  config: databasesSection,

  async setup (ctx) {
    const { setupDatabases } = await import('./runtime.js')
    setupDatabases(ctx)
  },

  commands: databaseCommands
})
