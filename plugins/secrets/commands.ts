// `berth secrets set|list|rm`: the secret store through the control API, so it works from any directory.
import { controlClient, formatTable, UsageError, type CliRegistry } from '../../kernel/index.js'
import { SECRET_NAME } from './references.js'
import type { SecretInfo } from './secret-store.js'

function checkName (name: string): void {
  if (!SECRET_NAME.test(name)) throw new UsageError(`secret name "${name}" must be letters, digits and underscores, not starting with a digit`)
}

export function secretCommands (cli: CliRegistry): void {
  const secrets = cli.program.command('secrets').description('the encrypted secret store (needs an admin token)')

  secrets.command('set <name> <value>')
    .description('store (or replace) a secret')
    .action(async (name: string, value: string) => {
      checkName(name)
      const client = await controlClient(cli)
      await client.json('PUT', `/api/v1/secrets/${name}`, { value })
      console.log(`secret ${name} stored; redeploy the services that use it to apply it`)
    })

  secrets.command('list')
    .description('list secret names and when each was set (never the values)')
    .action(async () => {
      const client = await controlClient(cli)
      const { secrets: list } = await client.json<{ secrets: SecretInfo[] }>('GET', '/api/v1/secrets')
      console.log(formatTable(['NAME', 'UPDATED'], list.map(s => [s.name, s.updated_at])))
    })

  secrets.command('rm <name>')
    .description('delete a secret')
    .action(async (name: string) => {
      checkName(name)
      const client = await controlClient(cli)
      await client.json('DELETE', `/api/v1/secrets/${name}`)
      console.log(`secret ${name} deleted`)
    })
}
