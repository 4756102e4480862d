// Where snapshots go: a local directory, or an S3 bucket through rclone (credentials passed per call
// in rclone's environment, never a config file or the command line). A snapshot is a folder named by
// its id holding manifest.json and the volume archives.
import { execFile } from 'node:child_process'
import { cp, mkdir, readdir, readFile, rename, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { BerthError } from '../../kernel/index.js'
import { BACKUP_CODES } from './errors.js'

const run = promisify(execFile)
const RCLONE_TIMEOUT_MS = 3_600_000

/** A target that failed or gave back damaged data: answered 502 with its message. */
export class TargetFailed extends BerthError {
  constructor (message: string) {
    super(message, BACKUP_CODES.BACKUP_TARGET.status, BACKUP_CODES.BACKUP_TARGET.code)
  }
}

export interface Target {
  readonly name: string
  /** Copy the snapshot folder `dir` to the target as `snapshot`. */
  put(dir: string, snapshot: string): Promise<void>
  /** Snapshot ids on the target. */
  list(): Promise<string[]>
  /** A file of a snapshot, copied to `dest`. */
  fetch(snapshot: string, file: string, dest: string): Promise<void>
  remove(snapshot: string): Promise<void>
}

export class LocalTarget implements Target {
  constructor (readonly name: string, readonly path: string) {}

  /** Filesystem failures become TargetFailed, with the path and the system's word for it. */
  async #fs<T> (what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn()
    } catch (err) {
      const { code, message } = err as NodeJS.ErrnoException
      throw new TargetFailed(`local target ${this.name}: ${what} in ${this.path} failed: ${code ?? message}`)
    }
  }

  async put (dir: string, snapshot: string): Promise<void> {
    await this.#fs('writing', async () => {
      await mkdir(this.path, { recursive: true, mode: 0o700 })
      // Copied under another name first: a snapshot folder is there whole or not at all.
      const partial = join(this.path, `${snapshot}.partial`)
      await rm(partial, { recursive: true, force: true })
      await cp(dir, partial, { recursive: true })
      await rename(partial, join(this.path, snapshot))
    })
  }

  async list (): Promise<string[]> {
    const entries = await this.#fs('listing', async () => await readdir(this.path, { withFileTypes: true }).catch((err: NodeJS.ErrnoException) => { if (err.code === 'ENOENT') return []; throw err }))
    return entries.filter(e => e.isDirectory() && SNAPSHOT.test(e.name)).map(e => e.name).sort()
  }

  async fetch (snapshot: string, file: string, dest: string): Promise<void> {
    await this.#fs(`reading ${snapshot}/${file}`, async () => { await cp(join(this.path, snapshot, file), dest) })
  }

  async remove (snapshot: string): Promise<void> {
    await this.#fs(`removing ${snapshot}`, async () => { await rm(join(this.path, snapshot), { recursive: true, force: true }) })
  }
}

export interface S3Settings {
  endpoint: string
  bucket: string
  region: string
  prefix: string
  access_key: string
  secret_key: string
}

export class S3Target implements Target {
  readonly #remote: string
  constructor (readonly name: string, readonly settings: S3Settings) {
    this.#remote = `:s3:${[settings.bucket, settings.prefix].filter(p => p !== '').join('/')}`
  }

  async #rclone (args: string[]): Promise<string> {
    const { AWS_CA_BUNDLE: _bundle, ...env } = process.env
    try {
      const { stdout } = await run('rclone', args, {
        timeout: RCLONE_TIMEOUT_MS,
        maxBuffer: 64 * 1024 * 1024,
        env: {
          ...env,
          RCLONE_CONFIG: '/dev/null',
          RCLONE_S3_PROVIDER: 'Other',
          RCLONE_S3_ENDPOINT: this.settings.endpoint,
          RCLONE_S3_REGION: this.settings.region,
          RCLONE_S3_ACCESS_KEY_ID: this.settings.access_key,
          RCLONE_S3_SECRET_ACCESS_KEY: this.settings.secret_key,
          RCLONE_S3_FORCE_PATH_STYLE: 'true'
        }
      })
      return stdout
    } catch (err) {
      const { code, stderr, message } = err as { code?: string, stderr?: string, message: string }
      if (code === 'ENOENT') throw new TargetFailed(`S3 target ${this.name}: rclone is not installed on this node (S3 targets need it; local targets do not)`)
      throw new TargetFailed(`S3 target ${this.name}: rclone ${args[0]} failed: ${(stderr ?? '').trim().split('\n').at(-1) ?? message}`)
    }
  }

  async put (dir: string, snapshot: string): Promise<void> {
    await this.#rclone(['copy', dir, `${this.#remote}/${snapshot}`])
  }

  async list (): Promise<string[]> {
    const out = await this.#rclone(['lsf', '--dirs-only', this.#remote]).catch((err: Error) => {
      if (/directory not found/i.test(err.message)) return ''
      throw err
    })
    return out.split('\n').map(line => line.replace(/\/$/, '')).filter(name => SNAPSHOT.test(name)).sort()
  }

  async fetch (snapshot: string, file: string, dest: string): Promise<void> {
    await this.#rclone(['copyto', `${this.#remote}/${snapshot}/${file}`, dest])
  }

  async remove (snapshot: string): Promise<void> {
    await this.#rclone(['purge', `${this.#remote}/${snapshot}`])
  }
}

/** Snapshot ids: the UTC time they were taken, 20261123T030000123Z. */
export const SNAPSHOT = /^\d{8}T\d{9}Z$/

export function snapshotId (at: Date): string {
  return at.toISOString().replace(/[-:.]/g, '')
}

export function snapshotTime (id: string): number {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(\d{3})Z$/.exec(id)
  return m === null ? Number.NaN : Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]), Number(m[7]))
}

/** A snapshot's manifest, read through the target. */
export async function readManifest<T> (target: Target, snapshot: string, scratch: string): Promise<T> {
  const file = join(scratch, `manifest-${snapshot}-${process.pid}.json`)
  await target.fetch(snapshot, 'manifest.json', file)
  try {
    return JSON.parse(await readFile(file, 'utf8')) as T
  } finally {
    await rm(file, { force: true })
  }
}
