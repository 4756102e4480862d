// `berth tokens create|list|revoke`: manage control API tokens through the running server.
import { controlClient, formatTable, UsageError, type CliRegistry } from '../../kernel/index.js'
import { isRole, ROLES } from './roles.js'
import type { TokenInfo } from './token-store.js'

export function tokenCommands (cli: CliRegistry): void {
  const tokens = cli.program.command('tokens').description('manage control API tokens (needs an admin token)')

  tokens.command('create <name>')
    .description(`create a token; prints it once (roles: ${ROLES.join(', ')})`)
    .requiredOption('-r, --role <role>', `the token's role: ${ROLES.join(', ')}`)
    .option('-p, --project <projects>', 'limit a viewer or deployer token to these projects (comma-separated)')
    .action(async (name: string, options: { role: string, project?: string }) => {
      if (!isRole(options.role)) throw new UsageError(`--role must be one of ${ROLES.join(', ')}; got "${options.role}"`)
      const projects = options.project?.split(',').map(p => p.trim()).filter(p => p !== '')
      if (projects !== undefined && projects.length === 0) throw new UsageError('--project needs one or more project names, comma-separated')
      const client = await controlClient(cli)
      const created = await client.json<TokenInfo & { token: string }>('POST', '/api/v1/tokens', { name, role: options.role, ...(projects !== undefined && { projects }) })
      console.log(created.token)
      const scope = created.projects === undefined ? '' : `, projects ${created.projects.join(', ')}`
      console.error(`token "${created.name}" (id ${created.id}, role ${created.role}${scope}) created; it is not shown again`)
    })

  tokens.command('list')
    .description('list tokens: id, name, role, projects (* for every one), creation time (never the secrets)')
    .action(async () => {
      const client = await controlClient(cli)
      const { tokens: list } = await client.json<{ tokens: TokenInfo[] }>('GET', '/api/v1/tokens')
      console.log(formatTable(['ID', 'NAME', 'ROLE', 'PROJECTS', 'CREATED'], list.map(t => [t.id, t.name, t.role, t.projects?.join(',') ?? '*', t.created_at])))
    })

  tokens.command('revoke <id>')
    .description('revoke a token by id')
    .action(async (id: string) => {
      const client = await controlClient(cli)
      await client.json('DELETE', `/api/v1/tokens/${encodeURIComponent(id)}`)
      console.log(`token ${id} revoked`)
    })
}
