// Sources of builds kept in git (`[service.build] git`): each repository is fetched into a bare
// repository of its own under the builds directory (only the commit wanted, `--depth 1`), and a
// commit's files are written out once into a directory named by the commit, which the build then
// reads as its context. A few checkouts are kept; older ones are removed after each new one.
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'

/** Checkouts kept (each a commit's files). */
const CHECKOUTS_KEPT = 5
const GIT_TIMEOUT_MS = 120_000
const SHA = /^[0-9a-f]{40}$/

/** Run a command; its standard output, or an error with the last line it wrote to standard error. */
async function run (command: string, args: readonly string[], options: { input?: NodeJS.ReadableStream } = {}): Promise<string> {
  // Only transports that fetch: never `ext::` (runs a command) or `fd::`.
  const child = spawn(command, args, { env: { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_ALLOW_PROTOCOL: 'http:https:ssh:git:file' }, stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'], timeout: GIT_TIMEOUT_MS })
  if (options.input !== undefined && child.stdin !== null) options.input.pipe(child.stdin)
  let stdout = ''
  let stderr = ''
  child.stdout?.on('data', (chunk: Buffer) => { stdout += chunk.toString() })
  child.stderr?.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  const code = await new Promise<number | null>((resolve, reject) => { child.once('error', reject); child.once('close', resolve) })
  if (code !== 0) throw new Error(stderr.trim().split('\n').at(-1) ?? `${command} exited with ${code ?? 'a signal'}`)
  return stdout
}

export class GitSources {
  readonly #dir: string

  /** `dir`: where repositories and checkouts live (made when first needed). */
  constructor (dir: string) {
    this.#dir = dir
  }

  /** The files of `want` (a branch, a tag, `HEAD`, or a commit's full hash) of the repository at `url`, and its commit. */
  async checkout (url: string, want: string): Promise<{ dir: string, commit: string }> {
    const repository = join(this.#dir, 'repositories', createHash('sha256').update(url).digest('hex').slice(0, 16))
    if (!existsSync(repository)) {
      mkdirSync(repository, { recursive: true, mode: 0o700 })
      await run('git', ['init', '--bare', '--quiet', repository])
    }
    try {
      await run('git', ['-C', repository, 'fetch', '--quiet', '--depth', '1', '--no-tags', '--', url, want])
    } catch (err) {
      throw new Error(`fetching ${SHA.test(want) ? `commit ${want}` : `"${want}"`} from ${url} failed: ${(err as Error).message}`)
    }
    const commit = (await run('git', ['-C', repository, 'rev-parse', '--verify', 'FETCH_HEAD^{commit}'])).trim()
    const dir = join(this.#dir, 'checkouts', commit)
    if (!existsSync(dir)) {
      const partial = `${dir}.partial`
      rmSync(partial, { recursive: true, force: true })
      mkdirSync(partial, { recursive: true, mode: 0o700 })
      const archive = spawn('git', ['-C', repository, 'archive', '--format=tar', commit], { stdio: ['ignore', 'pipe', 'ignore'] })
      await run('tar', ['-x', '-C', partial], { input: archive.stdout })
      renameSync(partial, dir)
      this.#prune(commit)
    }
    return { dir, commit }
  }

  /** Remove checkouts beyond the newest CHECKOUTS_KEPT (never `keep`). */
  #prune (keep: string): void {
    const root = join(this.#dir, 'checkouts')
    const old = readdirSync(root).filter(name => SHA.test(name) && name !== keep)
      .map(name => ({ name, at: statSync(join(root, name)).mtimeMs }))
      .sort((a, b) => b.at - a.at)
      .slice(CHECKOUTS_KEPT - 1)
    for (const { name } of old) rmSync(join(root, name), { recursive: true, force: true })
  }
}
