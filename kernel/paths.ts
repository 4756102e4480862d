// Where the package lives on disk, for files shipped beside the code (package.json, schemas, wasm).
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

function findPackageRoot (): string {
  let dir = dirname(fileURLToPath(import.meta.url))
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir)
    if (parent === dir) throw new Error('package.json not found above the kernel')
    dir = parent
  }
  return dir
}

/** The folder holding package.json: the same from the sources and from dist/. */
export const PACKAGE_ROOT = findPackageRoot()

export const VERSION: string = (JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version
