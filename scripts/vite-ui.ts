// The Vite build shared by Berth's web UIs: Preact through esbuild's automatic JSX, hashed assets
// under assets/, ES2022, written to dist/<name> for the plugin that serves it.
import { fileURLToPath } from 'node:url'
import { defineConfig, type UserConfig } from 'vite'

/** `root`: the UI's folder (holding index.html); `base`: the path it is served under; `name`: its folder in dist/. */
export function uiConfig (root: URL, base: string, name: string): UserConfig {
  return defineConfig({
    root: fileURLToPath(root),
    base,
    logLevel: 'warn',
    esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
    build: {
      outDir: fileURLToPath(new URL(`../dist/${name}`, import.meta.url)),
      emptyOutDir: true,
      assetsDir: 'assets',
      target: 'es2022'
    }
  })
}
