// Finds the compiled module: $BERTH_WASM_DIR, else wasm/build under the directory holding package.json
// (nearest to this file), else wasm/build under the working directory.
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const WASM_FILE = 'berth.wasm'

/** Nearest ancestor of `from` (inclusive) that contains package.json, or undefined. */
export function packageRoot(from: string): string | undefined {
  let dir = from
  while (!existsSync(join(dir, 'package.json'))) {
    if (dirname(dir) === dir) return undefined
    dir = dirname(dir)
  }
  return dir
}

/** Path of the release module. */
export function defaultWasmPath(env: NodeJS.ProcessEnv = process.env): string {
  const override = env.BERTH_WASM_DIR
  if (override !== undefined && override !== '') return join(override, WASM_FILE)
  // Without a package.json above this file (copied out of the package), guess the working directory.
  /* c8 ignore next */
  const root = packageRoot(dirname(fileURLToPath(import.meta.url))) ?? process.cwd()
  return join(root, 'wasm', 'build', WASM_FILE)
}
