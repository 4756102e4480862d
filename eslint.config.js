// Lint rules: ESLint's and typescript-eslint's recommended sets over all TypeScript and scripts. Module
// boundaries (who may import what) are dependency-cruiser's: .dependency-cruiser.js.
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
  {
    files: ['test/**/*.ts'],
    rules: {
      'no-restricted-syntax': ['error', {
        selector: "CallExpression[callee.property.name='waitForFunction'] > :matches(Literal, TemplateLiteral).arguments:first-child",
        message: 'Give waitForFunction a function: Playwright evaluates a string again at each animation frame with eval, which a page with a CSP refuses.'
      }]
    }
  }
)
