// Reading cluster.toml: TOML 1.0 (smol-toml), with a one-line refusal naming the file, line and column.
import type * as SmolToml from 'smol-toml'
import { ConfigError, messageOf } from './errors.js'
// node:fs without an ES import: its ES namespace loads fs streams, slowing every `berth` command down (docs/benchmarks.md, CLI start-up).
const { readFileSync } = process.getBuiltinModule('node:fs')
// smol-toml's CommonJS build, one file, rather than its ES build of nine modules: a client command
// reads cluster.toml, and this takes about 8 ms of CPU less (docs/benchmarks.md, CLI start-up).
const { parse: parseToml, TomlError } = process.getBuiltinModule('node:module').createRequire(import.meta.url)('smol-toml') as typeof SmolToml

export function readToml (file: string): Record<string, unknown> {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (err) {
    throw new ConfigError(`${file}: cannot read: ${messageOf(err)}`)
  }
  try {
    return parseToml(text) as Record<string, unknown>
  } catch (err) {
    const where = err instanceof TomlError ? ` at line ${err.line}, column ${err.column}` : ''
    const reason = messageOf(err).split('\n')[0]
    throw new ConfigError(`${file}: invalid TOML${where}: ${reason}`)
  }
}
