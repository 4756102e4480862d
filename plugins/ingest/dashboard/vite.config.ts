// Vite build of the telemetry dashboard (Preact through esbuild's automatic JSX) into
// dist/telemetry-ui, which the ingest plugin serves under /dashboard on the telemetry listener.
import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vite'

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/dashboard/',
  logLevel: 'warn',
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  build: {
    outDir: fileURLToPath(new URL('../../../dist/telemetry-ui', import.meta.url)),
    emptyOutDir: true,
    assetsDir: 'assets',
    target: 'es2022'
  }
})
