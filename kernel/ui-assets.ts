// A built web UI (Vite's output: index.html and hashed files under assets/) held in memory, for the
// plugins that serve one: each asset with its content type, and the index page if it was built.
import { extname, join } from 'node:path'
// node:fs without an ES import: its ES namespace loads fs streams, slowing every `berth` command down (docs/benchmarks.md, CLI start-up).
const { existsSync, readdirSync, readFileSync } = process.getBuiltinModule('node:fs')

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2'
}

export interface UiAsset { body: Buffer, type: string }

export interface BuiltUi {
  /** index.html, or undefined when the UI was not built. */
  index: Buffer | undefined
  /** assets/<name> by name; names carry a content hash, so they can be cached for ever. */
  assets: Map<string, UiAsset>
}

export function loadBuiltUi (dir: string): BuiltUi {
  const indexFile = join(dir, 'index.html')
  const assets = new Map<string, UiAsset>()
  const assetDir = join(dir, 'assets')
  if (existsSync(assetDir)) {
    for (const name of readdirSync(assetDir)) assets.set(name, { body: readFileSync(join(assetDir, name)), type: TYPES[extname(name)] ?? 'application/octet-stream' })
  }
  return { index: existsSync(indexFile) ? readFileSync(indexFile) : undefined, assets }
}
