// The `berth update` command's definition. What it does (npm, the registry, digests) lives in
// update.ts and is loaded only when the command runs, so other commands never load it.
import type { Command } from 'commander'

/** `berth update --check` exits with this when a newer release is published. */
export const UPDATE_AVAILABLE = 10

export interface UpdateOptions {
  check?: boolean
  registry?: string
  prefix?: string
}

export function addUpdateCommand (program: Command): void {
  program.command('update')
    .description('install the latest release of berth from the npm registry, after checking it against the registry\'s integrity digest')
    .option('--check', `only compare the installed version with the latest release (exit ${UPDATE_AVAILABLE} when newer is published)`)
    .option('--registry <url>', 'npm registry to use (default: npm config get registry)')
    .option('--prefix <dir>', 'npm global prefix holding the install to replace (default: the one this berth runs from)')
    .action(async (options: UpdateOptions) => {
      const { runUpdate } = await import('./update.js')
      process.exitCode = await runUpdate(options)
    })
}
