// A service's build context: its files (every regular file and link under the context directory but
// `.git` and what its `.dockerignore` excludes; a link whose target leaves the context is refused), and the
// content hash that names the image built from them (paths, contents, executable bits, links'
// targets, the Dockerfile's path and the build arguments): the same sources give the same tag,
// whatever the files' times, so an unchanged service is not rebuilt or recreated.
import { createHash } from 'node:crypto'
import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'
import dockerignore from '@balena/dockerignore'
import { isInside, realPath } from './admission.js'
import type { BuildSpec } from './spec.js'

/** Files of a context at most: a context this large is a directory that was not meant. */
const MAX_FILES = 20_000

/**
 * The context's files, relative to it with `/` separators, in order, less those its `.dockerignore`
 * excludes: the files the engine is sent (dockerode filters them by the same rules, letter case
 * kept; unlike Docker's CLI it leaves out a Dockerfile the file excludes, and the build then fails).
 */
export function contextFiles (context: string): string[] {
  const all = allFiles(context)
  const rules = join(context, '.dockerignore')
  if (!existsSync(rules)) return all
  return dockerignore.default({ ignorecase: false }).add(readFileSync(rules, 'utf8')).filter(all)
}

function allFiles (context: string): string[] {
  const files: string[] = []
  const root = realPath(context)
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      if (entry.name === '.git') continue
      const path = join(dir, entry.name)
      if (entry.isDirectory()) walk(path)
      else if (entry.isFile() || entry.isSymbolicLink()) files.push(relative(context, path).split(sep).join('/'))
      if (entry.isSymbolicLink()) {
        const target = resolve(dirname(path), readlinkSync(path))
        if (!isInside(target, context) || !isInside(realPath(target), root)) throw new Error(`the build context ${context}: ${relative(context, path)} is a symlink to ${target}, outside the context`)
      }
      if (files.length > MAX_FILES) throw new Error(`the build context ${context} holds more than ${MAX_FILES} files`)
    }
  }
  walk(context)
  return files
}

/** The content hash of a build (hex) whose files are in `context`. */
export function buildHash (build: Pick<BuildSpec, 'dockerfile' | 'args'>, files: readonly string[], context: string): string {
  const hash = createHash('sha256').update(JSON.stringify({ v: 1, dockerfile: build.dockerfile, args: Object.entries(build.args).sort() }))
  for (const file of files) {
    const path = join(context, file)
    const stat = lstatSync(path)
    hash.update(`\0${file}\0${stat.isSymbolicLink() ? `link ${readlinkSync(path)}` : (stat.mode & 0o111) !== 0 ? 'x' : '-'}\0`)
    if (!stat.isSymbolicLink()) hash.update(readFileSync(path))
  }
  return hash.digest('hex')
}
