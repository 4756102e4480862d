// Wording of the writing modules' extractive composition (calls to action, greetings, questions,
// answers to objections): JSON files in a module's templates/ folder, so the campaign can reword them
// without touching code ({{name}} placeholders); read once at start and checked against its schema.
import { besideSource } from '../../../kernel/index.js'
import type { Static, TSchema } from '@sinclair/typebox'
import { readCheckedFile } from '../data-files.js'

/** `templates/<name>.json` in the folder of the module at `moduleUrl` (its `import.meta.url`). */
export function loadTemplates<S extends TSchema> (moduleUrl: string, name: string, schema: S): Static<S> {
  return readCheckedFile(besideSource(moduleUrl, 'templates', `${name}.json`), schema)
}
