// `berth secrets set|list|rm`: the secret store through the control API, so it works from any directory.
// `--project` addresses a project's secret; without it a secret is shared (with every project, or
// with those of `--share-with`).
import { controlClient, formatTable, UsageError, type CliRegistry } from '../../kernel/index.js'
import { SECRET_NAME } from './references.js'
import type { SecretInfo } from './secret-store.js'

function checkName (name: string): void {
  if (!SECRET_NAME.test(name)) throw new UsageError(`secret name "${name}" must be letters, digits and underscores, not starting with a digit`)
}

/** `?project=<p>` for a project's secret, nothing for a shared one. */
function projectQuery (project: string | undefined): string {
  return project === undefined ? '' : `?project=${encodeURIComponent(project)}`
}

export function secretCommands (cli: CliRegistry): void {
  const secrets = cli.program.command('secrets').description('the encrypted secret store (needs an admin token)')

  secrets.command('set <name> <value>')
    .description('store (or replace) a secret: a project\'s (--project), or shared with every project (or those of --share-with)')
    .option('-p, --project <project>', 'the project the secret belongs to')
    .option('--share-with <projects>', 'a shared secret\'s projects, comma-separated (default: every project)')
    .action(async (name: string, value: string, options: { project?: string, shareWith?: string }) => {
      checkName(name)
      if (options.project !== undefined && options.shareWith !== undefined) throw new UsageError('--share-with goes with a shared secret: leave out --project')
      const sharedWith = options.shareWith?.split(',').map(p => p.trim()).filter(p => p !== '')
      const client = await controlClient(cli)
      await client.json('PUT', `/api/v1/secrets/${name}${projectQuery(options.project)}`, { value, ...(sharedWith !== undefined && { shared_with: sharedWith }) })
      const whose = options.project !== undefined ? ` (project ${options.project})` : sharedWith !== undefined ? ` (shared with ${sharedWith.join(', ')})` : ' (shared with every project)'
      console.log(`secret ${name}${whose} stored; redeploy the services that use it to apply it`)
    })

  secrets.command('list')
    .description('list secrets: name, project (or whom a shared one is shared with), when each was set; never the values')
    .option('-p, --project <project>', 'only this project\'s secrets')
    .action(async (options: { project?: string }) => {
      const client = await controlClient(cli)
      const { secrets: list } = await client.json<{ secrets: SecretInfo[] }>('GET', `/api/v1/secrets${projectQuery(options.project)}`)
      const whose = (s: SecretInfo): string => s.project ?? `shared: ${s.shared_with?.join(',') ?? '*'}`
      console.log(formatTable(['NAME', 'PROJECT', 'UPDATED'], list.map(s => [s.name, whose(s), s.updated_at])))
    })

  secrets.command('rm <name>')
    .description('delete a secret (a project\'s with --project, else the shared one)')
    .option('-p, --project <project>', 'the project the secret belongs to')
    .action(async (name: string, options: { project?: string }) => {
      checkName(name)
      const client = await controlClient(cli)
      await client.json('DELETE', `/api/v1/secrets/${name}${projectQuery(options.project)}`)
      console.log(`secret ${name}${options.project === undefined ? '' : ` of project ${options.project}`} deleted`)
    })
}
