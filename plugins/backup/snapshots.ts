// Taking a snapshot and restoring from one. A run: each service with volumes has its pre_hook run in
// its container first (a failing hook skips that service's volumes and is reported: a live database
// is never archived without its dump), then each of its volumes is packed; the manifest lists every
// archive with its size and SHA-256 (SHA256SUMS beside it, for `sha256sum -c`); every plugin's
// databases are copied too (the kernel's per-plugin backup, `state/<plugin>.lmdb`); the folder is copied
// to every target, and snapshots older than the retention are pruned there. A restore fetches one
// archive, checks its SHA-256 against the manifest, and unpacks it into the volume with the
// service's containers stopped.
import { mkdir, rm, stat, writeFile } from 'node:fs/promises'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { BadRequest, NotFound } from '../../kernel/index.js'
import type { Reconciler, ServiceSpec } from '../reconciler/api.js'
import { pack, sha256Of, unpack } from './archive.js'
import { readManifest, snapshotId, snapshotTime, TargetFailed, type Target } from './targets.js'

export interface ArchiveEntry {
  service: string
  project: string
  /** The engine's volume name: `<project>_<source>`. */
  volume: string
  file: string
  bytes: number
  sha256: string
}

/** A plugin's databases, as `berth state backup` writes them. */
export interface StateEntry {
  plugin: string
  file: string
  bytes: number
  sha256: string
  databases: Array<{ name: string, entries: number }>
}

export interface Manifest {
  format: 1
  snapshot: string
  created_at: string
  host: string
  volumes: ArchiveEntry[]
  state: StateEntry[]
  /** Services whose volumes were not archived, and why (a failed hook, a volume that does not exist). */
  skipped: Array<{ service: string, reason: string }>
}

export interface RunResult {
  snapshot: string
  volumes: number
  /** Bytes of the volume archives. */
  bytes: number
  /** Bytes of the whole snapshot: the volume archives and the plugins' state files. */
  total_bytes: number
  skipped: Manifest['skipped']
  targets: Array<{ name: string, ok: boolean, error?: string, pruned?: string[] }>
}

export type Progress = (event: { step: string, detail: string }) => void

/** Every plugin's state (the kernel's per-plugin backup). */
export interface AllState {
  plugins(): string[]
  backup(plugin: string, path: string): Promise<{ databases: Array<{ name: string, entries: number }> }>
}

const engineVolume = (spec: ServiceSpec, source: string): string => `${spec.project}_${source}`

export async function takeSnapshot (reconciler: Reconciler, targets: readonly Target[], options: { staging: string, retentionDays: number, progress: Progress, state: AllState, now?: Date }): Promise<RunResult> {
  const at = options.now ?? new Date()
  const snapshot = snapshotId(at)
  const dir = join(options.staging, snapshot)
  await mkdir(join(dir, 'volumes'), { recursive: true, mode: 0o700 })
  await mkdir(join(dir, 'state'), { recursive: true, mode: 0o700 })
  try {
    const manifest: Manifest = { format: 1, snapshot, created_at: at.toISOString(), host: hostname(), volumes: [], state: [], skipped: [] }
    for (const spec of reconciler.specs().filter(s => s.volumes.length > 0).sort((a, b) => a.name.localeCompare(b.name))) {
      if (spec.backup !== undefined) {
        options.progress({ step: 'hook', detail: `${spec.name}: ${spec.backup.pre_hook}` })
        const failure = await reconciler.exec(spec.name, spec.backup.pre_hook).then(
          ({ exitCode, output }) => exitCode === 0 ? undefined : `pre_hook exited with ${exitCode}: ${output.trim().split('\n').at(-1) ?? ''}`,
          (err: Error) => `pre_hook could not run: ${err.message}`)
        if (failure !== undefined) {
          manifest.skipped.push({ service: spec.name, reason: failure })
          options.progress({ step: 'skipped', detail: `${spec.name}: ${failure}` })
          continue
        }
      }
      for (const { source } of spec.volumes) {
        const volume = engineVolume(spec, source)
        if (!await reconciler.hasVolume(spec, volume)) {
          manifest.skipped.push({ service: spec.name, reason: `volume ${volume} does not exist` })
          continue
        }
        options.progress({ step: 'volume', detail: volume })
        const file = `volumes/${volume}.tar.gz`
        const packed = await pack(await reconciler.volumeDir(spec, volume), join(dir, file))
        manifest.volumes.push({ service: spec.name, project: spec.project, volume, file, ...packed })
      }
    }
    for (const plugin of options.state.plugins()) {
      options.progress({ step: 'state', detail: plugin })
      const file = `state/${plugin}.lmdb`
      const { databases } = await options.state.backup(plugin, join(dir, file))
      manifest.state.push({ plugin, file, bytes: (await stat(join(dir, file))).size, sha256: await sha256Of(join(dir, file)), databases })
    }
    await writeFile(join(dir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 })
    await writeFile(join(dir, 'SHA256SUMS'), [...manifest.volumes, ...manifest.state].map(v => `${v.sha256}  ${v.file}\n`).join(''), { mode: 0o600 })
    const bytes = manifest.volumes.reduce((n, v) => n + v.bytes, 0)
    const result: RunResult = { snapshot, volumes: manifest.volumes.length, bytes, total_bytes: manifest.state.reduce((n, s) => n + s.bytes, bytes), skipped: manifest.skipped, targets: [] }
    for (const target of targets) {
      options.progress({ step: 'upload', detail: target.name })
      try {
        await target.put(dir, snapshot)
        result.targets.push({ name: target.name, ok: true, pruned: await prune(target, at.getTime() - options.retentionDays * 86_400_000) })
      } catch (err) {
        result.targets.push({ name: target.name, ok: false, error: (err as Error).message })
      }
    }
    return result
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

/** Remove the target's snapshots taken before `before` (ms since the epoch). */
async function prune (target: Target, before: number): Promise<string[]> {
  const old = (await target.list()).filter(id => snapshotTime(id) < before)
  for (const id of old) await target.remove(id)
  return old
}

export interface RestoreRequest {
  /** A deployed service (all its volumes) or one volume (`<project>_<source>` or `<source>`). */
  name: string
  /** Newest snapshot holding it when absent. */
  snapshot?: string
}

/** Restore from `target`; resolves with the volumes restored and the snapshot used. */
export async function restore (reconciler: Reconciler, target: Target, request: RestoreRequest, staging: string): Promise<{ snapshot: string, volumes: string[] }> {
  await mkdir(staging, { recursive: true, mode: 0o700 })
  const ids = (await target.list()).reverse()
  const candidates = request.snapshot === undefined ? ids : ids.filter(id => id === request.snapshot)
  if (request.snapshot !== undefined && candidates.length === 0) throw new NotFound(`target ${target.name} has no snapshot ${request.snapshot}`)
  for (const snapshot of candidates) {
    const manifest = await readManifest<Manifest>(target, snapshot, staging)
    const entries = manifest.volumes.filter(v => v.service === request.name || v.volume === request.name || v.volume === `${v.project}_${request.name}`)
    if (entries.length === 0) continue
    const specs = new Map(reconciler.specs().map(s => [s.name, s]))
    for (const entry of entries) {
      const spec = specs.get(entry.service)
      if (spec === undefined) throw new BadRequest(`service ${entry.service} (of volume ${entry.volume}) is not deployed: deploy it, then restore`)
      const file = join(staging, `${snapshot}-${entry.volume}.tar.gz`)
      try {
        await target.fetch(snapshot, entry.file, file)
        const sum = await sha256Of(file)
        if (sum !== entry.sha256) throw new TargetFailed(`${entry.file} of snapshot ${snapshot} on ${target.name} is damaged: SHA-256 ${sum}, the manifest says ${entry.sha256}`)
        await reconciler.whileStopped(entry.service, async () => { await unpack(file, await reconciler.volumeDir(spec, entry.volume)) })
      } finally {
        await rm(file, { force: true })
      }
    }
    return { snapshot, volumes: entries.map(e => e.volume) }
  }
  throw new NotFound(`no snapshot on ${target.name} holds ${request.name}`)
}
