// Lint rules: ESLint's and typescript-eslint's recommended sets over all TypeScript and scripts.
import js from '@eslint/js'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', '.tap/', 'wasm/build/', 'wasm/assembly/', 'plugins/.*/', 'firmware/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly', fetch: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', Buffer: 'readonly', TextEncoder: 'readonly', TextDecoder: 'readonly', AbortController: 'readonly', performance: 'readonly', WebAssembly: 'readonly', structuredClone: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      eqeqeq: ['error', 'always'],
      'no-console': 'off'
    }
  },
  // The host (kernel/ without kernel/cli/) imports no plugin, and the command's code only where the
  // plugin contract hands it to plugins (index.ts re-exports it, plugin.ts types commands()).
  {
    files: ['kernel/*.ts'],
    ignores: ['kernel/index.ts', 'kernel/plugin.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          { group: ['./cli/*'], message: 'the host does not use the berth command\'s code (kernel/cli/)' },
          { group: ['../plugins/*'], message: 'the kernel imports no plugin' }
        ]
      }]
    }
  },
  // Plugins use the kernel through its public surfaces only (index.ts, and schema.ts for TypeBox; the
  // pattern also covers kernel/cli/), and another plugin through its index.ts or its contract module api.ts.
  ...[1, 2, 3].map(depth => {
    const up = '\\.\\./'.repeat(depth)
    return {
      files: [`plugins/*/${'*/'.repeat(depth - 1)}*.ts`],
      ignores: ['plugins/*/ui/**', 'plugins/ingest/dashboard/**'],
      rules: {
        'no-restricted-imports': ['error', {
          patterns: [
            { group: ['**/kernel/*', '!**/kernel/index.js', '!**/kernel/schema.js', '!**/kernel/runtime-api.js'], message: 'import the kernel from kernel/index.js (kernel/schema.js for TypeBox, kernel/runtime-api.js for what only runtimes use)' },
            { regex: `^${up}(?!kernel/)[a-z-]+/(?!(index|api)\\.js$)`, message: 'import another plugin through its index.js or its contract module api.js' }
          ]
        }]
      }
    }
  })
)
