// Where the package lives on disk, for files shipped beside the code (package.json, schemas, wasm),
// and a plugin's own files found beside its sources, also when it runs compiled from dist/.
import { dirname, join, relative, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
// node:fs without an ES import: its ES namespace loads fs streams, slowing every `berth` command down (docs/benchmarks.md, CLI start-up).
const { existsSync, readFileSync } = process.getBuiltinModule('node:fs')

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

/**
 * `parts` joined to the folder of the source file whose `import.meta.url` is `moduleUrl`: a plugin's
 * own files (data, templates, prompts) beside its code. Compiled into dist/, a module finds them
 * in the source tree, where they are shipped (the compiler copies only code).
 */
export function besideSource (moduleUrl: string, ...parts: string[]): string {
  const dir = dirname(fileURLToPath(moduleUrl))
  const dist = join(PACKAGE_ROOT, 'dist')
  const source = dir.startsWith(dist + sep) ? join(PACKAGE_ROOT, relative(dist, dir)) : dir
  return join(source, ...parts)
}
