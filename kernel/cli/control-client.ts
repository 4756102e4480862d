// How `berth` commands reach the control API, the kernel's listener: its URL from the CLI settings
// and a bearer token from BERTH_TOKEN or the admin token file of the state directory, which the
// plugin that guards the control API (tokens) writes on first boot.
import { join } from 'node:path'
import { ApiClient } from './cli-client.js'
import type { CliRegistry } from './cli-registry.js'
// node:fs without an ES import: its ES namespace loads fs streams, slowing every `berth` command down (docs/benchmarks.md, CLI start-up).
const { existsSync, readFileSync } = process.getBuiltinModule('node:fs')

/** The bootstrap admin token's file in the state directory. */
export const ADMIN_TOKEN_FILE = 'admin.token'

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
