// `berth db create <engine> <name>`: a database as a service, through the control API (admin).
import { controlClient, UsageError, type CliRegistry } from '../../kernel/index.js'
import { ENGINES } from './engines.js'
import type { CreatedDatabase } from './runtime.js'

export function databaseCommands (cli: CliRegistry): void {
  const db = cli.program.command('db').description('databases deployed as services')
  db.command('create <engine> <name>')
    .description(`deploy a database (${ENGINES.join(', ')}) with a generated password (a secret), a volume, a health check and a backup hook, on a fixed host port; prints its connection strings`)
    .option('--image <ref>', 'the image (default: [databases].postgres_image or redis_image)')
    .option('--port <port>', 'the host port it is published on (default: the first free one from 15432 for postgres, 16379 for redis)')
    .action(async (engine: string, name: string, options: { image?: string, port?: string }) => {
      if (!(ENGINES as readonly string[]).includes(engine)) throw new UsageError(`engine must be one of ${ENGINES.join(', ')}, got ${engine}`)
      const port = options.port === undefined ? undefined : Number(options.port)
      if (port !== undefined && (!Number.isInteger(port) || port < 1 || port > 65535)) throw new UsageError(`--port must be a port from 1 to 65535, got ${options.port ?? ''}`)
      const client = await controlClient(cli)
      const created = await client.json<CreatedDatabase>('POST', '/api/v1/databases', { engine, name, image: options.image, port })
      console.log(`${created.engine} ${created.service} deployed from ${created.image}${created.healthy ? ', healthy' : ' (not healthy yet: see berth status)'}`)
      console.log(`service file: ${created.file}; password: secret ${created.secret}`)
      console.log(`services on its node reach it as ${created.service_connection}`)
      console.log(created.connection)
    })
}
