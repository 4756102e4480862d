// `berth db create <engine> <name>`: a database as a service, through the control API (admin).
import { UsageError, type CliRegistry } from '../../kernel/index.js'
import { controlClient } from '../tokens/control-client.js'
import { ENGINES } from './engines.js'
import type { CreatedDatabase } from './runtime.js'

export function databaseCommands (cli: CliRegistry): void {
  const db = cli.program.command('db').description('databases deployed as services')
  db.command('create <engine> <name>')
    .description(`deploy a database (${ENGINES.join(', ')}) with a generated password (a secret), a volume, a health check and a backup hook; prints its connection string`)
    .option('--image <ref>', 'the image (default: [databases].postgres_image or redis_image)')
    .action(async (engine: string, name: string, options: { image?: string }) => {
      if (!(ENGINES as readonly string[]).includes(engine)) throw new UsageError(`engine must be one of ${ENGINES.join(', ')}, got ${engine}`)
      const client = await controlClient(cli)
      const created = await client.json<CreatedDatabase>('POST', '/api/v1/databases', { engine, name, image: options.image })
      console.log(`${created.engine} ${created.service} deployed from ${created.image}${created.healthy ? ', healthy' : ' (not healthy yet: see berth status)'}`)
      console.log(`service file: ${created.file}; password: secret ${created.secret}`)
      console.log(created.connection)
    })
}
