// Volume archives: a directory packed with tar and gzip (the system's GNU tar, run as a child), its
// SHA-256 and size for the manifest, and the way back (the directory emptied, then unpacked).
import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { readdir, rm, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)
const TAR_TIMEOUT_MS = 3_600_000

async function tar (args: string[]): Promise<void> {
  try {
    await run('tar', args, { timeout: TAR_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024 })
  } catch (err) {
    const { stderr, message } = err as { stderr?: string, message: string }
    throw new Error(`tar ${args[0]} failed: ${(stderr ?? '').trim().split('\n').at(-1) ?? message}`)
  }
}

/** Pack `dir` (its contents, owners and modes kept) into the gzip-compressed tar `file`. */
export async function pack (dir: string, file: string): Promise<{ bytes: number, sha256: string }> {
  await tar(['-czf', file, '--numeric-owner', '-C', dir, '.'])
  return { bytes: (await stat(file)).size, sha256: await sha256Of(file) }
}

/** Replace everything in `dir` with the contents of `file`. */
export async function unpack (file: string, dir: string): Promise<void> {
  for (const entry of await readdir(dir)) await rm(join(dir, entry), { recursive: true, force: true })
  await tar(['-xzf', file, '--numeric-owner', '-C', dir])
}

export async function sha256Of (file: string): Promise<string> {
  const hash = createHash('sha256')
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer)
  return hash.digest('hex')
}
