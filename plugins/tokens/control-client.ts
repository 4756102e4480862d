// How `berth` commands reach the control API: its URL from the CLI settings and a bearer token from
// BERTH_TOKEN or the admin token the server wrote to the state directory.
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ApiClient, type CliRegistry } from '../../kernel/index.js'
import { ADMIN_TOKEN_FILE } from './token-store.js'

export async function controlClient (cli: CliRegistry): Promise<ApiClient> {
  const { controlUrl, stateDir } = await cli.settings()
  const fromEnv = process.env.BERTH_TOKEN
  if (fromEnv !== undefined && fromEnv !== '') return new ApiClient(controlUrl, `Bearer ${fromEnv.trim()}`, 'BERTH_TOKEN')
  const file = join(stateDir, ADMIN_TOKEN_FILE)
  if (!existsSync(file)) {
    throw new Error(`no token: ${file} does not exist (start the server with this state directory first, pass --state-dir, or set BERTH_TOKEN)`)
  }
  return new ApiClient(controlUrl, `Bearer ${readFileSync(file, 'utf8').trim()}`, file)
}
