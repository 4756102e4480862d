// Files shipped beside the code that staff may edit: the data in plugins/campaign/data/ (glossary,
// compliance rules, personas, event logistics; TOML, so they can carry comments) and the wording in
// the modules' templates/ folders (JSON). Read once at start and checked against a schema: start-up fails naming
// the file and the field otherwise.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { besideSource } from '../../kernel/index.js'
import { readToml } from '../../kernel/runtime-api.js'
import { Value } from '@sinclair/typebox/value'
import type { Static, TSchema } from '../../kernel/schema.js'

export const DATA_DIR = besideSource(import.meta.url, 'data')

/** A `.toml` or `.json` file checked against `schema`. */
export function readCheckedFile<S extends TSchema> (file: string, schema: S): Static<S> {
  const data: unknown = file.endsWith('.json') ? JSON.parse(readFileSync(file, 'utf8')) : readToml(file)
  const problem = Value.Errors(schema, data).First()
  if (problem !== undefined) throw new Error(`${file}: ${problem.path === '' ? '' : `${problem.path}: `}${problem.message}`)
  return data as Static<S>
}

/** `data/<name>.toml` (or another file), checked against `schema`. */
export function loadDataFile<S extends TSchema> (name: string, schema: S, file = join(DATA_DIR, `${name}.toml`)): Static<S> {
  return readCheckedFile(file, schema)
}
